#pragma once
// The output rows the lead holds for clients to read (private to dnnc_node_server): the
// newest rows within a memory budget, the oldest dropped first and counted, so that a
// free-running network keeps the lead's memory flat however long it runs.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace dnnc::node_server {

class output_rows {
public:
    // Rows of `width` values; the first row pushed is tick `first_tick`. At least one row is
    // held whatever the budget.
    output_rows(std::size_t width, std::int64_t first_tick, std::size_t max_bytes);

    // Appends the row of tick end(); drops the oldest rows beyond the budget.
    void push(std::vector<float> row);
    // Held rows are the ticks [first(), end()).
    std::int64_t first() const { return end_ - static_cast<std::int64_t>(held()); }
    std::int64_t end() const { return end_; }
    // The first row's tick: rows [start(), first()) were dropped for the budget.
    std::int64_t start() const { return start_; }
    std::int64_t dropped() const { return first() - start_; }
    std::size_t width() const { return width_; }
    std::size_t capacity() const { return capacity_; }
    // The values of a held row: first() <= tick < end().
    std::vector<float> row(std::int64_t tick) const;

    // The held rows of ticks before `tick`, as rows of their own (a recovery keeps them).
    output_rows before(std::int64_t tick) const;
    // Drops every held row and goes on at `tick` (>= end()): the rows between count as
    // dropped.
    void skip_to(std::int64_t tick);
    // The held rows laid out anew (protocol::output_values_from): value j of a row is value
    // from[j] of the row here, or 0 where from[j] is protocol::no_column (a row of
    // from.size() values), within the same bytes.
    output_rows remapped(const std::vector<std::size_t>& from) const;
    // Puts `earlier` in front of the held rows; it must end where these begin (end() ==
    // first()), and this must hold no row yet.
    void adopt(const output_rows& earlier);

private:
    std::size_t held() const { return width_ == 0 ? held_empty_ : values_.size() / width_; }

    std::size_t width_;
    std::size_t capacity_;  // rows
    std::int64_t start_, end_;
    std::size_t held_empty_ = 0;  // rows of no values held (width 0)
    std::deque<float> values_;    // held rows, oldest first
};

// The held rows of ticks [from, through] as [[tick, values...]...] (from first() on; through
// below end()), at most about a million values: a reply is bounded like a frame, and a
// client asks again from the next tick.
nlohmann::json rows_json(const output_rows& rows, std::int64_t from, std::int64_t through);

}  // namespace dnnc::node_server
