"""The CUBA benchmark network (Vogels & Abbott 2005; Brette et al. 2007), built in Python,
run for one simulated second on 4 local nodes, with a raster plot and a rate plot saved
as PNG (cuba_raster.png, cuba_rates.png, or in the folder given as the first argument).

    python3 examples/python/cuba.py [OUT_DIR]
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt
import numpy as np

import dnnc

# 4,000 LIF neurons, P[0:3200] excitatory, P[3200:4000] inhibitory, connected with
# probability 0.02; Brian2's parameters (examples/cuba/cuba.xml is the same network).
net = dnnc.Network("cuba")
net.population("P", 4000, model="lif", seed=42, tau_m=20, v_rest=-49, v_reset=-60, v_th=-50,
               refractory=50, tau_e=5, tau_i=10, dt=0.1, v_init=-60, v_init_max=-50)
net.connect("P[0:3200]", "P", kind="random", p=0.02, weight=1.62, delay=1, seed=1)
net.connect("P[3200:4000]", "P", kind="random", p=0.02, weight=-9, delay=1, seed=2)
net.run_settings(sync="lockstep", send="nonzero")
print("%s: %d neurons, %d synapses" % (net.name, net.neurons, net.synapses))

with dnnc.Simulation(net, nodes=4) as sim:
    sim.run(10000)  # 1 s of 0.1 ms ticks
    t_ms, population, index = sim.spikes()
    rates = sim.rates()
    print("ran %d ticks on %d nodes in %.2f s; %d spikes, %.2f Hz" %
          (sim.tick, len(sim.summary["nodes"]), sim.last_step_seconds, len(t_ms), rates["P"]))

out = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(out, exist_ok=True)

fig, ax = plt.subplots(figsize=(8, 4))
excitatory = index < 3200
ax.plot(t_ms[excitatory], index[excitatory], ",", color="tab:blue", label="excitatory")
ax.plot(t_ms[~excitatory], index[~excitatory], ",", color="tab:red", label="inhibitory")
ax.set(xlabel="time (ms)", ylabel="neuron", title="CUBA: spikes of 4,000 neurons on 4 nodes", xlim=(0, 1000))
fig.tight_layout()
fig.savefig(os.path.join(out, "cuba_raster.png"), dpi=120)

fig, ax = plt.subplots(figsize=(8, 3))
bins = np.arange(0, 1000 + 5, 5)  # 5 ms bins
counts, _ = np.histogram(t_ms, bins=bins)
ax.plot(bins[:-1], counts / 4000 / 0.005, color="k")
ax.set(xlabel="time (ms)", ylabel="rate (Hz)", title="CUBA: population rate (5 ms bins)", xlim=(0, 1000))
fig.tight_layout()
fig.savefig(os.path.join(out, "cuba_rates.png"), dpi=120)
print("wrote %s and %s" % (os.path.join(out, "cuba_raster.png"), os.path.join(out, "cuba_rates.png")))
