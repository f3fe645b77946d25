#include "connection_list.hpp"

#include "bytes.hpp"
#include "text.hpp"

#include "dnnc/model/weights_file.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>

namespace dnnc::protocol {
using namespace model;  // the values this codec reads and writes
namespace {

constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(std::string_view bytes) {
    std::string out((bytes.size() + 2) / 3 * 4, '=');
    const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
    char* at = out.data();
    std::size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3, at += 4) {
        const std::uint32_t v = std::uint32_t{in[i]} << 16 | std::uint32_t{in[i + 1]} << 8 | in[i + 2];
        at[0] = alphabet[v >> 18];
        at[1] = alphabet[(v >> 12) & 63];
        at[2] = alphabet[(v >> 6) & 63];
        at[3] = alphabet[v & 63];
    }
    if (const auto left = bytes.size() - i) {  // the last 1 or 2 bytes, padded with '='
        const std::uint32_t v = std::uint32_t{in[i]} << 16 | (left == 2 ? std::uint32_t{in[i + 1]} << 8 : 0);
        at[0] = alphabet[v >> 18];
        at[1] = alphabet[(v >> 12) & 63];
        if (left == 2) at[2] = alphabet[(v >> 6) & 63];
    }
    return out;
}

// Base64 text to bytes; whitespace between the characters is skipped.
std::string unbase64(std::string_view text, const source_location& where) {
    static const auto values = [] {
        std::array<std::int8_t, 256> v{};
        v.fill(-1);
        for (int k = 0; k < 64; ++k) v[static_cast<unsigned char>(alphabet[k])] = static_cast<std::int8_t>(k);
        return v;
    }();
    const auto bad = [&](const char* why) { throw config_error(where, std::string("<connections>: ") + why); };
    std::string out(text.size() / 4 * 3, '\0');
    char* at = out.data();
    std::uint32_t v = 0;
    int have = 0, padding = 0;
    for (const char c : text) {
        const auto k = values[static_cast<unsigned char>(c)];
        if (k >= 0 && padding == 0) {
            v = v << 6 | static_cast<std::uint32_t>(k);
        } else if (c == '=' && have >= 2) {
            ++padding;
            v <<= 6;
        } else if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
            continue;
        } else {
            bad("not base64 text");
        }
        if (++have < 4) continue;
        at[0] = static_cast<char>(v >> 16);
        at[1] = static_cast<char>(v >> 8);
        at[2] = static_cast<char>(v);
        at += 3 - padding;
        v = 0;
        have = 0;
    }
    if (have != 0) bad("base64 text of a length that is not a multiple of 4");
    out.resize(static_cast<std::size_t>(at - out.data()));
    return out;
}

// Checks a file's rows and appends them to a list (unsorted), naming the row at fault.
struct row_checker {
    const std::string& path;
    double dt;
    const source_location& where;
    [[noreturn]] void bad(std::uint64_t row, const std::string& why) const {
        throw config_error(where, "connections file '" + path + "': row " + std::to_string(row) + ": " + why);
    }
    std::uint32_t index(std::uint64_t row, double v, const char* what) const {
        if (!(v >= 0 && v < 4294967296.0 && v == std::floor(v)))
            bad(row, std::string(what) + " " + text_of(v) + " is not a neuron position (a whole number >= 0)");
        return static_cast<std::uint32_t>(v);
    }
    static std::string text_of(double v) { return text::from_double(v); }
    void add(connection_list& out, std::uint64_t row, double source, double target, double weight, double delay_ms) const {
        out.sources.push_back(index(row, source, "source"));
        out.targets.push_back(index(row, target, "target"));
        if (!std::isfinite(weight)) bad(row, "weight " + text_of(weight) + " is not a finite number");
        out.weights.push_back(static_cast<float>(weight));
        if (!std::isfinite(delay_ms)) bad(row, "delay " + text_of(delay_ms) + " ms is not a finite number");
        const std::int64_t ticks = ticks_of_ms(delay_ms, dt);
        if (ticks < 1) bad(row, "delay " + text_of(delay_ms) + " ms is below one tick (dt " + text_of(dt) + " ms)");
        if (ticks > 65535) bad(row, "delay " + text_of(delay_ms) + " ms is above 65535 ticks (dt " + text_of(dt) + " ms)");
        out.delays.push_back(static_cast<std::uint16_t>(ticks));
    }
};

// Sorts a list by target, stably (see connection_list).
void sort_by_target(connection_list& list) {
    if (std::is_sorted(list.targets.begin(), list.targets.end())) return;
    std::vector<std::uint32_t> order(list.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return list.targets[a] < list.targets[b]; });
    connection_list sorted;
    sorted.sources.reserve(order.size());
    sorted.targets.reserve(order.size());
    sorted.weights.reserve(order.size());
    sorted.delays.reserve(order.size());
    for (const auto k : order) {
        sorted.sources.push_back(list.sources[k]);
        sorted.targets.push_back(list.targets[k]);
        sorted.weights.push_back(list.weights[k]);
        sorted.delays.push_back(list.delays[k]);
    }
    list = std::move(sorted);
}

