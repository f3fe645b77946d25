#include "weight_bins.hpp"

#include "dnnc/core/error.hpp"

#include <cmath>

namespace dnnc::node_server {

using json = nlohmann::json;

json weight_bins_request(const weight_groups& wanted) {
    json groups = json::array();
    for (std::size_t k = 0; k < wanted.histograms.size(); ++k)
        groups.push_back({wanted.histograms[k].lo, wanted.histograms[k].hi, wanted.elements[k]});
    return {{"bins", wanted.histograms.empty() ? 0 : wanted.histograms.front().bins.size()}, {"groups", groups}};
}

weight_groups parse_weight_bins_request(const json& request) {
    const auto bins = request.at("bins").get<std::size_t>();
    const auto& groups = request.at("groups");
    if (bins > max_weight_bins || (bins > 0 && groups.size() > max_weight_bins / bins))
        throw protocol_error("weight bins: at most " + std::to_string(max_weight_bins) + " bins in all");
    weight_groups wanted;
    for (const auto& g : groups) {
        sim::weight_histogram h;
        h.lo = g.at(0).get<double>();
        h.hi = g.at(1).get<double>();
        if (!std::isfinite(h.lo) || !std::isfinite(h.hi) || h.lo > h.hi) throw protocol_error("weight bins: a range must be finite, lo <= hi");
        h.bins.assign(bins, 0);
        wanted.histograms.push_back(std::move(h));
        wanted.elements.push_back(g.at(2).get<std::vector<std::size_t>>());
    }
    return wanted;
}

json weight_bins_reply(const std::vector<sim::weight_histogram>& binned) {
    json groups = json::array();
    for (const auto& h : binned) groups.push_back({h.count, h.count ? json(h.min) : json(), h.count ? json(h.max) : json(), h.bins});
    return {{"groups", groups}};
}

void add_weight_bins_reply(const json& reply, std::vector<sim::weight_histogram>& total) {
    const auto& groups = reply.at("groups");
    if (groups.size() != total.size()) throw protocol_error("weight bins: a node answered for other groups than asked");
    for (std::size_t k = 0; k < total.size(); ++k) {
        const auto& g = groups[k];
        sim::weight_histogram h;
        h.lo = total[k].lo;
        h.hi = total[k].hi;
        h.count = g.at(0).get<std::uint64_t>();
        if (h.count > 0) {
            h.min = g.at(1).get<float>();
            h.max = g.at(2).get<float>();
        }
        h.bins = g.at(3).get<std::vector<std::uint64_t>>();
        total[k].merge(h);
    }
}

}  // namespace dnnc::node_server
