#!/bin/sh
# The test suite's last check (a CTest fixture cleanup, run after every test): nothing the
# tests started or wrote since the suite began (STAMP's time) is left behind.
# - No dnnc-node of this build is still running: a test killed by its timeout cannot stop the
#   cluster it started; this stops its nodes and names them.
# - No dnnc-run-* or dnnc-cluster-* folder (a dnnc run's own files, a local cluster's record
#   and logs) is left in the temporary folders: this removes them and names them.
#   no_leftovers.sh BUILD_DIR STAMP
build=$1
stamp=$2
[ -f "$stamp" ] || { echo "no_leftovers.sh: no stamp $stamp (the suite's setup did not run)"; exit 1; }
started_since() {  # the pids of this build's nodes that started after the stamp
  suite_age=$(( $(date +%s) - $(stat -c %Y "$stamp") ))
  for pid in $(pgrep -f "$build/tools/dnnc-node"); do
    age=$(ps -o etimes= -p "$pid" 2>/dev/null) || continue
    [ "$age" -le "$suite_age" ] && echo "$pid"
  done
}
folders_since() {  # the run and cluster folders made or changed after the stamp
  for dir in "${TMPDIR:-/tmp}" ${XDG_RUNTIME_DIR:+"$XDG_RUNTIME_DIR"}; do
    find "$dir" -maxdepth 1 -type d \( -name 'dnnc-run-*' -o -name 'dnnc-cluster-*' \) -newer "$stamp" 2>/dev/null
  done
}
status=0
# A node a test has just asked to stop may still be on its way out: 5 s of grace.
for _ in $(seq 50); do
  [ -z "$(started_since)" ] && break
  sleep 0.1
done
if [ -n "$(started_since)" ]; then
  echo "dnnc-node processes that the tests left running (now killed):"
  for pid in $(started_since); do
    echo "  $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null)"
    kill -9 "$pid" 2>/dev/null
  done
  status=1
fi
if [ -n "$(folders_since)" ]; then
  echo "folders that the tests left behind (now removed):"
  for dir in $(folders_since); do
    echo "  $dir: $(ls "$dir" | tr '\n' ' ')"
    rm -rf "$dir"
  done
  status=1
fi
exit $status
