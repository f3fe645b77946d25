"""PyNN 0.10.1's own examples, unchanged, on pyNN.dnnc and on pyNN.brian2 in the same run:
the rate (Hz) and the mean CV of inter-spike intervals of every population that records
spikes, compared between the two simulators (target: within 10%), and the wall time of each
run, split into set-up (from the harness's start, imports included, until the first
run/run_until/run_for) and run (inside those calls), against the target of pyNN.dnnc's
total at most 0.5x pyNN.brian2's on each example of more than 1,000 neurons.

    python3 bench/python/bench_pynn_examples.py [--examples CUBA,COBA,brunel,Potjans2014,Izhikevich,tsodyksmarkram,simple_STDP]
        [--simulators dnnc,brian2] [--timeout 1200] [--skip-brian2] [--logs DIR]
        [--examples-dir ../shared/pynn/examples] [--potjans-scaling 0.05] [--potjans-k-scaling 0.1]

Each script runs as its own __main__ (runpy, with sys.argv set as on its command line) in a
subprocess of its own, one at a time, in a temporary folder, with this file as the harness
(`--child`); its prints go to a log file per run. Potjans2014 is the one example that cannot run
unchanged: its network_params.py names the simulator 'nest' and both its parameter files key
their settings by 'nest'. The harness copies the folder into the temporary folder and, in the
copy only, replaces 'nest' with the simulator's name in network_params.py and sim_params.py,
sets N_scaling (--potjans-scaling, 1.0 in the original) and K_scaling (--potjans-k-scaling, 0.5
in the original), and creates results/ (which its run_microcircuit.py would create). Its
microcircuit.py imports neo.io's PyNNTextIO, which neo 0.11 no longer has: the copy defines a
PyNNTextIO that writes nothing in place of that import (the script still reads every
population's data with get_data), and network_params.py's create_raster_plot is set False (the
plot reads those files). It then runs microcircuit.py, the same scale on both simulators.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
RESULT = "BENCH_PYNN_EXAMPLE_RESULT "  # prefix of the child's one JSON line
TARGET = 0.5  # pyNN.dnnc's total over pyNN.brian2's, on examples of more than 1,000 neurons
TOLERANCE = 10.0  # % between the simulators' rates and CVs
LARGE = 1000  # neurons

# name: (script relative to the examples folder, arguments after the simulator's name)
EXAMPLES = {
    "CUBA": ("VAbenchmarks.py", ["CUBA"]),
    "COBA": ("VAbenchmarks.py", ["COBA"]),
    "brunel": ("brunel.py", []),
    "Potjans2014": ("Potjans2014/microcircuit.py", None),  # no command line: see the docstring
    "Izhikevich": ("Izhikevich.py", []),
    "tsodyksmarkram": ("tsodyksmarkram.py", []),
    "simple_STDP": ("simple_STDP.py", []),
}


# ---- the child: one example on one simulator --------------------------------------------------

def spike_statistics(population):
    """(rate in Hz over the recorded cells, mean CV of ISIs over cells with 3 spikes or more
    or None) of the population's last segment."""
    import numpy as np
    trains = population.get_data("spikes", gather=True, clear=False).segments[-1].spiketrains
    if not trains:
        return None
    duration_s = float(trains[0].t_stop.rescale("s") - trains[0].t_start.rescale("s"))
    counts = [len(train) for train in trains]
    cvs = []
    for train in trains:
        intervals = np.diff(np.sort(train.rescale("ms").magnitude))
        if len(intervals) >= 2 and intervals.mean() > 0:
            cvs.append(intervals.std() / intervals.mean())
    rate = sum(counts) / (len(trains) * duration_s) if duration_s > 0 else 0.0
    return rate, (float(np.mean(cvs)) if cvs else None)


