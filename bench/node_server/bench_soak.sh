#!/usr/bin/env bash
# The lead's memory over a long free run (hardening: output rows are bounded at the lead).
# A network of 1,000 outputs runs free on 2 local nodes (`dnnc start`, no client reading its
# outputs), and the lead's resident memory is sampled every SAMPLE seconds for DURATION
# seconds. The limit: the lead may grow by no more than its output budget (--output-memory,
# 64 MiB by default) plus 25% for the allocator's own overhead, and must stay flat once the
# budget is full (the spread of the second half is printed). Before the bound a run like
# this grew the lead by about 3 MB a second.
# Usage: bench/node_server/bench_soak.sh [BUILD_DIR] [DURATION_S] [SAMPLE_S] [OUTPUT_MEMORY]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
duration=${2:-3600}
sample=${3:-30}
budget=${4:-64M}
cmake --build "$build" --target dnnc dnnc-node > /dev/null
work=$(mktemp -d)
# Copies of the binaries: a rebuild during a long run must not change them under it.
cp "$build/tools/dnnc" "$build/tools/dnnc-node" "$work/"
dnnc=$work/dnnc
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cat > "$work/soak.xml" << XML
<dnnc xmlns="urn:dnnc:1">
  <network name="soak">
    <population id="P" size="1000" model="tanh" bias="0.1"/>
    <projection from="P" to="P" kind="random" p="0.01" weight="0.05" seed="1"/>
    <output id="y" neurons="P"/>
  </network>
  <cluster lead="a">
    <node id="a" port="$(port)"/>
    <node id="b" port="$(port)"/>
    <link from="a" to="b"/>
  </cluster>
  <run probes="2"/>
</dnnc>
XML
trap '"$dnnc" cluster down "$work/soak.xml" > /dev/null || true; rm -rf "$work"' EXIT
up=$("$dnnc" cluster up "$work/soak.xml" --log-level warn --output-memory "$budget")
lead_pid=$(sed -n 's/^node a up .*(pid \([0-9]*\),.*/\1/p' <<< "$up")
lead=127.0.0.1:$(sed -n 's/^node a up on [^:]*:\([0-9]*\) .*/\1/p' <<< "$up")
"$dnnc" submit "$work/soak.xml" --to "$lead" > /dev/null
"$dnnc" start --lead "$lead" > /dev/null
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'), commit $(git rev-parse --short HEAD)"
echo "== 1,000 outputs free-running on 2 local nodes for ${duration} s; output budget ${budget}"
printf '%8s %12s %10s %14s\n' seconds ticks "lead MB" "rows dropped"
python3 - "$dnnc" "$lead" "$lead_pid" "$duration" "$sample" "$budget" << 'PY'
import json, subprocess, sys, time
dnnc, lead, pid, duration, sample, budget = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
budget_bytes = float(budget[:-1]) * units[budget[-1]] if budget[-1] in units else float(budget)
def rss_mb():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"): return int(line.split()[1]) / 1024
def output_state():
    # One row from the newest: what the lead holds and dropped, without reading it all.
    status = json.loads(subprocess.run([dnnc, "status", "--json", "--lead", lead], capture_output=True, text=True, check=True).stdout)
    return status
t0 = time.time(); samples = []
while True:
    elapsed = time.time() - t0
    s = output_state()
    samples.append((elapsed, rss_mb()))
    print(f"{elapsed:8.0f} {s.get('tick', 0):12d} {samples[-1][1]:10.1f} {s.get('output_rows_dropped', 0):14d}", flush=True)
    if elapsed >= duration: break
    time.sleep(min(sample, max(0.0, duration - elapsed)))
start_mb = samples[0][1]; peak = max(m for _, m in samples); end = samples[-1][1]
limit = start_mb + 1.25 * budget_bytes / (1 << 20)
second_half = [m for t, m in samples if t >= 0.5 * duration] or [end]
print(f"lead RSS at start {start_mb:.1f} MB, peak {peak:.1f} MB, end {end:.1f} MB; limit {limit:.1f} MB (start + budget + 25% for the allocator): "
      f"peak/limit = {peak / limit:.2f} ({'MET' if peak <= limit else 'MISSED'}); "
      f"second half: {min(second_half):.1f}..{max(second_half):.1f} MB ({(max(second_half) - min(second_half)) / max(second_half) * 100:.1f}% spread)")
PY
