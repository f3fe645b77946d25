#include "structure_log.hpp"

#include "dnnc/core/error.hpp"

#include <algorithm>

namespace dnnc::node_server {

using json = nlohmann::json;

structure_log::structure_log(const protocol::resolved_structure& structure) : dt_(structure.dt) {
    for (const auto& g : structure.groups) populations_.push_back(g.population);
}

void structure_log::add(const json& records) {
    for (const auto& r : records) {
        if (!r.is_array() || r.size() != 6 || r.at(1).get<std::size_t>() >= populations_.size())
            throw protocol_error("malformed structure record");
        const auto group = r.at(1).get<std::size_t>();
        rows_.push_back({{"t_ms", static_cast<double>(r.at(0).get<std::int64_t>()) * dt_},
                         {"population", populations_[group]},
                         {"mean_ca", r.at(2).get<double>()},
                         {"connections_in", r.at(3).get<std::uint64_t>()},
                         {"created", r.at(4).get<std::uint64_t>()},
                         {"deleted", r.at(5).get<std::uint64_t>()}});
        if (rows_.size() > max_rows) {
            rows_.pop_front();
            ++first_;
        }
    }
}

json structure_log::read(std::uint64_t from) const {
    json rows = json::array();
    const auto start = std::max(from, first_);
    for (auto k = start; k < first_ + rows_.size() && rows.size() < 100000; ++k) rows.push_back(rows_[k - first_]);
    const auto next = start + rows.size();
    return {{"rows", std::move(rows)}, {"next", next}, {"first", first_}, {"lost", from < first_ ? first_ - from : 0}};
}

json structure_log::recent(std::size_t count) const {
    json rows = json::array();
    for (auto k = rows_.size() - std::min(count, rows_.size()); k < rows_.size(); ++k) rows.push_back(rows_[k]);
    return rows;
}

}  // namespace dnnc::node_server
