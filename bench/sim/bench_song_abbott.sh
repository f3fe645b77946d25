#!/usr/bin/env bash
# Synapses that learn, against Brian2: Song, Miller & Abbott (2000), Fig. 2, as in Brian2's
# examples/synapses/STDP.py. 1,000 Poisson inputs at 15 Hz onto one neuron through additive
# STDP (dnnc: stdp_synapse, mu_plus = mu_minus = 0, lambda 0.01, alpha 1.05, tau_plus =
# tau_minus = 20 ms, Wmax = gmax; Brian2: taupre = taupost = 20 ms, dApre = 0.01 gmax,
# dApost = -1.05 dApre, w clipped to [0, gmax]), weights uniform in [0, gmax) at the start,
# delay one 0.1 ms tick, 100 s simulated.
#
# The neuron is current-based in both, NEST's iaf_psc_exp with the example's constants
# (tau_m 10 ms, tau_syn_ex 5 ms, E_L -74 mV, V_th -54 mV, V_reset -60 mV, no refractory
# period, C_m 250 pF): dnnc has no conductance-based neuron. gmax is in pA (default 25 pA:
# an input at gmax moves the neuron by at most 0.25 mV); the paper's neuron is
# conductance-based, so its figures are not these.
#
# Both simulators get the same input spike trains (1.5M spikes, drawn once by
# song_abbott.py: dnnc through a <spike-source> CSV, Brian2 through a SpikeGeneratorGroup)
# and the same initial weights (dnnc's own draws, read back after one tick). Brian2 runs
# the synapse as NEST's stdp_synapse does (brian_song_abbott.py says how it differs from the
# example); on these inputs the two give the same output spikes, tick for tick, until
# float32 against float64 rounding moves one spike (the report says when), and weights
# that differ by about 1e-5 pA until then; after that the runs are two samples of one
# process.
#
# Prints for each: the fraction of weights above gmax/2, the mean weight / gmax, the output
# rate (last 20 s and whole run), a text histogram of the weights (bimodal: both ends
# populated, the middle sparse), PASS/MISS per figure (within 10% of each other), and the
# wall times: dnnc's tick time (dnnc run --json "seconds") and Brian2's simulation loop
# (C++ standalone; code generation and compilation not counted). Exits 1 on a MISS or a
# weight distribution that is not bimodal.
# The document has an idle neuron that nothing drives or records: while a network with a
# spike source records every neuron of a spiking model, a node lists the sources' spikes
# too, and dnnc run --spikes stops ("the lead sent a spike of neuron 0, which it does not
# record").
# Installs Debian's python3-brian if missing; builds dnnc and dnnc-node in build/.
# Usage: bench/sim/bench_song_abbott.sh [SECONDS] [GMAX_PA] [SEED]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-100}
gmax=${2:-25}
seed=${3:-1}
python=/usr/bin/python3  # Debian's interpreter, the one python3-brian installs into

source scripts/ensure_packages.sh
ensure_packages python3-brian
cmake --build build --target dnnc dnnc-node > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ticks=$("$python" -c "print(round($seconds * 10000))")
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), commit $(git rev-parse --short HEAD), load average $(cut -d" " -f1-3 /proc/loadavg), $seconds s ($ticks ticks), gmax $gmax pA, seed $seed"
"$python" bench/sim/song_abbott.py make --dir "$work" --seconds "$seconds" --gmax "$gmax" --seed "$seed"
# The initial weights: tick 0 changes none (tick t takes the events of synapse time t - 1).
build/tools/dnnc run "$work/song_abbott.xml" --nodes 1 --ticks 1 --weights "$work/weights0.csv" > /dev/null
echo "== dnnc, 1 node"
build/tools/dnnc run "$work/song_abbott.xml" --nodes 1 --ticks "$ticks" --json --spikes "$work/dnnc_spikes.csv" \
  --weights "$work/dnnc_weights.csv" > "$work/dnnc_run.json"
echo "== Brian2, C++ standalone, 1 thread"
"$python" bench/sim/brian_song_abbott.py --dir "$work"
"$python" bench/sim/song_abbott.py report --dir "$work"
