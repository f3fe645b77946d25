#include "dnnc/protocol/csv.hpp"

#include "dnnc/core/files.hpp"
#include "text.hpp"

#include <algorithm>
#include <map>
#include <cmath>
#include <cstdio>
#include <tuple>

namespace dnnc::protocol {
using namespace model;  // the values this codec reads and writes

namespace {

// A CSV field without its surrounding blanks and the column (1-based) it starts at.
struct field {
    std::string text;
    int column;
};

// Calls each_line(line, fields) for every non-blank line of `text` in order, and
// problem(line, column, message) collects located problems; stops after 50 of them.
// Throws them all at the end, or for a file without a single line.
class csv_lines {
public:
    explicit csv_lines(std::string file) : file_(std::move(file)) {}

    template <typename EachLine>
    void read(std::string_view text, const char* header, EachLine each_line) {
        std::size_t start = 0;
        bool any = false;
        while (start <= text.size() && problems_.size() < 50) {
            const auto end = std::min(text.find('\n', start), text.size());
            std::string_view raw = text.substr(start, end - start);
            start = end + 1;
            ++line_;
            if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
            if (raw.find_first_not_of(" \t") == std::string_view::npos) continue;
            any = true;
            std::vector<field> fields;
            std::size_t f = 0;
            while (true) {
                const auto comma = raw.find(',', f);
                std::string text_of_field(raw.substr(f, comma == std::string_view::npos ? std::string_view::npos : comma - f));
                const auto first = text_of_field.find_first_not_of(" \t");
                const auto last = text_of_field.find_last_not_of(" \t");
                fields.push_back({first == std::string::npos ? std::string() : text_of_field.substr(first, last - first + 1),
                                  static_cast<int>(f) + 1});
                if (comma == std::string_view::npos) break;
                f = comma + 1;
            }
            each_line(fields);
        }
        if (!any)
            throw config_error(source_location{file_, 1, 1}, std::string("the file is empty; it needs the header `") + header + "`");
        if (!problems_.empty()) throw config_error(std::move(problems_));
    }