template <typename Real>
void read_rows(std::ifstream& in, std::uint64_t rows, const row_checker& check, connection_list& out) {
    constexpr std::uint64_t chunk = 65536;  // rows read at a time
    std::vector<Real> values(chunk * 4);
    for (std::uint64_t first = 0; first < rows; first += chunk) {
        const std::uint64_t n = std::min(chunk, rows - first);
        if (!in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(n * 4 * sizeof(Real))))
            throw config_error(check.where, "connections file '" + check.path + "' is truncated: expected " + std::to_string(rows) + " rows");
        for (std::uint64_t k = 0; k < n; ++k) {
            const Real* v = values.data() + 4 * k;
            check.add(out, first + k, v[0], v[1], v[2], v[3]);
        }
    }
}

}  // namespace

connection_list read_connections_file(const std::string& path, double dt, const source_location& where) {
    static_assert(max_listed_connections < (std::uint64_t{1} << 32));
    std::ifstream in(path, std::ios::binary);
    if (!in || !std::filesystem::is_regular_file(path)) throw config_error(where, "cannot open connections file '" + path + "'");
    const auto bad = [&](const std::string& why) { throw config_error(where, "connections file '" + path + "': " + why); };
    const npy_header header = read_npy_header(in, path, "connections file", where);
    if (header.descr != "<f8" && header.descr != "<f4")
        bad("dtype must be little-endian float64 ('<f8') or float32 ('<f4'), not '" + header.descr + "'");
    if (header.shape.size() != 2 || header.shape[1] != 4)
        bad("must hold a 2-D array of 4 columns (source, target, weight, delay in ms), one row per connection");
    const std::uint64_t rows = header.shape[0];
    // No more connections than a network may have synapses (which also keeps row numbers
    // within the 32 bits sort_by_target counts in).
    if (rows > max_listed_connections)
        bad(std::to_string(rows) + " rows; a list may hold at most " + std::to_string(max_listed_connections) + " connections");
    const std::uint64_t row_bytes = 4 * (header.descr == "<f8" ? 8 : 4);
    // The data must be exactly the rows the header declares: checked before anything is
    // allocated, so that a header cannot claim more than the file holds.
    const auto data = std::filesystem::file_size(path) - static_cast<std::uint64_t>(in.tellg());
    if (data / row_bytes != rows || data % row_bytes != 0)
        bad("holds " + std::to_string(data) + " bytes of data for the " + std::to_string(rows) + " rows its header declares");
    connection_list list;
    list.sources.reserve(rows);
    list.targets.reserve(rows);
    list.weights.reserve(rows);
    list.delays.reserve(rows);
    const row_checker check{path, dt, where};
    if (header.descr == "<f8")
        read_rows<double>(in, rows, check, list);
    else
        read_rows<float>(in, rows, check, list);
    sort_by_target(list);
    return list;
}

std::string encode_connections(const connection_list& list) {
    std::string bytes;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> runs;
    for (std::size_t k = 0; k < list.size(); ++k) {
        if (runs.empty() || runs.back().first != list.targets[k]) runs.push_back({list.targets[k], 0});
        ++runs.back().second;
    }
    bytes.reserve(4 + 8 * runs.size() + 10 * list.size());
    put(bytes, static_cast<std::uint32_t>(runs.size()));
    for (const auto& [target, count] : runs) {
        put(bytes, target);
        put(bytes, count);
    }
    bytes.append(reinterpret_cast<const char*>(list.sources.data()), 4 * list.size());
    bytes.append(reinterpret_cast<const char*>(list.weights.data()), 4 * list.size());
    bytes.append(reinterpret_cast<const char*>(list.delays.data()), 2 * list.size());
    return base64(bytes);
}

connection_list decode_connections(std::string_view text, const source_location& where) {
    const std::string bytes = unbase64(text, where);
    const auto bad = [&](const std::string& why) { throw config_error(where, "<connections>: " + why); };
    if (bytes.size() < 4) bad("shorter than its run count");
    byte_reader in(bytes, "connections");
    const auto runs = in.get<std::uint32_t>();
    if (runs > in.left() / 8) bad("shorter than its " + std::to_string(runs) + " runs");
    connection_list list;
    std::uint64_t total = 0;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> targets(runs);
    for (std::size_t r = 0; r < targets.size(); ++r) {
        auto& [target, count] = targets[r];
        target = in.get<std::uint32_t>();
        count = in.get<std::uint32_t>();
        if (count == 0) bad("a run of no connections");
        if (r > 0 && target <= targets[r - 1].first) bad("targets not strictly ascending");
        total += count;
    }
    if (in.left() != 10 * total)
        bad(std::to_string(in.left()) + " bytes for the " + std::to_string(total) + " connections of its runs (10 bytes each)");
    list.targets.reserve(total);
    for (const auto& [target, count] : targets) list.targets.insert(list.targets.end(), count, target);
    const auto column = [&](auto& values) {
        values.resize(total);
        const auto raw = in.take(total * sizeof(values[0]));
        std::memcpy(values.data(), raw.data(), raw.size());
    };
    column(list.sources);
    column(list.weights);
    column(list.delays);
    for (std::uint64_t k = 0; k < total; ++k) {
        if (!std::isfinite(list.weights[k])) bad("connection " + std::to_string(k) + ": a weight that is not a finite number");
        if (list.delays[k] == 0) bad("connection " + std::to_string(k) + ": a delay of 0 ticks");
    }
    return list;
}

}  // namespace dnnc::protocol
