#!/usr/bin/env python3
"""Writes the Potjans & Diesmann (2014) cortical microcircuit as DNNC documents.

    python3 make_microcircuit.py                 # microcircuit.xml (full scale) and
                                                 # microcircuit_scaled.xml (N and K x 0.1)
    python3 make_microcircuit.py --scale 0.5 -o half.xml

Every number comes from Potjans & Diesmann, Cerebral Cortex 24:785 (2014), as NEST's
example (pynest/examples/Potjans_2014, network_params.py and helpers.py) states it; the
comments below name each one. Only the Python standard library is used.
"""
import argparse
import math
import os

POPULATIONS = ["L23E", "L23I", "L4E", "L4I", "L5E", "L5I", "L6E", "L6I"]
# Neurons per population (Table 5 of the paper; NEST: N_full).
N_FULL = [20683, 5834, 21915, 5479, 4850, 1065, 14395, 2948]
# Connection probabilities, target (row) x source (column) (Table 5; NEST: conn_probs).
CONN_PROBS = [
    [0.1009, 0.1689, 0.0437, 0.0818, 0.0323, 0.0, 0.0076, 0.0],
    [0.1346, 0.1371, 0.0316, 0.0515, 0.0755, 0.0, 0.0042, 0.0],
    [0.0077, 0.0059, 0.0497, 0.135, 0.0067, 0.0003, 0.0453, 0.0],
    [0.0691, 0.0029, 0.0794, 0.1597, 0.0033, 0.0, 0.1057, 0.0],
    [0.1004, 0.0622, 0.0505, 0.0057, 0.0831, 0.3726, 0.0204, 0.0],
    [0.0548, 0.0269, 0.0257, 0.0022, 0.06, 0.3158, 0.0086, 0.0],
    [0.0156, 0.0066, 0.0211, 0.0166, 0.0572, 0.0197, 0.0396, 0.2252],
    [0.0364, 0.001, 0.0034, 0.0005, 0.0277, 0.008, 0.0658, 0.1443],
]
# External (Poisson background) in-degrees (Table 5; NEST: K_ext) at 8 Hz each (bg_rate).
K_EXT = [1600, 1500, 2100, 1900, 2000, 1900, 2900, 2100]
BG_RATE_HZ = 8.0
# Mean rates of the full-scale network in NEST (NEST: full_mean_rates), used by the
# scaled-down variant's compensating DC input and as the validation reference.
FULL_MEAN_RATES_HZ = [0.971, 2.868, 4.746, 5.396, 8.142, 9.078, 0.991, 7.523]
# Synapses: mean PSP 0.15 mV with relative std 0.1, inhibitory g = -4, L4E->L23E doubled;
# delays 1.5 ms (excitatory) and 0.75 ms (inhibitory) with relative std 0.5.
PSP_E_MV, PSP_REL_STD, G = 0.15, 0.1, -4.0
DELAY_E_MS, DELAY_I_MS, DELAY_REL_STD = 1.5, 0.75, 0.5
# Neurons: iaf_psc_exp (Table 5; NEST: neuron_params).
NEURON = dict(C_m=250.0, tau_m=10.0, tau_syn_ex=0.5, tau_syn_in=0.5, t_ref=2.0, E_L=-65.0, V_th=-50.0, V_reset=-65.0)
# Initial membrane potentials: NEST's 'optimized' V0 (population-specific normal
# distributions that avoid the start-up transient of the 'original' N(-58, 10) mV).
V0_MEAN = [-68.28, -63.16, -63.33, -63.45, -63.11, -61.66, -66.72, -61.43]
V0_STD = [5.36, 4.57, 4.74, 4.94, 4.94, 4.55, 5.46, 4.48]
DT_MS = 0.1  # NEST example: sim_resolution


def psc_over_psp(C_m, tau_m, tau_syn):
    """pA of exponential PSC per mV of PSP peak (NEST: postsynaptic_potential_to_current)."""
    sub = 1.0 / (tau_syn - tau_m)
    pre = tau_m * tau_syn / C_m * sub
    frac = (tau_m / tau_syn) ** sub
    return 1.0 / (pre * (frac ** tau_m - frac ** tau_syn))


def full_synapse_counts():
    """Total synapses per (target, source) pair of populations for the connection
    probabilities, as NEST's num_synapses_from_conn_probs: K = ln(1-p) / ln(1 - 1/(Npre Npost))."""
    counts = []
    for i, n_post in enumerate(N_FULL):
        row = []
        for j, n_pre in enumerate(N_FULL):
            prod = float(n_pre) * n_post
            row.append(math.log(1.0 - CONN_PROBS[i][j]) / math.log((prod - 1.0) / prod))
        counts.append(row)
    return counts


