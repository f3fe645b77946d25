#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang-14, ASan and UBSan into build-fuzz/
# and runs each for a while, as many at once as there are cores; exits non-zero when any
# finds a crash, a sanitizer report, a leak, a timeout or an out-of-memory.
#
#   scripts/fuzz.sh [--seconds N | --runs N] [TARGET...]
#
# TARGET: xml, frame, signals, snapshot, metis, session, control (default: all, one after another).
# --seconds N: run each for N seconds (default 20); --runs N: for N executions instead
# (with both, whichever comes first).
# Each run starts from the seeds in tests/fuzz/corpus/TARGET, which it only reads; what it
# learns goes to build-fuzz/runs/TARGET/corpus, what breaks to build-fuzz/runs/TARGET/
# (crash-*, leak-*, timeout-*, oom-*), its output to build-fuzz/runs/TARGET/log.
# More in docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=20
seconds_given=""
runs=""
targets=()
while (($#)); do
  case "$1" in
    --seconds) seconds="$2"; seconds_given=1; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
all=(xml frame signals snapshot metis session control)
((${#targets[@]})) || targets=("${all[@]}")

# The longest input each target is given: a few documents' worth for the XML reader and
# the snapshot (which embeds a document), a few frames for the stream decoder and a few
# dozen operations for the session.
max_len_of() {
  case "$1" in
    xml) echo 8192 ;;
    snapshot) echo 4096 ;;
    frame) echo 4096 ;;
    signals) echo 1024 ;;
    metis) echo 4096 ;;
    session) echo 4096 ;;
    control) echo 4096 ;;
    *) echo "fuzz.sh: unknown target $1 (known: ${all[*]})" >&2; exit 2 ;;
  esac
}
for t in "${targets[@]}"; do max_len_of "$t" > /dev/null; done

# clang-14 with libFuzzer and the sanitizers' runtimes, from Debian 12.
source scripts/ensure_packages.sh
ensure_packages clang-14 libclang-rt-14-dev

build=build-fuzz
start=$SECONDS
if [ ! -f "$build/build.ninja" ]; then
  echo "== configuring the fuzz build ($build/)"
  mkdir -p "$build"
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DDNNC_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug \
    > "$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
fi
echo "== building the fuzz targets: ${targets[*]}"
cmake --build "$build" -j "$(nproc)" --target "${targets[@]/#/fuzz_}"
echo "== built in $((SECONDS - start)) s"

# A UBSan report aborts with a stack; leaks are checked after every input that grew memory.
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"

# One target's run: its summary line on stdout, its status in $dir/failed (1: broken).
fuzz_one() {
  local t="$1" dir="$build/runs/$1"
  rm -rf "$dir"
  mkdir -p "$dir/corpus"
  local limit=(-max_total_time="$seconds")
  [ -z "$runs" ] || limit=(-runs="$runs")
  [ -z "$runs" ] || [ -z "$seconds_given" ] || limit+=(-max_total_time="$seconds")
  local dict=()
  [ ! -f "tests/fuzz/$t.dict" ] || dict=(-dict="tests/fuzz/$t.dict")
  local t0=$SECONDS rc=0
  # The first folder receives new inputs; the seeds' folder is only read.
  "$build/tests/fuzz/fuzz_$t" "${limit[@]}" "${dict[@]}" -max_len="$(max_len_of "$t")" -rss_limit_mb=2048 \
    -timeout=10 -print_final_stats=1 -artifact_prefix="$dir/" "$dir/corpus" "tests/fuzz/corpus/$t" \
    > "$dir/log" 2>&1 || rc=$?
  local wall=$((SECONDS - t0))
  local execs rate crashes seeds learnt
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log" | tail -1)
  crashes=$(find "$dir" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \) | wc -l)
  seeds=$(find "tests/fuzz/corpus/$t" -type f | wc -l)
  learnt=$(find "$dir/corpus" -type f | wc -l)
  if ((rc != 0)) && ((crashes == 0)); then crashes=1; fi  # died without an artifact
  echo "fuzz $t: ${execs:-0} executions, ${rate:-0} exec/s, $crashes crashes, $seeds seeds + $learnt new inputs, ${wall} s"
  echo "$((crashes > 0))" > "$dir/failed"
  if ((crashes)); then
    echo "-- $t failed (exit $rc); the end of $dir/log:"
    tail -n 60 "$dir/log"
    find "$dir" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) \
      -exec echo "   input: {}" \;
  fi
}

# The targets run side by side, one per core (each fuzzer is one thread), each for the
# whole of its time.
jobs_max=$(nproc)
echo "== fuzzing ${targets[*]}, ${jobs_max} at a time"
mkdir -p "$build/runs"
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs_max)); do wait -n || true; done
  fuzz_one "$t" > "$build/runs/$t.out" 2>&1 &
done
wait
failed=0
summary=()
for t in "${targets[@]}"; do
  summary+=("$(head -n 1 "$build/runs/$t.out")")
  [ "$(cat "$build/runs/$t/failed" 2>/dev/null)" = 0 ] || { failed=1; tail -n +2 "$build/runs/$t.out"; }
done

echo "== fuzz summary ($((SECONDS - start)) s in all, build included)"
printf '%s\n' "${summary[@]}"
exit "$failed"
