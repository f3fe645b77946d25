#pragma once
// Which links carry signal packets LZ4-compressed, decided by the lead at each install from
// the links' measured throughputs (link_time::throughput_bps). Pure code, no sockets.
//
// The rule. A link is compressed when, at its measured throughput, a tick's packets across
// it take longer to send than the tick lasts:
//   bytes(link) = the larger of its two directions' sums, over the peer routes that cross
//                 the link that way, of a tick's largest packet (frame header + a dense
//                 packet of every value the peer is sent)
//   send(link)  = 8 × bytes(link) / throughput_bps(link)
//   tick        = the tick period (0 when free-running), or else the estimated compute time
//                 per tick of the busiest node (tick_compute_ms), whichever is longer
//   compressed  = send(link) > tick
// A link whose throughput was not measured (0: too fast for the probes to tell, or
// throughput-probes="0") is not compressed. A peer route is compressed when any link on it
// is. <run compress="always"> compresses every link, "never" none.
#include "dnnc/model/model.hpp"
#include "dnnc/plan/plan.hpp"
#include "dnnc/plan/topology.hpp"

#include <vector>

namespace dnnc::plan {

// A rough estimate of the time one tick of a node's share takes to compute: a fixed cost per
// tick, plus a cost per neuron and per synapse (the constants are in compression.cpp).
double tick_compute_ms(const node_load& load);

// Decides every link's compression (link_time::compressed, from `mode` and the rule above)
// and marks the peer routes of every config under `root` (peer_route::compress) accordingly.
// `root` is what build_configs gave for `plan` on `topo`; `times` holds the measured links.
void decide_compression(model::node_config& root, const network_plan& plan, const topology& topo,
                        std::vector<link_time>& times);

}  // namespace dnnc::plan
