"""pyNN.dnnc: PyNN 0.10's API over dnnc (docs/pynn.md).

    import pyNN.dnnc as sim
    sim.setup(timestep=0.1, nodes=4)
    ...
    sim.run(1000.0)

The network is built as a DNNC document and submitted to a local cluster of ``nodes``
dnnc-node processes (or the cluster of the document ``cluster=FILE``) at the first run();
later runs continue it there, reset() starts it anew from t = 0. Loaded as ``pyNN.dnnc``
through the import hook dnnc_pynn_hook (never import it as ``dnnc.pynn``).
"""

from pyNN import common
from pyNN import standardmodels as _standard
from pyNN.common.control import DEFAULT_MAX_DELAY, DEFAULT_MIN_DELAY, DEFAULT_TIMESTEP
from pyNN.connectors import *  # noqa: F401,F403 (a connector dnnc cannot draw raises at Projection)
from pyNN.random import NumpyRNG, RandomDistribution  # noqa: F401
from pyNN.recording import get_io
from pyNN import space  # noqa: F401 (sim.space.Grid2D, ...)
from pyNN.space import Space  # noqa: F401

from . import simulator
from .populations import Assembly, Population, PopulationView  # noqa: F401
from .projections import Projection
from .standardmodels import *  # noqa: F401,F403
from .standardmodels import StaticSynapse


def _not_available(base_module, base):
    """The standard models of PyNN that dnnc has no translation for: using one raises
    NotImplementedError naming it."""
    for name, cls in vars(base_module).items():
        if isinstance(cls, type) and issubclass(cls, base) and cls is not base and name not in globals():
            globals()[name] = type(name, (_standard.ModelNotAvailable,), {"__doc__": "Not available in pyNN.dnnc."})


_not_available(_standard.cells, _standard.StandardCellType)
_not_available(_standard.synapses, _standard.StandardSynapseType)
_not_available(_standard.synapses, _standard.STDPWeightDependence)
_not_available(_standard.synapses, _standard.STDPTimingDependence)
_not_available(_standard.electrodes, _standard.StandardCurrentSource)


def list_standard_models():
    """The StandardCellType classes pyNN.dnnc translates."""
    return [obj.__name__ for obj in globals().values()
            if isinstance(obj, type) and issubclass(obj, _standard.StandardCellType)]


def setup(timestep=DEFAULT_TIMESTEP, min_delay=DEFAULT_MIN_DELAY, max_delay=DEFAULT_MAX_DELAY, nodes=None,
          cluster=None, weight_precision="single", **extra_params):
    """Starts a new network. ``nodes=K``: run it on K local dnnc-node processes (default
    4); ``cluster=FILE``: on the <cluster> of that DNNC document. Times in ms; delays are
    whole ticks of ``timestep`` (the longest 65,535 ticks). ``weight_precision="half"``:
    synapse weights kept in 16 bits (<run weight-precision="half">)."""
    common.setup(timestep, min_delay, max_delay=max_delay, **extra_params)
    if nodes is not None and cluster is not None:
        raise ValueError("setup(): give nodes= or cluster=, not both")
    if weight_precision not in ("single", "half"):
        raise ValueError(f"setup(): weight_precision must be 'single' or 'half', not {weight_precision!r}")
    state = simulator.state
    state.clear()
    state.dt = float(timestep)
    state.min_delay = min_delay
    state.max_delay = 65535 * timestep if max_delay == "auto" else max_delay
    state.cluster = {"cluster": cluster} if cluster is not None else {"nodes": 4 if nodes is None else int(nodes)}
    state.weight_precision = weight_precision
    return rank()


def end(compatible_output=True):
    """Writes the data asked for by record(..., filename) and stops the cluster (what it
    recorded stays readable until the next setup() or reset())."""
    for population, variables, filename in simulator.state.write_on_end:
        population.write_data(get_io(filename), variables)
    simulator.state.write_on_end = []
    simulator.state.end()


run, run_until = common.build_run(simulator)
run_for = run

reset = common.build_reset(simulator)

initialize = common.initialize

get_current_time, get_time_step, get_min_delay, get_max_delay, num_processes, rank = \
    common.build_state_queries(simulator)

create = common.build_create(Population)

connect = common.build_connect(Projection, FixedProbabilityConnector, StaticSynapse)  # noqa: F405

record = common.build_record(simulator)


def record_v(source, filename):
    return record(['v'], source, filename)


def record_gsyn(source, filename):
    return record(['gsyn_exc', 'gsyn_inh'], source, filename)
