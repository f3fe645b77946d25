#pragma once
// One neuron's state in bytes (snapshot.hpp gives the layout), shared by the in-memory codecs
// and the snapshot files read and written a neuron at a time. A reader is anything with
// get<T>() and left() (the bytes it still holds): byte_reader, or a file's.
#include "bytes.hpp"
#include "dnnc/model/check.hpp"
#include "dnnc/protocol/snapshot.hpp"
#include "dnnc/protocol/xml.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

namespace dnnc::protocol {

inline void put_state(std::string& out, const indexed_state& s) {
    if (s.variables.size() > 255 || s.history.size() > 65535 || s.traces.size() > 255) throw protocol_error("neuron state too large");
    put<std::uint32_t>(out, static_cast<std::uint32_t>(s.index));
    put<float>(out, s.output);
    put<std::uint8_t>(out, static_cast<std::uint8_t>(s.variables.size()));
    for (float v : s.variables) put<float>(out, v);
    put<std::uint16_t>(out, static_cast<std::uint16_t>(s.history.size()));
    for (float v : s.history) put<float>(out, v);
    put<std::uint8_t>(out, static_cast<std::uint8_t>(s.traces.size()));
    for (const auto& t : s.traces) {
        if (t.ticks.size() != t.values.size() || t.ticks.size() > std::numeric_limits<std::uint32_t>::max())
            throw protocol_error("malformed trace");
        put<double>(out, t.tau);
        put<std::uint8_t>(out, t.post ? 1 : 0);
        put<std::uint32_t>(out, static_cast<std::uint32_t>(t.ticks.size()));
        for (std::size_t k = 0; k < t.ticks.size(); ++k) {
            put<std::int64_t>(out, t.ticks[k]);
            put<double>(out, t.values[k]);
        }
    }
    put<std::uint64_t>(out, s.synapses.size());
    for (float v : s.synapses) put<float>(out, v);
    if (s.growth.size() > std::numeric_limits<std::uint32_t>::max()) throw protocol_error("neuron state too large");
    put<std::uint32_t>(out, static_cast<std::uint32_t>(s.growth.size()));
    for (double v : s.growth) put<double>(out, v);
}

// A count of items of `bytes` bytes each that the rest of `r` cannot hold is damage: refused
// before anything is allocated for it.
template <typename T, typename Reader>
std::size_t count_within(Reader& r, std::size_t bytes) {
    const auto n = r.template get<T>();
    if (n > r.left() / bytes) throw protocol_error("impossible count");
    return static_cast<std::size_t>(n);
}

// `format`: the snapshot format the state was written in (snapshot_format on the wire):
// traces and synapse values from format 3 on, growth from format 4 on.
template <typename Reader>
indexed_state get_state(Reader& r, std::uint32_t format) {
    indexed_state s;
    s.index = r.template get<std::uint32_t>();
    s.output = r.template get<float>();
    s.variables.resize(r.template get<std::uint8_t>());
    for (auto& v : s.variables) v = r.template get<float>();
    s.history.resize(r.template get<std::uint16_t>());
    for (auto& v : s.history) v = r.template get<float>();
    if (format < 3) return s;
    s.traces.resize(r.template get<std::uint8_t>());
    for (auto& t : s.traces) {
        t.tau = r.template get<double>();
        const auto post = r.template get<std::uint8_t>();
        if (post > 1) throw protocol_error("trace side must be 0 (pre) or 1 (post)");
        t.post = post == 1;
        const auto n = count_within<std::uint32_t>(r, 16);
        t.ticks.resize(n);
        t.values.resize(n);
        for (std::size_t k = 0; k < n; ++k) {
            t.ticks[k] = r.template get<std::int64_t>();
            t.values[k] = r.template get<double>();
        }
    }
    s.synapses.resize(count_within<std::uint64_t>(r, 4));
    for (auto& v : s.synapses) v = r.template get<float>();
    if (format < 4) return s;
    s.growth.resize(count_within<std::uint32_t>(r, 8));
    for (auto& v : s.growth) v = r.template get<double>();
    return s;
}

// A state takes at least 11 bytes (index, output, the counts of variables and history; 20
// with the plastic part's counts from format 3 on, 24 with growth's from format 4 on): a
// count of states the bytes left cannot hold is damage, and so is a network with far more
// neurons than states, before it is numbered (a few bytes may claim 10^8 neurons); the state
// checks name each neuron missing or given twice.
inline void check_state_count(std::uint64_t count, std::uint64_t left, std::uint32_t format, std::uint64_t neurons) {
    if (count > left / (format >= 4 ? 24 : format >= 3 ? 20 : 11)) throw protocol_error("impossible neuron count");
    constexpr std::uint64_t named_missing = 65536;  // at most this many missing states are named one by one
    if (neurons > count + named_missing)
        throw protocol_error("it holds " + std::to_string(count) + " neuron states for a network of " + std::to_string(neurons) + " neurons");
}

inline constexpr char snapshot_magic[8] = {'D', 'N', 'N', 'C', 'S', 'N', 'A', 'P'};
// Format 2: random projections draw one stream per target row. A format-1 snapshot's
// network would expand to other synapses than those its states were computed with.
// Format 3: a neuron's state also holds its traces and its plastic synapses' state.
// Format 4: and its growth (structural plasticity).
inline constexpr std::uint32_t snapshot_format = 4;

struct snapshot_head {
    std::uint32_t version;
    model::document doc;  // its network checked (check_network), so that it can be expanded
};

// What follows the magic, up to the states: the format and the document without its state.
// Throws config_error naming `file`, or protocol_error for damage.
template <typename Reader>
snapshot_head read_snapshot_head(Reader& r, const std::string& file, const file_access& access) {
    const auto version = r.template get<std::uint32_t>();
    if (version == 1)
        throw config_error({file, 0, 0}, "snapshot format 1, written before random projections drew one stream per "
                                         "target: its network would expand to other synapses; it cannot be restored");
    if (version < 2 || version > snapshot_format) throw protocol_error("unsupported format " + std::to_string(version));
    const auto length = r.template get<std::uint64_t>();
    if (length > r.left()) throw protocol_error("impossible document length");
    model::document doc = parse_document(r.take(static_cast<std::size_t>(length)), file, access);
    doc.file = file;
    if (!doc.net) throw protocol_error("no network");
    // Expansion trusts its network's ids and sizes: a snapshot's are checked first.
    check_network(*doc.net);
    return {version, std::move(doc)};
}

}  // namespace dnnc::protocol