def child(simulator, script, argv):
    """Runs the script as __main__ with pyNN.<simulator>'s run functions, Population and end
    wrapped; prints one JSON line: set-up and run seconds, neurons, and per population
    [label, size, rate, CV]."""
    start = time.perf_counter()
    import importlib
    import runpy
    if simulator == "dnnc":
        import dnnc_pynn_hook  # noqa: F401 (what dnnc.pth imports at start-up)
    module = importlib.import_module("pyNN." + simulator)
    timing = {"first_run": None, "run": 0.0, "depth": 0}
    populations = []
    statistics = {}

    def timed(function):
        def wrapper(*args, **kwargs):
            if timing["depth"]:
                return function(*args, **kwargs)
            began = time.perf_counter()
            if timing["first_run"] is None:
                timing["first_run"] = began
            timing["depth"] += 1
            try:
                return function(*args, **kwargs)
            finally:
                timing["depth"] -= 1
                timing["run"] += time.perf_counter() - began
        return wrapper

    for name in ("run", "run_until", "run_for"):
        if hasattr(module, name):
            setattr(module, name, timed(getattr(module, name)))

    population_init = module.Population.__init__

    def init(self, *args, **kwargs):
        population_init(self, *args, **kwargs)
        populations.append(self)
    module.Population.__init__ = init

    def collect():
        if statistics:
            return
        statistics["populations"] = []
        for population in populations:
            if not population.recorder.recorded.get("spikes"):
                continue
            rate, cv = spike_statistics(population) or (None, None)
            statistics["populations"].append([population.label, population.size, rate, cv])

    end = module.end

    def collecting_end(*args, **kwargs):
        collect()
        return end(*args, **kwargs)
    module.end = collecting_end

    sys.argv = [script] + argv
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # as `python3 SCRIPT` would have it
    runpy.run_path(script, run_name="__main__")
    collect()
    finished = time.perf_counter()
    first_run = timing["first_run"] if timing["first_run"] is not None else finished
    neurons = sum(p.size for p in populations if p.celltype.injectable)
    print(RESULT + json.dumps(dict(setup=first_run - start, run=timing["run"],
                                   other=finished - first_run - timing["run"], neurons=neurons,
                                   populations=statistics["populations"])), flush=True)


# ---- the parent: every example on every simulator, one at a time ------------------------------

NO_TEXT_IO = '''class PyNNTextIO:  # neo 0.11 has no PyNNTextIO: the data are read (get_data), not written
    def __init__(self, filename):
        pass

    def write_segment(self, segment):
        pass
'''


def prepare_potjans(examples_dir, folder, simulator, n_scaling, k_scaling):
    """Copies Potjans2014 into folder and patches the copy (see the docstring); the script's path."""
    copy = os.path.join(folder, "Potjans2014")
    shutil.copytree(os.path.join(examples_dir, "Potjans2014"), copy)
    for name in ("network_params.py", "sim_params.py"):
        path = os.path.join(copy, name)
        with open(path) as f:
            text = f.read().replace("'nest'", repr(simulator))
        if name == "network_params.py":
            text, n = re.subn(r"'N_scaling' : 1\.,", "'N_scaling' : %r," % n_scaling, text)
            text, k = re.subn(r"'K_scaling' : 0\.5,", "'K_scaling' : %r," % k_scaling, text)
            text, plot = re.subn(r"create_raster_plot = True", "create_raster_plot = False", text)
            assert n == k == plot == 1, "Potjans2014's network_params.py is not the one this harness patches"
        with open(path, "w") as f:
            f.write(text)
    path = os.path.join(copy, "microcircuit.py")
    with open(path) as f:
        text = f.read()
    assert "from neo.io import PyNNTextIO\n" in text, "Potjans2014's microcircuit.py is not the one this harness patches"
    with open(path, "w") as f:
        f.write(text.replace("from neo.io import PyNNTextIO\n", NO_TEXT_IO))
    os.mkdir(os.path.join(copy, "results"))
    return os.path.join(copy, "microcircuit.py")


def run_one(example, simulator, args):
    """Runs one example on one simulator; a dict with the child's figures, or with 'error'."""
    script, extra = EXAMPLES[example]
    folder = tempfile.mkdtemp(prefix="bench_pynn_%s_%s_" % (example, simulator))
    if extra is None:
        script = prepare_potjans(args.examples_dir, folder, simulator, args.potjans_scaling, args.potjans_k_scaling)
        cwd, argv = os.path.dirname(script), []
    else:
        script = os.path.join(args.examples_dir, script)
        cwd, argv = folder, [simulator] + extra
    env = dict(os.environ, MPLBACKEND="Agg",
               PYTHONPATH=os.path.join(SOURCE, "build", "python"))
    log_path = os.path.join(args.logs, "%s_%s.log" % (example, simulator))
    began = time.perf_counter()
    with open(log_path, "w") as log:
        try:
            result = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", simulator, script] + argv,
                                    cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                                    timeout=args.timeout)
            output = result.stdout
            failed = result.returncode != 0
            timed_out = False
        except subprocess.TimeoutExpired as timeout:
            output = timeout.stdout.decode() if isinstance(timeout.stdout, bytes) else (timeout.stdout or "")
            output += "\ntimed out after %d s\n" % args.timeout
            failed = timed_out = True
        log.write(output)
    shutil.rmtree(folder, ignore_errors=True)
    lines = [line for line in output.splitlines() if line.strip()]
    found = [line[len(RESULT):] for line in lines if line.startswith(RESULT)]
    if failed or not found:
        errors = [line for line in lines if re.match(r"[\w.]*(Error|Exception)\b", line) or line.startswith("timed out")]
        error = (errors or lines or ["no output"])[-1]
        return {"error": error, "timed_out": timed_out, "seconds": time.perf_counter() - began, "log": log_path}
    figures = json.loads(found[-1])
    figures["log"] = log_path
    return figures


