#pragma once
// The checks a schema cannot express: unique ids, references that resolve, population
// index ranges, delays >= 1, capacities > 0, a connected cluster whose lead and clock
// exist, and sizes within bounds. Each problem is reported with its location; all problems
// found are thrown together as one config_error.
#include "dnnc/model/model.hpp"

namespace dnnc::model {

void check_network(const network& net);
void check_cluster(const cluster& clu);
void check_run(const run_settings& run, const cluster* clu);
void check_state(const snapshot_state& state, const network& net);
// check_state's checks of one entry's values (finite float32 values; traces ascending and
// before `tick`), added to `problems`.
void check_state_values(const neuron_state& n, std::int64_t tick, std::vector<diagnostic>& problems);
// All of the above for the parts the document has.
void check_document(const document& doc);

}  // namespace dnnc::model
