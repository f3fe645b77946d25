#include "lead/output_rows.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/protocol/csv.hpp"

#include <algorithm>

namespace dnnc::node_server {

output_rows::output_rows(std::size_t width, std::int64_t first_tick, std::size_t max_bytes)
    : width_(width),
      capacity_(std::max<std::size_t>(1, max_bytes / (sizeof(float) * std::max<std::size_t>(1, width)))),
      start_(first_tick),
      end_(first_tick) {}

void output_rows::push(std::vector<float> row) {
    if (row.size() != width_) throw error("an output row of " + std::to_string(row.size()) + " values for " + std::to_string(width_) + " columns");
    values_.insert(values_.end(), row.begin(), row.end());
    if (width_ == 0) ++held_empty_;
    ++end_;
    if (held() > capacity_) {
        values_.erase(values_.begin(), values_.begin() + static_cast<std::ptrdiff_t>(width_));
        if (width_ == 0) --held_empty_;
    }
}

std::vector<float> output_rows::row(std::int64_t tick) const {
    if (tick < first() || tick >= end_) throw error("output row of tick " + std::to_string(tick) + " is not held");
    const auto at = values_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(tick - first()) * width_);
    return {at, at + static_cast<std::ptrdiff_t>(width_)};
}

void output_rows::skip_to(std::int64_t tick) {
    if (tick < end_) throw error("cannot skip back from tick " + std::to_string(end_) + " to " + std::to_string(tick));
    values_.clear();
    held_empty_ = 0;
    end_ = tick;
}

output_rows output_rows::before(std::int64_t tick) const {
    const std::int64_t last = std::clamp(tick, first(), end_);
    output_rows out(width_, first(), capacity_ * sizeof(float) * std::max<std::size_t>(1, width_));
    for (std::int64_t t = first(); t < last; ++t) out.push(row(t));
    out.start_ = start_;
    return out;
}

output_rows output_rows::remapped(const std::vector<std::size_t>& from) const {
    output_rows out(from.size(), first(), capacity_ * sizeof(float) * std::max<std::size_t>(1, width_));  // the same bytes
    for (std::int64_t t = first(); t < end_; ++t) {
        const auto old = row(t);
        std::vector<float> values(from.size(), 0.0f);
        for (std::size_t j = 0; j < from.size(); ++j)
            if (from[j] != protocol::no_column) values[j] = old.at(from[j]);
        out.push(std::move(values));
    }
    out.start_ = start_;
    return out;
}

void output_rows::adopt(const output_rows& earlier) {
    if (held() != 0 || earlier.end() != end_ || earlier.width_ != width_)
        throw error("cannot adopt output rows of ticks " + std::to_string(earlier.first()) + ".." + std::to_string(earlier.end() - 1) +
                    " before tick " + std::to_string(end_));
    const std::int64_t end = end_;
    start_ = earlier.start_;
    end_ = earlier.first();
    for (std::int64_t t = earlier.first(); t < end; ++t) push(earlier.row(t));
}

nlohmann::json rows_json(const output_rows& rows, std::int64_t from, std::int64_t through) {
    auto out = nlohmann::json::array();
    const std::size_t max_rows = std::max<std::size_t>(1, std::min<std::size_t>(100000, 1000000 / (rows.width() + 1)));
    for (auto t = std::max(from, rows.first()); t <= through && out.size() < max_rows; ++t) {
        auto row = nlohmann::json::array({t});
        for (float v : rows.row(t)) row.push_back(v);
        out.push_back(std::move(row));
    }
    return out;
}

}  // namespace dnnc::node_server
