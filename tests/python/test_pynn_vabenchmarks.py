# PyNN's own example VAbenchmarks.py (Brette et al. 2007, benchmarks 1 and 2), unchanged, as
# `python3 VAbenchmarks.py dnnc CUBA|COBA` on pyNN.dnnc's default cluster of 4 local nodes,
# from a temporary folder (it writes Results/): the rates it prints against pyNN.brian2's.
import os
import re
import subprocess
import sys

import pytest

from conftest import BINARY, SOURCE

EXAMPLES = os.environ.get("DNNC_PYNN_EXAMPLES", os.path.join(SOURCE, "..", "shared", "pynn", "examples"))
SCRIPT = os.path.join(EXAMPLES, "VAbenchmarks.py")

# pyNN.brian2 (Debian's brian2, numpy target) on the same script, measured on the machine
# that wrote this test: `python3 VAbenchmarks.py brian2 CUBA|COBA` (excitatory, inhibitory
# Hz; 6-7 minutes each, most of it PyNN's connection loop in Python; measured with its
# record('v') line left out, which records two cells and changes no spike). DNNC_PYNN_BRIAN2=1 runs
# brian2 in the test instead.
BRIAN2_RATES = {"CUBA": (5.79625, 5.74375), "COBA": (16.1516, 15.76)}


def run_example(simulator, benchmark, cwd):
    """Runs the example unchanged (as its own __main__) with pyNN.dnnc's import hook in place,
    as the set-up's dnnc.pth puts it; returns its (excitatory, inhibitory) rates in Hz."""
    program = ("import sys, runpy, dnnc_pynn_hook; sys.argv = [%r, %r, %r]; runpy.run_path(%r, run_name='__main__')"
               % (SCRIPT, simulator, benchmark, SCRIPT))
    env = dict(os.environ, PYTHONPATH=os.path.join(BINARY, "python"))
    result = subprocess.run([sys.executable, "-c", program], cwd=cwd, capture_output=True, text=True, env=env,
                            timeout=3600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    rates = [float(re.search(r"%s rate\s*: ([0-9.eE+-]+) Hz" % kind, result.stdout).group(1))
             for kind in ("Excitatory", "Inhibitory")]
    return rates, result.stdout


@pytest.mark.parametrize("benchmark", ["CUBA", "COBA"])
def test_vabenchmarks_rates_match_brian2(benchmark, tmp_path):
    if not os.path.exists(SCRIPT):
        pytest.skip("PyNN's examples are not at %s" % EXAMPLES)
    (excitatory, inhibitory), out = run_example("dnnc", benchmark, str(tmp_path))
    assert "Number of Neurons      : 4000" in out
    assert os.path.exists(tmp_path / "Results")
    reference = BRIAN2_RATES[benchmark]
    if os.environ.get("DNNC_PYNN_BRIAN2") == "1":
        (tmp_path / "brian2").mkdir()
        reference, _ = run_example("brian2", benchmark, str(tmp_path / "brian2"))
    assert excitatory == pytest.approx(reference[0], rel=0.1)
    assert inhibitory == pytest.approx(reference[1], rel=0.1)
