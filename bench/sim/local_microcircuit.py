"""The scaled microcircuit (examples/microcircuit/microcircuit_scaled.xml, 7,717 neurons,
2,988,807 synapses), or another example without a cluster of its own, on a local cluster, for
the benchmarks of a network that changes while it runs (bench_grow.py, bench_rebalance.py,
bench_auto_rebalance.py): its nodes on free loopback ports, all linked, brought up with `dnnc
cluster up` and always taken down again."""
import argparse
import pathlib
import re
import socket
import subprocess
import tempfile
import time

root = pathlib.Path(__file__).resolve().parents[2]
MICROCIRCUIT = root / "examples/microcircuit/microcircuit_scaled.xml"
NEURONS = 7717
SYNAPSES = 2988807


def arguments(doc, nodes, extra=()):
    """The benchmarks' command line: --nodes K (default `nodes`), --ticks T, --dnnc PATH, and
    `extra` options (name, type, default, help)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=nodes)
    parser.add_argument("--ticks", type=int, default=2000, help="ticks timed before and after the change")
    parser.add_argument("--dnnc", default=str(root / "build/tools/dnnc"))
    for name, kind, default, what in extra:
        parser.add_argument(name, type=kind, default=default, help=what)
    return parser.parse_args()


def free_ports(n):
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def network_on(ports, run="", example=MICROCIRCUIT):
    """The document of `example` (the scaled microcircuit) with nodes n0, n1, ... on `ports`,
    all linked, and `run` (attributes) added to its <run>."""
    nodes = "".join(f'    <node id="n{k}" host="127.0.0.1" port="{p}"/>\n' for k, p in enumerate(ports))
    links = "".join(f'    <link from="n{a}" to="n{b}"/>\n' for a in range(len(ports)) for b in range(a + 1, len(ports)))
    text = pathlib.Path(example).read_text()
    return text.replace("  <run ", f'  <cluster lead="n0">\n{nodes}{links}  </cluster>\n  <run {run} ')


class LocalCluster:
    """`nodes` local nodes up (`spare` more up beside them, serving nothing); `document` is
    `example` (the microcircuit) on the first `nodes`, `lead` the --lead option, `call` runs
    dnnc."""

    def __init__(self, dnnc, nodes, spare=0, run="", example=MICROCIRCUIT):
        self.dnnc = dnnc
        self.ports = free_ports(nodes + spare)
        self._folder = tempfile.TemporaryDirectory()
        folder = pathlib.Path(self._folder.name)
        self._up = folder / "up.xml"
        self._up.write_text(network_on(self.ports))
        self.document = folder / "network.xml"
        self.document.write_text(network_on(self.ports[:nodes], run, example))
        self.lead = ["--lead", f"127.0.0.1:{self.ports[0]}"]

    def call(self, *words):
        done = subprocess.run([self.dnnc, *words], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"dnnc {' '.join(words)} failed: {done.stderr}")
        return done.stdout

    def submit(self):
        """Submits the document to the first node; the seconds the install took."""
        started = time.monotonic()
        self.call("submit", str(self.document), "--to", f"127.0.0.1:{self.ports[0]}")
        return time.monotonic() - started

    def timed_step(self, ticks):
        """Steps the frozen network `ticks` ticks; the seconds it took."""
        started = time.monotonic()
        self.call("step", str(ticks), *self.lead)
        return time.monotonic() - started

    def pid(self, node):
        """The process id of node `node` ("n2"), as `dnnc cluster up` printed it."""
        match = re.search(rf"node {node} up on \S+ \(pid (\d+)", self._up_output)
        return int(match.group(1))

    def log(self, node):
        """The text of node `node`'s log so far (its path as `dnnc cluster up` printed it)."""
        match = re.search(rf"node {node} up on \S+ \(pid \d+, log ([^)]+)\)", self._up_output)
        return pathlib.Path(match.group(1)).read_text()

    def __enter__(self):
        self._up_output = self.call("cluster", "up", str(self._up))
        return self

    def __exit__(self, *exc):
        try:
            self.call("cluster", "down", str(self._up))
        finally:
            self._folder.cleanup()
