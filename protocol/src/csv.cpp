#include "dnnc/protocol/csv.hpp"

#include "text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace dnnc::protocol {

std::vector<input_row> parse_input_csv(std::string_view text, const std::string& file) {
    std::vector<input_row> rows;
    std::vector<diagnostic> problems;
    std::size_t start = 0;
    int line = 0;
    bool header_seen = false, with_lane = false;
    while (start <= text.size()) {
        const auto end = std::min(text.find('\n', start), text.size());
        std::string_view raw = text.substr(start, end - start);
        start = end + 1;
        ++line;
        if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
        if (raw.find_first_not_of(" \t") == std::string_view::npos) {
            if (end == text.size()) break;
            continue;
        }
        // Split into fields, remembering where each starts (1-based columns).
        std::vector<std::pair<std::string, int>> fields;
        std::size_t f = 0;
        while (true) {
            const auto comma = raw.find(',', f);
            std::string field(raw.substr(f, comma == std::string_view::npos ? std::string_view::npos : comma - f));
            const auto first = field.find_first_not_of(" \t");
            const auto last = field.find_last_not_of(" \t");
            field = first == std::string::npos ? std::string() : field.substr(first, last - first + 1);
            fields.emplace_back(field, static_cast<int>(f) + 1);
            if (comma == std::string_view::npos) break;
            f = comma + 1;
        }
        auto problem = [&](int column, const std::string& message) {
            diagnostic d;
            d.where = source_location{file, line, column};
            d.message = message;
            problems.push_back(std::move(d));
        };
        if (!header_seen) {
            header_seen = true;
            with_lane = fields.size() == 4 && fields[3].first == "lane";
            if ((fields.size() != 3 && !with_lane) || fields[0].first != "tick" || fields[1].first != "target" ||
                fields[2].first != "value")
                problem(1, "the header must be `tick,target,value` or `tick,target,value,lane`");
            continue;
        }
        if (fields.size() != (with_lane ? 4u : 3u)) {
            problem(1, std::string("expected ") + (with_lane ? "4 fields (tick,target,value,lane)" : "3 fields (tick,target,value)") +
                           ", found " + std::to_string(fields.size()));
            continue;
        }
        input_row row;
        row.where = {file, line, 1};
        const auto tick = text::to_int64(fields[0].first);
        if (!tick || *tick < 0)
            problem(fields[0].second, "tick '" + fields[0].first + "' is not a whole number >= 0");
        else
            row.tick = *tick;
        row.target = fields[1].first;
        if (row.target.empty()) problem(fields[1].second, "the target is empty");
        const auto value = text::to_double(fields[2].first);
        if (!value || !std::isfinite(*value))
            problem(fields[2].second, "value '" + fields[2].first + "' is not a finite number");
        else
            row.value = static_cast<float>(*value);
        if (with_lane) {
            const auto lane = text::to_int64(fields[3].first);
            if (!lane || *lane < 0)
                problem(fields[3].second, "lane '" + fields[3].first + "' is not a whole number >= 0");
            else
                row.lane = *lane;
        }
        rows.push_back(std::move(row));
        if (problems.size() >= 50) break;
    }
    if (!header_seen) throw config_error(source_location{file, 1, 1}, "the file is empty; it needs the header `tick,target,value`");
    if (!problems.empty()) throw config_error(std::move(problems));
    return rows;
}

std::vector<input_row> read_input_csv(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw config_error({path, 0, 0}, "cannot open the file");
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_input_csv(ss.str(), path);
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

std::string spike_csv_row(std::int64_t tick, double dt_ms, const std::string& population, std::uint64_t index) {
    char t_ms[32];
    std::snprintf(t_ms, sizeof t_ms, "%.10g", static_cast<double>(tick) * dt_ms);
    return std::string(t_ms) + "," + population + "," + std::to_string(index) + "\n";
}

}  // namespace dnnc::protocol