def worst_difference(dnnc, brian2, index):
    """Largest |dnnc - brian2| / brian2 in % over the populations both record, for rates
    (index 2) or CVs (index 3); None where nothing compares."""
    worst = None
    for (label, _, *ours), (_, _, *theirs) in zip(dnnc["populations"], brian2["populations"]):
        a, b = ours[index - 2], theirs[index - 2]
        if a is None or b is None:
            continue
        difference = 0.0 if a == b else (abs(a - b) / abs(b) * 100 if b else float("inf"))
        worst = difference if worst is None else max(worst, difference)
    return worst


def seconds(figures):
    if figures is None:
        return "not run", "", ""
    if figures.get("timed_out"):
        return "timed out", "", "> %.0f" % figures["seconds"]
    if "error" in figures:
        return "FAILED", "", ""
    total = figures["setup"] + figures["run"] + figures["other"]
    return "%.1f" % figures["setup"], "%.1f" % figures["run"], "%.1f" % total


def total(figures):
    return figures["setup"] + figures["run"] + figures["other"] if figures and "error" not in figures else None


def percent(value):
    return "-" if value is None else "%.1f%%" % value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", default=",".join(EXAMPLES))
    parser.add_argument("--simulators", default="dnnc,brian2")
    parser.add_argument("--skip-brian2", action="store_true", help="runs pyNN.dnnc only (brian2's columns say 'not run')")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds per run")
    parser.add_argument("--logs", default=None, help="folder for each run's output (default: a temporary folder)")
    parser.add_argument("--examples-dir", default=os.path.join(SOURCE, "..", "shared", "pynn", "examples"))
    parser.add_argument("--potjans-scaling", type=float, default=0.05, help="Potjans2014's N_scaling")
    parser.add_argument("--potjans-k-scaling", type=float, default=0.1, help="Potjans2014's K_scaling")
    args = parser.parse_args()
    examples = args.examples.split(",")
    simulators = [s for s in args.simulators.split(",") if not (args.skip_brian2 and s == "brian2")]
    args.logs = args.logs or tempfile.mkdtemp(prefix="bench_pynn_examples_")
    os.makedirs(args.logs, exist_ok=True)
    print("load average at start: %s; logs in %s" % (" ".join(open("/proc/loadavg").read().split()[:3]), args.logs))

    results = {}
    for example in examples:
        for simulator in simulators:
            figures = run_one(example, simulator, args)
            results[example, simulator] = figures
            state = ("FAILED: " + figures["error"]) if "error" in figures else "%.1f s" % total(figures)
            print("%s on pyNN.%s: %s" % (example, simulator, state), flush=True)
            if "error" not in figures:
                for label, size, rate, cv in figures["populations"]:
                    print("    %-24s %6d cells  %s Hz  CV %s" % (label, size, "-" if rate is None else "%.3f" % rate,
                                                                "-" if cv is None else "%.3f" % cv))

    print("\nload average at end: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
    print("| example | neurons | dnnc set-up s | dnnc run s | dnnc total s | brian2 set-up s | brian2 run s "
          "| brian2 total s | dnnc/brian2 (target <= %.1f over %d neurons) | worst rate diff | worst CV diff |"
          % (TARGET, LARGE))
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for example in examples:
        dnnc, brian2 = results.get((example, "dnnc")), results.get((example, "brian2"))
        known = [f for f in (dnnc, brian2) if f and "error" not in f]
        neurons = known[0]["neurons"] if known else None
        ratio, rate, cv = "-", "-", "-"
        if total(dnnc) is not None and brian2 and brian2.get("timed_out"):
            value = total(dnnc) / brian2["seconds"]  # brian2's total is longer than its timeout
            target = "" if neurons <= LARGE else (" met" if value <= TARGET else " MISSED")
            ratio = "< %.3f%s" % (value, target)
        elif total(dnnc) is not None and total(brian2) is not None:
            value = total(dnnc) / total(brian2)
            target = "" if neurons <= LARGE else (" met" if value <= TARGET else " MISSED")
            ratio = "%.2f%s" % (value, target)
            rate = worst_difference(dnnc, brian2, 2)
            cv = worst_difference(dnnc, brian2, 3)
            rate = percent(rate) + ("" if rate is None or rate <= TOLERANCE else " MISSED")
            cv = percent(cv) + ("" if cv is None or cv <= TOLERANCE else " MISSED")
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            example, "-" if neurons is None else neurons, *seconds(dnnc), *seconds(brian2), ratio, rate, cv))
    for (example, simulator), figures in results.items():
        if "error" in figures:
            print("%s on pyNN.%s failed: %s (log %s)" % (example, simulator, figures["error"], figures["log"]))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        main()
