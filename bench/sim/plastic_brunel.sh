#!/usr/bin/env bash
# Writes Brunel's network (examples/brunel/brunel.xml) with its E->E projection under NEST's
# stdp_synapse (multiplicative, Wmax = J = 0.1 mV, so weights can only fall and the rates stay
# near the static network's) to standard output: the plastic network of bench_plastic_cost.sh
# and bench_brunel_stdp.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
doc=$(sed -e 's#<network name="brunel" dt="0.1">#&\n    <synapse-model id="ee" model="stdp_synapse" tau_plus="20" lambda="0.01" alpha="1" mu_plus="1" mu_minus="1" Wmax="0.1"/>#' \
  -e 's#\(from="E" to="E" [^/]*\)/>#\1 synapse-model="ee"/>#' examples/brunel/brunel.xml)
grep -q 'synapse-model="ee"' <<< "$doc" || { echo "plastic_brunel.sh: brunel.xml's E->E projection not found" >&2; exit 1; }
printf '%s\n' "$doc"
