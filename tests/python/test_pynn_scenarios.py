# PyNN 0.10.1's own system test scenarios (test/system/scenarios, unchanged, in
# ../shared/pynn/scenarios) run against pyNN.dnnc, as PyNN runs them against pyNN.brian2
# (upstream_test_brian2.py). Only this harness is ours: it provides the modules the
# scenarios import from nose's world (testconfig, nose.tools, nose.plugins.skip), which
# are not installed, built as nose builds them; it never changes an assertion.
import os
import re
import sys
import types
import unittest

import pytest

from conftest import SOURCE
from pynn_support import sim

PYNN_TESTS = os.environ.get("DNNC_PYNN_TESTS", os.path.join(SOURCE, "..", "shared", "pynn"))

# Scenarios that do not run on pyNN.dnnc, and why (docs/pynn.md lists them). PyNN itself
# excludes scenario3, scenario4, issue367, issue259, test_record_with_filename,
# test_SpikeSourceGamma, test_SpikeSourcePoissonRefractory and test_simple_stochastic_synapse
# for pyNN.brian2.
SKIPPED = {
    "scenario4": "per-neuron initial w",
    "issue259": "spike times off the tick grid (spike_precision='off_grid')",
    "test_SpikeSourceGamma": "no gamma spike source in dnnc",
    "test_SpikeSourcePoissonRefractory": "no Poisson source with dead time in dnnc",
    "test_simple_stochastic_synapse": "no stochastic synapse in dnnc",
}
def _install_nose_modules():
    """testconfig (nose-testconfig's `config`, empty: every scenario), nose.tools (the
    pep8-named asserts of unittest.TestCase, as nose makes them) and nose.plugins.skip."""
    testconfig = types.ModuleType("testconfig")
    testconfig.config = {}
    tools = types.ModuleType("nose.tools")
    case = unittest.TestCase("__init__")
    for name in dir(case):
        if name.startswith("assert") and "_" not in name and not name.endswith("_"):
            setattr(tools, re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name), getattr(case, name))
    skip = types.ModuleType("nose.plugins.skip")
    skip.SkipTest = unittest.SkipTest
    plugins = types.ModuleType("nose.plugins")
    plugins.skip = skip
    nose = types.ModuleType("nose")
    nose.tools, nose.plugins = tools, plugins
    for module in (testconfig, nose, tools, plugins, skip):
        sys.modules.setdefault(module.__name__, module)


def _scenarios():
    if not os.path.isdir(os.path.join(PYNN_TESTS, "scenarios")):
        return []
    _install_nose_modules()
    sys.path.insert(0, PYNN_TESTS)
    try:
        from scenarios.registry import registry
        import scenarios  # noqa: F401 (registers them)
    finally:
        sys.path.remove(PYNN_TESTS)
    return list(registry)


SCENARIOS = _scenarios()


@pytest.mark.skipif(not SCENARIOS, reason="PyNN's scenarios are not at %s" % PYNN_TESTS)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__ for s in SCENARIOS])
def test_scenario(scenario, tmp_path, monkeypatch):
    name = scenario.__name__
    if name in SKIPPED:
        pytest.skip("pyNN.dnnc: " + SKIPPED[name])
    # Some write their data under Results/ in the working directory: a folder of their own.
    monkeypatch.chdir(tmp_path)
    try:
        scenario(sim)
    finally:
        sim.end()
