# `pip install --no-build-isolation ./python` into a virtual environment made with
# --system-site-packages (docs/python.md), offline: dnnc and pyNN.dnnc then come from the
# environment, with the dnnc-node installed beside the compiled module, although the system
# site-packages may hold the set-up's dnnc.pth naming a build of its own.
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from conftest import BINARY, SOURCE, cli, example

DNNC_SCRIPT = """
import json, os, sys
import dnnc, dnnc_pynn_hook
with dnnc.Simulation(dnnc.load(%r), nodes=2) as sim:
    sim.run(1000)
    t_ms, population, index = sim.spikes()
    nodes = sorted({os.path.realpath("/proc/%%d/exe" %% pid) for pid in sim.pids})
print(json.dumps({"dnnc": dnnc.__file__, "hook": dnnc_pynn_hook.__file__, "path": sys.path, "nodes": nodes,
                  "spikes": ["%%.10g,%%s,%%d" %% row for row in zip(t_ms.tolist(), population.tolist(), index.tolist())]}))
"""

PYNN_SCRIPT = """
import json
import pyNN.dnnc as sim
sim.setup(timestep=0.1, nodes=2)
cells = sim.Population(2, sim.IF_curr_exp(cm=0.25, tau_m=10.0))
sim.DCSource(amplitude=0.5, start=20.0, stop=80.0).inject_into(cells)
cells.record("spikes")
sim.run(100.0)
trains = cells.get_data("spikes").segments[-1].spiketrains
sim.end()
print(json.dumps({"backend": sim.__file__, "spikes": [len(train) for train in trains]}))
"""


def run(args, cwd):
    """Runs `args` with no PYTHONPATH and no pip settings from the environment; returns stdout."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("PIP_")}
    env["DNNC_BUILD_DIR"] = BINARY
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, "%s: exit %d\n%s\n%s" % (" ".join(args), result.returncode, result.stdout, result.stderr)
    return result.stdout


def test_pip_install_into_a_venv_with_system_site_packages(tmp_path):
    if importlib.util.find_spec("ensurepip") is None:
        pytest.skip("no venv with pip for %s (Debian: python3-venv)" % sys.executable)
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], tmp_path)
    python = str(venv / "bin" / "python")
    run([python, "-m", "pip", "--isolated", "install", "--no-build-isolation", "--no-index",
         os.path.join(SOURCE, "python")], tmp_path)
    site_packages = run([python, "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"], tmp_path).strip()
    package = os.path.join(site_packages, "dnnc")

    got = json.loads(run([python, "-c", DNNC_SCRIPT % example("cuba/cuba.xml")], tmp_path))
    assert got["dnnc"] == os.path.join(package, "__init__.py")
    assert got["hook"] == os.path.join(site_packages, "dnnc_pynn_hook.py")
    # Of the folders `site` puts on the path, the environment's own site-packages comes first,
    # before the system's and before what their .pth files add (the set-up's dnnc.pth).
    without_site = json.loads(run([python, "-S", "-c", "import json, sys; print(json.dumps(sys.path))"], tmp_path))
    assert [p for p in got["path"] if p not in without_site][0] == site_packages
    assert got["nodes"] == [os.path.join(package, "dnnc-node")]
    spikes = tmp_path / "spikes.csv"
    cli("run", example("cuba/cuba.xml"), "--nodes", 2, "--ticks", 1000, "--spikes", spikes)
    assert got["spikes"] == spikes.read_text().splitlines()[1:] and len(got["spikes"]) > 100

    got = json.loads(run([python, "-c", PYNN_SCRIPT], tmp_path))
    assert got["backend"] == os.path.join(package, "pynn", "__init__.py")
    assert len(got["spikes"]) == 2 and got["spikes"][0] == got["spikes"][1] >= 2
