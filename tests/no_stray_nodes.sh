#!/bin/sh
# The test suite's last check (a CTest fixture cleanup, run after every test): no dnnc-node
# of this build started since the suite began (STAMP's time) is still running. A test killed
# by its timeout cannot stop the cluster it started; this stops its nodes and names them.
#   no_stray_nodes.sh BUILD_DIR STAMP
build=$1
stamp=$2
[ -f "$stamp" ] || { echo "no_stray_nodes.sh: no stamp $stamp (the suite's setup did not run)"; exit 1; }
started_since() {  # the pids of this build's nodes that started after the stamp
  suite_age=$(( $(date +%s) - $(stat -c %Y "$stamp") ))
  for pid in $(pgrep -f "$build/tools/dnnc-node"); do
    age=$(ps -o etimes= -p "$pid" 2>/dev/null) || continue
    [ "$age" -le "$suite_age" ] && echo "$pid"
  done
}
# A node a test has just asked to stop may still be on its way out: 5 s of grace.
for _ in $(seq 50); do
  [ -z "$(started_since)" ] && exit 0
  sleep 0.1
done
echo "dnnc-node processes that the tests left running (now killed):"
for pid in $(started_since); do
  echo "  $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null)"
  kill -9 "$pid" 2>/dev/null
done
exit 1
