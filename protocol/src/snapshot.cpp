#include "dnnc/protocol/snapshot.hpp"

#include "bytes.hpp"
#include "dnnc/protocol/check.hpp"
#include "dnnc/protocol/frame.hpp"
#include "dnnc/protocol/rows.hpp"
#include "dnnc/protocol/xml.hpp"
#include "text.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <unistd.h>

namespace dnnc::protocol {
namespace {

constexpr char magic[8] = {'D', 'N', 'N', 'C', 'S', 'N', 'A', 'P'};
// Format 2: random projections draw one stream per target row. A format-1 snapshot's
// network would expand to other synapses than those its states were computed with.
// Format 3: a neuron's state also holds its traces and its plastic synapses' state.
constexpr std::uint32_t format = 3;

// The most ticks a neuron with parameters `p` stays refractory (the engine counts down from
// it, and keeps the count in an int32).
double refractory_period(const neuron_params& p, double dt) {
    const double ticks = p.model == neuron_model::lif ? p.refractory : static_cast<double>(std::llround(p.iaf.t_ref / dt));
    return std::min(ticks, static_cast<double>(std::numeric_limits<std::int32_t>::max()));
}

// Why `value`, an output of a neuron of model `m` (now or in its history), is not one that
// model produces; nullptr when it is.
const char* output_problem(neuron_model m, double value) {
    switch (m) {
    case neuron_model::linear: return nullptr;
    case neuron_model::sigmoid: return value >= 0 && value <= 1 ? nullptr : "must lie in 0..1 (sigmoid)";
    case neuron_model::tanh: return value >= -1 && value <= 1 ? nullptr : "must lie in -1..1 (tanh)";
    case neuron_model::relu: return value >= 0 ? nullptr : "must be >= 0 (relu)";
    default: return value == 0 || value == 1 ? nullptr : "must be 0 or 1 (a spike or none)";
    }
}

// What is wrong with the values of `n`, a neuron with parameters `p`, against its model:
// every output in the model's range, conductances >= 0, an adaptation current w within
// NEST's bound, the refractory count a whole number of ticks within the neuron's refractory
// period. (Finite float32 values are check_state's.)
void check_against_model(const neuron_state& n, const neuron_params& p, double dt, std::vector<diagnostic>& problems) {
    for (std::size_t k = 0; k <= n.history.size(); ++k) {
        const double y = k == 0 ? n.output : n.history[k - 1];
        if (const char* why = output_problem(p.model, y)) {
            problems.push_back({n.where, "state of '" + n.id + "': " + (k == 0 ? std::string("the output ") : "history value " + std::to_string(k) + " ") +
                                             text::from_double(y) + " " + why});
            return;
        }
    }
    const auto& names = state_variable_names(p.model);
    if (n.state.size() != names.size()) return;
    for (std::size_t k = 0; k < names.size(); ++k) {
        const double value = n.state[k];
        const char* why = (names[k] == "g_ex" || names[k] == "g_in") && !(value >= 0) ? "must be >= 0 (nS)"
                          : names[k] == "w" && !(std::abs(value) <= 1e6)
                              ? "must lie in -1e6..1e6 pA (where NEST's aeif_cond_exp stops as numerically unstable)"
                              : nullptr;
        if (why) problems.push_back({n.where, "state of '" + n.id + "': " + names[k] + " " + text::from_double(value) + " " + why});
    }
    if (names.empty() || names.back() != "refractory") return;
    const double left = n.state.back(), most = refractory_period(p, dt);
    if (!(left >= 0 && left <= most && left == std::floor(left)))
        problems.push_back({n.where, "state of '" + n.id + "': refractory " + text::from_double(left) +
                                         " must be a whole number of ticks in 0.." + text::from_double(most) +
                                         " (the neuron's refractory period)"});
}


void put_state(std::string& out, const indexed_state& s) {
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
}

// A count of items of `bytes` bytes each that the rest of `r` cannot hold is damage: refused
// before anything is allocated for it.
template <typename T>
std::size_t count_within(byte_reader& r, std::size_t bytes) {
    const auto n = r.get<T>();
    if (n > r.left() / bytes) throw protocol_error("impossible count");
    return static_cast<std::size_t>(n);
}

// `plastic`: whether the state holds traces and synapse values (format 3 and the wire).
indexed_state get_state(byte_reader& r, bool plastic) {
    indexed_state s;
    s.index = r.get<std::uint32_t>();
    s.output = r.get<float>();
    s.variables.resize(r.get<std::uint8_t>());
    for (auto& v : s.variables) v = r.get<float>();
    s.history.resize(r.get<std::uint16_t>());
    for (auto& v : s.history) v = r.get<float>();
    if (!plastic) return s;
    s.traces.resize(r.get<std::uint8_t>());
    for (auto& t : s.traces) {
        t.tau = r.get<double>();
        t.post = r.get<std::uint8_t>() != 0;
        const auto n = count_within<std::uint32_t>(r, 16);
        t.ticks.resize(n);
        t.values.resize(n);
        for (std::size_t k = 0; k < n; ++k) {
            t.ticks[k] = r.get<std::int64_t>();
            t.values[k] = r.get<double>();
        }
    }
    s.synapses.resize(count_within<std::uint64_t>(r, 4));
    for (auto& v : s.synapses) v = r.get<float>();
    return s;
}

// Each neuron's synapse values against the plastic synapses the network gives it, per synapse
// its weight and its rule's state (synapse_model_info::state_bytes, in float32 values): so a
// state that does not fit is refused before anything changes on a cluster. Rows are counted
// a block of targets at a time, so fixed-outdegree draws hold one block's rows at most.
void check_synapse_state(const network& net, const std::vector<indexed_state>& states, const std::vector<const neuron_state*>& given,
                         std::vector<diagnostic>& problems) {
    if (std::none_of(net.synapse_models.begin(), net.synapse_models.end(), [&](const synapse_model& m) {
            return resolve_synapse_model(net, m.id, m.where).info->plastic;
        }))
        return;
    constexpr std::size_t block = 65536;
    for (std::size_t first = 0; first < states.size() && problems.size() < 20; first += block) {
        std::vector<neuron_index> targets;
        for (auto t = first; t < std::min(states.size(), first + block); ++t) targets.push_back(static_cast<neuron_index>(t));
        const synapse_rows rows(net, targets);
        for (const auto t : targets) {
            std::uint64_t values = 0;
            rows.for_each_element(t, [&](std::size_t e, std::uint64_t n) {
                const auto& info = *rows.synapse_models()[rows.synapse_model(e)].info;
                if (info.plastic) values += n * (1 + info.state_bytes / sizeof(float));
            });
            const auto& s = states[static_cast<std::size_t>(t)];
            if (s.synapses.size() != values && given[static_cast<std::size_t>(t)] && problems.size() < 20)
                problems.push_back({given[static_cast<std::size_t>(t)]->where,
                                    "state of '" + given[static_cast<std::size_t>(t)]->id + "': its plastic synapses keep " +
                                        std::to_string(values) + " values, found " + std::to_string(s.synapses.size()) +
                                        " (the synapse state does not match its network)"});
        }
    }
}

}  // namespace

std::string encode_states(const std::vector<indexed_state>& states) {
    std::string out;
    put<std::uint64_t>(out, states.size());
    for (const auto& s : states) put_state(out, s);
    return out;
}

std::vector<indexed_state> decode_states(std::string_view bytes) {
    try {
        byte_reader r(bytes, "neuron states");
        const auto count = r.get<std::uint64_t>();
        if (count > bytes.size()) throw protocol_error("impossible count");
        std::vector<indexed_state> states;
        states.reserve(count);
        for (std::uint64_t i = 0; i < count; ++i) states.push_back(get_state(r, true));
        if (!r.done()) throw protocol_error("trailing bytes");
        return states;
    } catch (const protocol_error& e) {
        throw protocol_error(std::string("malformed neuron states: ") + e.what());
    }
}

std::string encode_binary_snapshot(const document& doc, const expanded_network& net) {
    if (!doc.state) throw usage_error("the document has no state to write");
    document without = doc;
    without.state.reset();
    const std::string xml = serialize(without);
    std::string out(magic, sizeof magic);
    put<std::uint32_t>(out, format);
    put<std::uint64_t>(out, xml.size());
    out += xml;
    put<std::int64_t>(out, doc.state->tick);
    put<std::uint64_t>(out, doc.state->neurons.size());
    for (const auto& n : doc.state->neurons) {
        const auto i = net.find(n.id);
        if (!i) throw usage_error("state for '" + n.id + "', which the network lacks");
        indexed_state s{*i, static_cast<float>(n.output), {}, {}, n.traces, {}};
        for (double v : n.state) s.variables.push_back(static_cast<float>(v));
        for (double v : n.history) s.history.push_back(static_cast<float>(v));
        for (double v : n.synapses) s.synapses.push_back(static_cast<float>(v));
        put_state(out, s);
    }
    out += sha256(out);
    return out;
}

document decode_binary_snapshot(std::string_view bytes, const std::string& file, const file_access& access) {
    auto damaged = [&](const std::string& why) { return config_error({file, 0, 0}, "damaged snapshot: " + why); };
    if (bytes.size() < sizeof magic + 4 + 32 || std::memcmp(bytes.data(), magic, sizeof magic) != 0)
        throw damaged("not a dnnc binary snapshot (bad magic or too short)");
    const std::string_view body = bytes.substr(0, bytes.size() - 32);
    if (sha256(body) != bytes.substr(body.size()))
        throw damaged("checksum mismatch (the file is truncated or altered)");
    try {
        byte_reader r(body.substr(sizeof magic), "snapshot");
        const auto version = r.get<std::uint32_t>();
        if (version == 1)
            throw config_error({file, 0, 0}, "snapshot format 1, written before random projections drew one stream per "
                                             "target: its network would expand to other synapses; it cannot be restored");
        if (version != 2 && version != format) throw damaged("unsupported format " + std::to_string(version));
        const auto length = r.get<std::uint64_t>();
        document doc = parse_document(r.take(length), file, access);
        doc.file = file;
        if (!doc.net) throw damaged("no network");
        // Expansion trusts its network's ids and sizes: a snapshot's are checked first.
        check_network(*doc.net);
        const auto net = expand_neurons(*doc.net);
        snapshot_state state;
        state.tick = r.get<std::int64_t>();
        const auto count = r.get<std::uint64_t>();
        if (count > body.size()) throw damaged("impossible neuron count");
        for (std::uint64_t k = 0; k < count; ++k) {
            auto s = get_state(r, version >= 3);
            if (s.index < 0 || static_cast<std::size_t>(s.index) >= net.neuron_count())
                throw damaged("state for neuron index " + std::to_string(s.index) + ", which the network lacks");
            neuron_state n;
            n.id = net.neuron_name(static_cast<neuron_index>(s.index));
            n.output = s.output;
            n.state.assign(s.variables.begin(), s.variables.end());
            n.history.assign(s.history.begin(), s.history.end());
            n.where = {file, 0, 0};
            n.traces = std::move(s.traces);
            n.synapses.assign(s.synapses.begin(), s.synapses.end());
            state.neurons.push_back(std::move(n));
        }
        if (!r.done()) throw damaged("trailing bytes");
        doc.state = std::move(state);
        return doc;
    } catch (const protocol_error& e) {
        throw damaged(e.what());
    }
}

document load_snapshot(const std::string& path) {
    document doc;
    if (is_binary_snapshot_path(path)) {
        doc = decode_binary_snapshot(read_file(path, max_document_bytes), path);
        check_document(doc);
    } else {
        doc = load_document(path);
    }
    if (!doc.net) throw config_error({path, 0, 0}, "a snapshot needs a <network>");
    if (!doc.state) throw config_error({path, 0, 0}, "not a snapshot: the document has no <state>");
    return doc;
}

bool is_binary_snapshot(std::string_view bytes) {
    return bytes.size() >= sizeof magic && std::memcmp(bytes.data(), magic, sizeof magic) == 0;
}

bool is_binary_snapshot_path(const std::string& path) {
    return path.size() >= 6 && path.compare(path.size() - 6, 6, ".dnncs") == 0;
}

void save_snapshot(const document& doc, const std::string& path) {
    if (!is_binary_snapshot_path(path)) return write_atomically(path, serialize(doc));
    if (!doc.net) throw usage_error("a snapshot needs a network");
    write_atomically(path, encode_binary_snapshot(doc, expand_neurons(*doc.net)));
}

std::vector<indexed_state> states_of(const document& snapshot, const expanded_network& net) {
    if (!snapshot.state) throw config_error({snapshot.file, 0, 0}, "the document has no <state>");
    const auto& state = *snapshot.state;
    if (!snapshot.net) throw config_error({snapshot.file, 0, 0}, "the document has no <network>");
    const std::size_t history = longest_delay(*snapshot.net) - 1u;
    std::vector<indexed_state> states(net.neuron_count());
    std::vector<const neuron_state*> given(net.neuron_count(), nullptr);
    std::vector<diagnostic> problems;
    for (const auto& n : state.neurons) {
        const auto i = net.find(n.id);
        if (!i) {
            problems.push_back({n.where, "state of '" + n.id + "': the network has no such neuron"});
            continue;
        }
        if (given[*i]) problems.push_back({n.where, "state of '" + n.id + "' given twice"});
        given[*i] = &n;
        const neuron_model model = net.params_of(*i).model;
        const auto& names = state_variable_names(model);
        if (n.state.size() != names.size()) {
            std::string list;
            for (const auto& name : names) list += (list.empty() ? "" : " ") + name;
            problems.push_back({n.where, "state of '" + n.id + "': a " + to_string(model) + " neuron has " +
                                             (names.empty() ? std::string("no state variables")
                                                            : std::to_string(names.size()) + " state variables (" + list + ")") +
                                             ", found " + std::to_string(n.state.size())});
        }
        if (n.history.size() != history)
            problems.push_back({n.where, "state of '" + n.id + "': history must hold " + std::to_string(history) +
                                             " past outputs (the longest delay minus one), found " +
                                             std::to_string(n.history.size())});
        check_against_model(n, net.params_of(*i), net.dt, problems);
        auto& s = states[*i];
        s.index = *i;
        s.output = static_cast<float>(n.output);
        s.variables.assign(n.state.begin(), n.state.end());
        s.history.assign(n.history.begin(), n.history.end());
        s.traces = n.traces;
        s.synapses.assign(n.synapses.begin(), n.synapses.end());
    }
    for (std::size_t i = 0; i < given.size() && problems.size() < 20; ++i)
        if (!given[i])
            problems.push_back({state.where, "the state lacks neuron '" + net.neuron_name(static_cast<neuron_index>(i)) + "'"});
    if (state.tick < 0) problems.push_back({state.where, "the state's tick must be >= 0"});
    if (problems.empty()) check_synapse_state(*snapshot.net, states, given, problems);
    if (!problems.empty()) throw config_error(std::move(problems));
    return states;
}

}  // namespace dnnc::protocol