def build(n_scaling, k_scaling):
    """The network at a scale, with NEST's compensation for k_scaling < 1: weights grow
    by 1/sqrt(K) and a DC input keeps each neuron's mean input at its full-scale value."""
    w_unit = psc_over_psp(NEURON["C_m"], NEURON["tau_m"], NEURON["tau_syn_ex"])
    w_ext_full = PSP_E_MV * w_unit
    psc = [[(PSP_E_MV * (G if j % 2 else 1.0) * (2.0 if (i, j) == (0, 2) else 1.0)) * w_unit for j in range(8)]
           for i in range(8)]
    full = full_synapse_counts()
    sizes = [int(round(n * n_scaling)) for n in N_FULL]
    counts = [[int(round(full[i][j] * n_scaling * k_scaling)) for j in range(8)] for i in range(8)]
    k_ext = [int(round(k * k_scaling)) for k in K_EXT]
    root = math.sqrt(k_scaling)
    dc = []
    for i in range(8):
        input_rec = sum(psc[i][j] * full[i][j] / N_FULL[i] * FULL_MEAN_RATES_HZ[j] for j in range(8))
        input_ext = w_ext_full * K_EXT[i] * BG_RATE_HZ
        dc.append(0.001 * NEURON["tau_syn_ex"] * (1.0 - root) * (input_rec + input_ext))
    return dict(sizes=sizes, counts=counts, psc=[[w / root for w in row] for row in psc], w_ext=w_ext_full / root,
                k_ext=k_ext, dc=dc)


def g(x):
    return repr(round(x, 6)) if isinstance(x, float) else str(x)


def write(path, n_scaling, k_scaling):
    net = build(n_scaling, k_scaling)
    name = "microcircuit" if n_scaling == 1 and k_scaling == 1 else "microcircuit_scaled"
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           "<!-- The Potjans & Diesmann (2014) cortical microcircuit, written by make_microcircuit.py",
           f"     (N scaled by {n_scaling}, in-degrees by {k_scaling}). See readme.md for every parameter's source. -->",
           '<dnnc xmlns="urn:dnnc:1">',
           f'  <network name="{name}" dt="{DT_MS}">']
    params = " ".join(f'{k}="{g(v)}"' for k, v in NEURON.items())
    for i, pop in enumerate(POPULATIONS):
        i_e = f' I_e="{g(net["dc"][i])}"' if net["dc"][i] else ""
        out.append(f'    <population id="{pop}" size="{net["sizes"][i]}" model="iaf_psc_exp" seed="{101 + i}" {params}{i_e}')
        out.append(f'                v-init="{V0_MEAN[i]}" v-init-std="{V0_STD[i]}"/>')
    seed = 1000
    for i, target in enumerate(POPULATIONS):
        for j, source in enumerate(POPULATIONS):
            n = net["counts"][i][j]
            if n <= 0:
                continue
            seed += 1
            w = net["psc"][i][j]
            bound = 'max="0"' if w < 0 else 'min="0"'
            delay = DELAY_I_MS if j % 2 else DELAY_E_MS
            out.append(f'    <projection from="{source}" to="{target}" kind="fixed-total-number" n="{n}" seed="{seed}">')
            out.append(f'      <weight distribution="normal" mean="{g(w)}" std="{g(abs(w) * PSP_REL_STD)}" {bound}/>')
            out.append(f'      <delay distribution="normal" mean="{delay}" std="{delay * DELAY_REL_STD}" min="{DT_MS / 2}"/>')
            out.append("    </projection>")
    for i, pop in enumerate(POPULATIONS):
        out.append(f'    <poisson to="{pop}" rate="{g(BG_RATE_HZ * net["k_ext"][i])}" weight="{g(net["w_ext"])}" seed="{2001 + i}"/>')
    # Spikes are sparse: only non-zero outputs travel between nodes.
    out += ["  </network>", '  <run sync="lockstep" send="nonzero"/>', "</dnnc>", ""]
    with open(path, "w") as f:
        f.write("\n".join(out))
    synapses = sum(map(sum, net["counts"]))
    print(f"{path}: {sum(net['sizes'])} neurons, {synapses} synapses")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, help="scale N and K by this factor (writes only -o)")
    parser.add_argument("-o", "--output")
    args = parser.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    if args.scale is not None:
        write(args.output or f"microcircuit_{args.scale}.xml", args.scale, args.scale)
        return
    write(os.path.join(here, "microcircuit.xml"), 1.0, 1.0)
    write(os.path.join(here, "microcircuit_scaled.xml"), 0.1, 0.1)


if __name__ == "__main__":
    main()
