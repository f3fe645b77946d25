#include "lead/structure_log.hpp"

#include "dnnc/core/error.hpp"

#include <algorithm>

namespace dnnc::node_server {

using json = nlohmann::json;

structure_log::structure_log(const model::resolved_structure& structure) : dt_(structure.dt) {
    for (const auto& g : structure.groups) populations_.push_back(g.population);
}

void structure_log::add(const json& records) {
    // Checked whole before any row is kept: a bad report changes nothing.
    auto sound = [&](const json& r) {
        return r.is_array() && r.size() == 6 && r[0].is_number_integer() && r[1].is_number_unsigned() &&
               r[1].get<std::uint64_t>() < populations_.size() && r[2].is_number() && r[3].is_number_unsigned() &&
               r[4].is_number_unsigned() && r[5].is_number_unsigned();
    };
    if (!records.is_array() || !std::all_of(records.begin(), records.end(), sound)) throw protocol_error("malformed structure record");
    for (const auto& r : records) {
        rows_.push_back({{"t_ms", static_cast<double>(r[0].get<std::int64_t>()) * dt_},
                         {"population", populations_[r[1].get<std::size_t>()]},
                         {"mean_ca", r[2].get<double>()},
                         {"connections_in", r[3].get<std::uint64_t>()},
                         {"created", r[4].get<std::uint64_t>()},
                         {"deleted", r[5].get<std::uint64_t>()}});
        if (rows_.size() > max_rows) {
            rows_.pop_front();
            ++first_;
        }
    }
}

structure_log structure_log::before(std::int64_t tick) const {
    structure_log kept = *this;
    const double until = static_cast<double>(tick) * dt_;  // as add() computes t_ms
    while (!kept.rows_.empty() && kept.rows_.back()["t_ms"].get<double>() >= until) kept.rows_.pop_back();
    return kept;
}

void structure_log::adopt(const structure_log& earlier) {
    auto rows = earlier.rows_;
    rows.insert(rows.end(), rows_.begin(), rows_.end());
    rows_ = std::move(rows);
    first_ = earlier.first_;
    for (; rows_.size() > max_rows; ++first_) rows_.pop_front();
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
