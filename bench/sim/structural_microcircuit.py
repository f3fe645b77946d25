#!/usr/bin/python3
"""Prints examples/microcircuit/microcircuit_scaled.xml (Potjans & Diesmann at 0.1) with NEST's
homeostatic structural plasticity on top of its static wiring, as NEST's structural_plasticity.py
sets it up: excitatory populations grow Den_ex, Den_in and Axon_ex towards a calcium of 0.05,
inhibitory ones Den_ex, Den_in and Axon_in towards 0.2 (tau_Ca 10 s: 5 Hz and 20 Hz), every
second new synapses of the microcircuit's own strengths and mean delays.
Usage: structural_microcircuit.py > microcircuit_sp.xml"""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parents[2]
text = (root / "examples/microcircuit/microcircuit_scaled.xml").read_text()
curves = {
    "E": [("Den_ex", 0.0001, 0.05), ("Den_in", 0.0001, 0.05), ("Axon_ex", 0.0001, 0.05)],
    "I": [("Den_ex", 0.0004, 0.2), ("Den_in", 0.0001, 0.2), ("Axon_in", 0.0001, 0.2)],
}


def with_elements(match):
    kind = match.group(2)
    children = "".join(
        f'\n      <synaptic-element name="{name}" growth_rate="{rate}" eta="0" eps="{eps}" continuous="false"/>'
        for name, rate, eps in curves[kind])
    return match.group(1) + ">" + children + "\n    </population>"


text, count = re.subn(r'(<population id="L\d+(E|I)"[^>]*?)/>', with_elements, text)
if count != 8:
    sys.exit("expected the microcircuit's 8 populations")
structural = """    <structural-plasticity structural_plasticity_update_interval="1000" seed="4001">
      <structural-synapse id="grown_ex" pre_synaptic_element="Axon_ex" post_synaptic_element="Den_ex" weight="87.8" delay-ms="1.5"/>
      <structural-synapse id="grown_in" pre_synaptic_element="Axon_in" post_synaptic_element="Den_in" weight="-351.2" delay-ms="0.8"/>
    </structural-plasticity>
  </network>"""
sys.stdout.write(text.replace('name="microcircuit_scaled"', 'name="microcircuit_scaled_sp"').replace("  </network>", structural))
