#pragma once
// Pictures of a finished run (docs/live.md, "Reports and plots"): a raster and population
// rates as SVG from a spikes CSV (t_ms,population,index), and one self-contained HTML report
// with those and the cluster, the partition, the run's summary, its plastic weights'
// histograms and the moves of neurons during it.
#include "dnnc/protocol/status.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dnnc::cli {

// The spikes of a CSV as dnnc run --spikes writes it, population by population in the order
// they first appear.
struct spike_table {
    struct population {
        std::string id;
        std::int64_t size = 0;  // the largest index seen + 1, unless a status said better
        std::vector<double> t_ms;
        std::vector<std::int64_t> index;
    };
    std::vector<population> populations;
    double last_ms = 0;
};

// Throws usage_error (file:line) when `text`, read from `path`, is not such a CSV.
spike_table parse_spike_csv(const std::string& text, const std::string& path);
// The file, read whole within max_file_bytes (read_file), parsed.
spike_table read_spike_csv(const std::string& path);

// At most `per_population` neurons of each population (every k-th), every spike of theirs.
std::string raster_svg(const spike_table& spikes, int per_population = 100);
// Each population's rate (spikes per neuron per second) in bins of `bin_ms`.
std::string rates_svg(const spike_table& spikes, double bin_ms = 10);

// The report: `spikes` may be empty (no recording); `status` the lead's (dnnc status --json
// prints it; none: null), `summary` what dnnc run --json prints (may be null). The weights'
// histograms come from the summary, else from the status, when either has them.
std::string report_html(const spike_table& spikes, const protocol::node_status* status, const nlohmann::json& summary);

}  // namespace dnnc::cli