    void problem(int column, const std::string& message) {
        problems_.push_back({source_location{file_, line_, column}, message});
    }
    source_location here() const { return {file_, line_, 1}; }

private:
    std::string file_;
    int line_ = 0;
    std::vector<diagnostic> problems_;
};

}  // namespace

std::vector<input_row> parse_input_csv(std::string_view text, const std::string& file) {
    std::vector<input_row> rows;
    csv_lines lines(file);
    bool header_seen = false, with_lane = false;
    lines.read(text, "tick,target,value", [&](const std::vector<field>& fields) {
        if (!header_seen) {
            header_seen = true;
            with_lane = fields.size() == 4 && fields[3].text == "lane";
            if ((fields.size() != 3 && !with_lane) || fields[0].text != "tick" || fields[1].text != "target" ||
                fields[2].text != "value")
                lines.problem(1, "the header must be `tick,target,value` or `tick,target,value,lane`");
            return;
        }
        if (fields.size() != (with_lane ? 4u : 3u)) {
            lines.problem(1, std::string("expected ") + (with_lane ? "4 fields (tick,target,value,lane)" : "3 fields (tick,target,value)") +
                                 ", found " + std::to_string(fields.size()));
            return;
        }
        input_row row;
        row.where = lines.here();
        const auto tick = text::to_int64(fields[0].text);
        if (!tick || *tick < 0)
            lines.problem(fields[0].column, "tick '" + fields[0].text + "' is not a whole number >= 0");
        else
            row.tick = *tick;
        row.target = fields[1].text;
        if (row.target.empty()) lines.problem(fields[1].column, "the target is empty");
        const auto value = text::to_double(fields[2].text);
        if (!value || !std::isfinite(*value))
            lines.problem(fields[2].column, "value '" + fields[2].text + "' is not a finite number");
        else
            row.value = static_cast<float>(*value);
        if (with_lane) {
            const auto lane = text::to_int64(fields[3].text);
            if (!lane || *lane < 0)
                lines.problem(fields[3].column, "lane '" + fields[3].text + "' is not a whole number >= 0");
            else
                row.lane = *lane;
        }
        rows.push_back(std::move(row));
    });
    return rows;
}

std::vector<input_row> read_input_csv(const std::string& path) { return parse_input_csv(read_file(path, max_input_csv_bytes), path); }

std::optional<std::string> spike_time_problem(double t_ms, std::int64_t index, std::int64_t size, double dt) {
    // Ticks stay exact in a double and far from the end of the clock.
    constexpr double last_tick = 9.0e15;
    if (!(std::isfinite(t_ms) && t_ms >= 0)) return "a spike time must be a finite number of ms >= 0";
    if (t_ms / dt > last_tick) return "a spike time of " + text::from_double(t_ms) + " ms lies beyond the last tick";
    if (index < 0 || index >= size)
        return "index " + std::to_string(index) + " is out of range; the spike source has " + std::to_string(size) + " members";
    return std::nullopt;
}

std::vector<spike_time> parse_spike_times_csv(std::string_view text, const std::string& file, std::int64_t size, double dt) {
    std::vector<spike_time> spikes;
    csv_lines lines(file);
    bool header_seen = false;
    lines.read(text, "t_ms,index", [&](const std::vector<field>& fields) {
        if (!header_seen) {
            header_seen = true;
            if (fields.size() != 2 || fields[0].text != "t_ms" || fields[1].text != "index")
                lines.problem(1, "the header must be `t_ms,index`");
            return;
        }
        if (fields.size() != 2) return lines.problem(1, "expected 2 fields (t_ms,index), found " + std::to_string(fields.size()));
        const auto t_ms = text::to_double(fields[0].text);
        const auto index = text::to_int64(fields[1].text);
        if (!t_ms) return lines.problem(fields[0].column, "t_ms '" + fields[0].text + "' is not a number");
        if (!index) return lines.problem(fields[1].column, "index '" + fields[1].text + "' is not a whole number");
        if (const auto why = spike_time_problem(*t_ms, *index, size, dt))
            return lines.problem(fields[why->rfind("index", 0) == 0 ? 1 : 0].column, *why);
        if (spikes.size() == max_listed_spikes)
            return lines.problem(1, "more than " + std::to_string(max_listed_spikes) + " spikes");
        spikes.push_back({*index, ticks_of_ms(*t_ms, dt)});
    });
    return spikes;
}

std::vector<spike_time> read_spike_times_csv(const std::string& path, std::int64_t size, double dt) {
    return parse_spike_times_csv(read_file(path), path, size, dt);
}

void sort_spikes(std::vector<spike_time>& spikes) {
    std::sort(spikes.begin(), spikes.end(),
              [](const spike_time& a, const spike_time& b) { return std::tie(a.tick, a.index) < std::tie(b.tick, b.index); });
}

void check_input_lanes(const std::vector<input_row>& rows, std::int64_t batch) {
    std::vector<diagnostic> problems;
    for (const auto& r : rows)
        if (r.lane >= batch && problems.size() < 50)
            problems.push_back({r.where, "lane " + std::to_string(r.lane) + " is out of range; the run has batch " +
                                             std::to_string(batch)});
    if (!problems.empty()) throw config_error(std::move(problems));
}

std::string output_csv_header(const std::vector<std::string>& columns, std::int64_t batch) {
    std::string out = batch > 1 ? "tick,lane" : "tick";
    for (const auto& c : columns) out += "," + c;
    return out + "\n";
}

std::vector<std::size_t> output_values_from(const std::vector<std::string>& from, const std::vector<std::string>& to,
                                            std::int64_t batch) {
    std::map<std::string, std::vector<std::size_t>> columns_of;
    for (std::size_t c = 0; c < from.size(); ++c) columns_of[from[c]].push_back(c);
    std::map<std::string, std::size_t> taken;
    std::vector<std::size_t> column;
    for (const auto& name : to) {
        const auto it = columns_of.find(name);
        const auto k = taken[name]++;
        column.push_back(it != columns_of.end() && k < it->second.size() ? it->second[k] : no_column);
    }
    std::vector<std::size_t> values;
    for (std::size_t lane = 0; lane < static_cast<std::size_t>(std::max<std::int64_t>(batch, 1)); ++lane)
        for (const auto c : column) values.push_back(c == no_column ? c : lane * from.size() + c);
    return values;
}

std::string output_csv_row(std::int64_t tick, const std::vector<float>& values, std::int64_t batch) {
    const auto lanes = static_cast<std::size_t>(std::max<std::int64_t>(batch, 1));
    const std::size_t width = values.size() / lanes;
    std::string out;
    char buffer[32];
    for (std::size_t lane = 0; lane < lanes; ++lane) {
        out += std::to_string(tick);
        if (batch > 1) out += "," + std::to_string(lane);
        for (std::size_t c = 0; c < width; ++c) {
            std::snprintf(buffer, sizeof buffer, ",%.9g", static_cast<double>(values[lane * width + c]));
            out += buffer;
        }
        out += "\n";
    }
    return out;
}

std::string spike_csv_header() { return "t_ms,population,index\n"; }

namespace {
std::string ms_of_tick(std::int64_t tick, double dt_ms) {
    char t_ms[32];
    std::snprintf(t_ms, sizeof t_ms, "%.10g", static_cast<double>(tick) * dt_ms);
    return t_ms;
}
}  // namespace

std::string spike_csv_row(std::int64_t tick, double dt_ms, const std::string& population, std::uint64_t index) {
    return ms_of_tick(tick, dt_ms) + "," + population + "," + std::to_string(index) + "\n";
}

std::string sample_csv_header() { return "t_ms,population,index,variable,value\n"; }

std::string sample_csv_row(std::int64_t m, double dt_ms, const std::string& population, std::int64_t index,
                           const std::string& variable, float value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", static_cast<double>(value));
    return ms_of_tick(m, dt_ms) + "," + population + "," + std::to_string(index) + "," + variable + "," + text + "\n";
}

}  // namespace dnnc::protocol
