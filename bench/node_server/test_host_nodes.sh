# Sourced by the benchmarks that run nodes on test hosts (scripts/test_hosts.sh; needs root):
#   source bench/node_server/test_host_nodes.sh BUILD_DIR PREFIX N [K RATE]
# makes N test hosts (named PREFIX and this shell's pid), shapes host K's link to RATE each
# way (if given), starts a dnnc-node on each host (10.99.0.h:7000) with a fresh cluster secret, and
# removes it all when the shell exits. Then $dnnc, $node, $hosts, $name and $work (a
# scratch folder) are set, `on_lead ARGS...` runs dnnc on host 1 with the secret, and
# `host_nodes_xml` prints the hosts' <node> elements.
build=$1
host_count=$3
dnnc=$(realpath "$build/tools/dnnc")
node=$(realpath "$build/tools/dnnc-node")
hosts=scripts/test_hosts.sh
name=$2$$
name=${name:0:8}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  wait 2> /dev/null || true
  "$hosts" down "$name" || true
  rm -rf "$work"
}
trap cleanup EXIT
"$hosts" up "$name" "$host_count"
if [ -n "${5:-}" ]; then "$hosts" shape "$name" "$4" "$5"; fi
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/secret"
chmod 600 "$work/secret"
for ((k = 1; k <= host_count; k++)); do
  "$hosts" exec "$name" $k "$node" --bind 10.99.0.$k --port 7000 --secret-file "$work/secret" \
    --state-dir "$work/state$k" --log-level warn > "$work/node$k.log" 2>&1 &
  pids+=($!)
done
sleep 1
on_lead() { "$hosts" exec "$name" 1 "$dnnc" "$@" --secret-file "$work/secret"; }
host_nodes_xml() { for ((k = 1; k <= host_count; k++)); do echo "    <node id=\"h$k\" host=\"10.99.0.$k\" port=\"7000\"/>"; done; }
