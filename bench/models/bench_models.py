#!/usr/bin/env python3
"""The field's reference networks, dnnc against Brian2 on the same machine in the same run.

    bench/models/bench_models.py [--models brunel,brunel_sr,microcircuit_scaled]
                                 [--ms 1500] [--from-ms 500] [--nodes 1,4] [--brian-threads 0]
    bench/models/bench_models.py --models microcircuit --nodes 4 --no-brian   # vs NEST's rates

For each model: `dnnc run --nodes K --spikes --json` on K local nodes (each K in --nodes) and
brian_models.py (C++ standalone, compile time excluded), every spike recorded on both sides.
Prints, per population, the rate and CV of inter-spike intervals after --from-ms from each
simulator and their ratio, and the wall time per simulated second of each dnnc run against
Brian2's (the target: <= 0.8x). The full-scale microcircuit is compared with the rates of
NEST's full-scale run (examples/microcircuit/make_microcircuit.py, FULL_MEAN_RATES_HZ).
Exits 1 when a rate or CV differs by more than 10%.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "examples", "microcircuit"))
import spike_stats  # noqa: E402
import make_microcircuit as mc  # noqa: E402

DOCUMENTS = {
    "brunel": "examples/brunel/brunel.xml",
    "brunel_sr": "examples/brunel/brunel_sr.xml",
    "microcircuit_scaled": "examples/microcircuit/microcircuit_scaled.xml",
    "microcircuit": "examples/microcircuit/microcircuit.xml",
}
BRIAN_ARGS = {
    "brunel": ["brunel", "--variant", "ai"],
    "brunel_sr": ["brunel", "--variant", "sr"],
    "microcircuit_scaled": ["microcircuit", "--scale", "0.1"],
    "microcircuit": ["microcircuit", "--scale", "1"],
}
TOLERANCE = 0.10


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def run_dnnc(dnnc, document, nodes, ticks, spikes):
    out = subprocess.run([dnnc, "run", document, "--nodes", str(nodes), "--ticks", str(ticks), "--spikes", spikes,
                          "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def run_brian(model, ms, threads, spikes):
    out = subprocess.run([sys.executable, os.path.join(HERE, "brian_models.py"), *BRIAN_ARGS[model], "--ms", str(ms),
                          "--threads", str(threads), "--spikes", spikes], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def ratio(a, b):
    return a / b if b else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="brunel,brunel_sr,microcircuit_scaled")
    ap.add_argument("--ms", type=float, default=1500.0, help="simulated time")
    ap.add_argument("--from-ms", type=float, default=500.0, help="rates and CVs count spikes after this")
    ap.add_argument("--nodes", default="1,4")
    ap.add_argument("--brian-threads", type=int, default=0)
    ap.add_argument("--no-brian", action="store_true", help="compare with NEST's published rates only")
    ap.add_argument("--dnnc", default=os.path.join(ROOT, "build", "tools", "dnnc"))
    args = ap.parse_args()
    node_counts = [int(k) for k in args.nodes.split(",")]
    ticks = int(round(args.ms / 0.1))
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; simulated {args.ms:g} ms, statistics from {args.from_ms:g} ms")
    failed = False
    with tempfile.TemporaryDirectory(prefix="dnnc-models-") as tmp:
        for model in args.models.split(","):
            document = os.path.join(ROOT, DOCUMENTS[model])
            sizes = spike_stats.population_sizes(document)
            runs = {}
            for k in node_counts:
                spikes = os.path.join(tmp, f"{model}-dnnc-{k}.csv")
                report = run_dnnc(args.dnnc, document, k, ticks, spikes)
                runs[f"dnnc {k} node{'s' if k > 1 else ''}"] = (
                    report["seconds"] / (args.ms / 1000.0), spike_stats.stats(spikes, sizes, args.from_ms, args.ms))
            if args.no_brian:
                reference = {p: {"rate_hz": r, "cv_isi": float("nan")} for p, r in zip(mc.POPULATIONS, mc.FULL_MEAN_RATES_HZ)}
                reference_name, reference_time = "NEST (published)", float("nan")
            else:
                spikes = os.path.join(tmp, f"{model}-brian.csv")
                b = run_brian(model, args.ms, args.brian_threads, spikes)
                reference = spike_stats.stats(spikes, sizes, args.from_ms, args.ms)
                reference_name, reference_time = f"Brian2 ({b['threads']} thread)", b["loop_s"] / (args.ms / 1000.0)
            print(f"\n== {model}: {sum(sizes.values())} neurons ({DOCUMENTS[model]})")
            print(f"  {'population':<10}{reference_name + ' Hz':>22}{'CV':>7}" +
                  "".join(f"{name + ' Hz':>20}{'ratio':>7}{'CV':>7}{'ratio':>7}" for name in runs))
            for pop in sizes:
                ref = reference[pop]
                line = f"  {pop:<10}{ref['rate_hz']:>22.3f}{ref['cv_isi']:>7.3f}"
                for _, (_, st) in runs.items():
                    s = st[pop]
                    rate_ratio, cv_ratio = ratio(s["rate_hz"], ref["rate_hz"]), ratio(s["cv_isi"], ref["cv_isi"])
                    failed |= abs(rate_ratio - 1) > TOLERANCE or (cv_ratio == cv_ratio and abs(cv_ratio - 1) > TOLERANCE)
                    line += f"{s['rate_hz']:>20.3f}{rate_ratio:>7.3f}{s['cv_isi']:>7.3f}{cv_ratio:>7.3f}"
                print(line)
            print(f"  wall seconds per simulated second: {reference_name} {reference_time:.2f}" +
                  "".join(f"; {name} {t:.2f} ({ratio(t, reference_time):.2f}x)" for name, (t, _) in runs.items()))
    print("\nresult:", "every rate and CV within 10%" if not failed else "a rate or CV differs by more than 10%")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
