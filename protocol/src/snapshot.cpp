#include "dnnc/protocol/snapshot.hpp"

#include "dnnc/model/resolve.hpp"

#include "state_codec.hpp"
#include "dnnc/model/check.hpp"
#include "dnnc/model/rows.hpp"
#include "dnnc/protocol/frame.hpp"
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
using namespace model;  // the values this codec reads and writes
namespace {

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
// NEST's bound, (in)activation variables >= 0, the refractory count a whole number of ticks
// within the neuron's refractory period. (Finite float32 values are check_state's.)
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
                              ? "must lie in -1e6..1e6 pA (where NEST's aeif models stop as numerically unstable)"
                          : (names[k] == "Act_m" || names[k] == "Inact_h" || names[k] == "Act_n") && !(value >= 0)
                              ? "must be >= 0 (as NEST's hh_cond_exp_traub requires)"
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
        for (std::uint64_t i = 0; i < count; ++i) states.push_back(get_state(r, snapshot_format));
        if (!r.done()) throw protocol_error("trailing bytes");
        return states;
    } catch (const protocol_error& e) {
        throw protocol_error(std::string("malformed neuron states: ") + e.what());
    }
}

neuron_state named_state(indexed_state s, const expanded_network& net, const std::string& file) {
    if (s.index < 0 || static_cast<std::size_t>(s.index) >= net.neuron_count())
        throw protocol_error("state for neuron index " + std::to_string(s.index) + ", which the network lacks");
    neuron_state n;
    n.id = net.neuron_name(static_cast<neuron_index>(s.index));
    n.output = static_cast<double>(s.output);
    n.state.assign(s.variables.begin(), s.variables.end());
    n.history.assign(s.history.begin(), s.history.end());
    n.where = {file, 0, 0};
    n.traces = std::move(s.traces);
    n.synapses.assign(s.synapses.begin(), s.synapses.end());
    n.growth = std::move(s.growth);
    return n;
}

std::string encode_binary_snapshot(const document& doc, const expanded_network& net) {
    if (!doc.state) throw usage_error("the document has no state to write");
    document without = doc;
    without.state.reset();
    const std::string xml = serialize(without);
    std::string out(snapshot_magic, sizeof snapshot_magic);
    put<std::uint32_t>(out, snapshot_format);
    put<std::uint64_t>(out, xml.size());
    out += xml;
    put<std::int64_t>(out, doc.state->tick);
    put<std::uint64_t>(out, doc.state->neurons.size());
    for (const auto& n : doc.state->neurons) {
        const auto i = net.find(n.id);
        if (!i) throw usage_error("state for '" + n.id + "', which the network lacks");
        indexed_state s{*i, static_cast<float>(n.output), {}, {}, n.traces, {}, n.growth};
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
    if (bytes.size() < sizeof snapshot_magic + 4 + 32 || std::memcmp(bytes.data(), snapshot_magic, sizeof snapshot_magic) != 0)
        throw damaged("not a dnnc binary snapshot (bad magic or too short)");
    const std::string_view body = bytes.substr(0, bytes.size() - 32);
    if (sha256(body) != bytes.substr(body.size()))
        throw damaged("checksum mismatch (the file is truncated or altered)");
    try {
        byte_reader r(body.substr(sizeof snapshot_magic), "snapshot");
        auto head = read_snapshot_head(r, file, access);
        document& doc = head.doc;
        snapshot_state state;
        state.tick = r.get<std::int64_t>();
        const auto count = r.get<std::uint64_t>();
        check_state_count(count, r.left(), head.version, symbol_table(*doc.net).neuron_count());
        const auto net = expand_neurons(*doc.net);
        for (std::uint64_t k = 0; k < count; ++k) {
            state.neurons.push_back(named_state(get_state(r, head.version), net, file));
        }
        if (!r.done()) throw damaged("trailing bytes");
        doc.state = std::move(state);
        return std::move(doc);
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
    return bytes.size() >= sizeof snapshot_magic && std::memcmp(bytes.data(), snapshot_magic, sizeof snapshot_magic) == 0;
}

bool is_binary_snapshot_path(const std::string& path) {
    return path.size() >= 6 && path.compare(path.size() - 6, 6, ".dnncs") == 0;
}

void save_snapshot(const document& doc, const std::string& path) {
    if (!is_binary_snapshot_path(path)) return write_atomically(path, serialize(doc));
    if (!doc.net) throw usage_error("a snapshot needs a network");
    write_atomically(path, encode_binary_snapshot(doc, expand_neurons(*doc.net)));
}

state_check::state_check(const document& snapshot, const expanded_network& net)
    : snapshot_(snapshot), net_(net), history_(longest_delay(*snapshot.net) - 1u),
      structure_(resolve_structure(*snapshot.net)), values_(net.neuron_count(), absent), entry_(net.neuron_count(), 0) {}

const structure_group* state_check::group_of(double neuron) const {
    if (!structure_ || !(neuron >= 0) || neuron != std::floor(neuron)) return nullptr;
    for (const auto& g : structure_->groups)
        if (g.has(neuron)) return &g;
    return nullptr;
}

// A neuron's growth (structural plasticity) against its group's element kinds and the
// state's tick: the engine's restore checks the rest (connected counts against the grown
// synapses of all neurons together).
void state_check::check_growth(const neuron_state& n, neuron_index i) {
    if (problems_.size() >= 20) return;  // enough to see what is wrong
    const auto& g = n.growth;
    const auto* group = group_of(static_cast<double>(i));
    auto say = [&](const std::string& why) { problems_.push_back({n.where, "state of '" + n.id + "': growth " + why}); };
    if (!group) {
        if (!g.empty()) say("given, but the neuron has no synaptic elements");
        return;
    }
    const auto kinds = group->kinds.size();
    const std::size_t head = 4 + 2 * kinds;
    if (g.size() < head) {
        say(g.empty() ? "missing: a neuron with synaptic elements needs its calcium, elements and grown synapses"
                      : "must hold at least " + std::to_string(head) + " values (ca, ca_tick, next_seq, " + std::to_string(kinds) +
                            " z, " + std::to_string(kinds) + " connected, n), found " + std::to_string(g.size()));
        return;
    }
    if (!std::all_of(g.begin(), g.end(), [](double v) { return std::isfinite(v); })) return say("values must be finite numbers");
    constexpr double most = 9007199254740992.0;  // 2^53: whole numbers beyond are not exact
    auto whole = [](double v, double low, double high) { return v >= low && v <= high && v == std::floor(v); };
    const double tick = snapshot_.state ? static_cast<double>(snapshot_.state->tick) : most;
    const double count = g[head - 1];
    if (!whole(count, 0, most) || static_cast<double>(g.size() - head) != 5 * count)
        return say("counts " + text::from_double(count) + " grown synapses, so it must hold " + std::to_string(head) +
                   " + 5 x that values, found " + std::to_string(g.size()));
    if (!(g[0] >= 0)) return say("calcium " + text::from_double(g[0]) + " must be >= 0");
    if (!whole(g[1], 0, tick)) return say("ca_tick " + text::from_double(g[1]) + " must be a whole tick in 0..the state's tick");
    if (!whole(g[2], 0, most)) return say("next_seq " + text::from_double(g[2]) + " must be a whole number >= 0");
    for (std::size_t e = 0; e < kinds; ++e) {
        if (!(g[3 + e] >= 0)) return say("z " + text::from_double(g[3 + e]) + " must be >= 0");
        if (!whole(g[3 + kinds + e], 0, 2147483647)) return say("connected " + text::from_double(g[3 + kinds + e]) + " must be a whole number >= 0");
    }
    const auto pairings = static_cast<double>(structure_->pairings.size());
    for (std::size_t k = 0; k < static_cast<std::size_t>(count); ++k) {
        const double* v = g.data() + head + 5 * k;
        const std::string which = "synapse " + std::to_string(k + 1) + ": ";
        if (!group_of(v[0])) return say(which + "source " + text::from_double(v[0]) + " is no neuron with synaptic elements");
        if (!whole(v[1], 0, pairings - 1)) return say(which + "pairing " + text::from_double(v[1]) + " must lie in 0.." + text::from_double(pairings - 1));
        if (!whole(v[2], 0, g[2] - 1)) return say(which + "seq " + text::from_double(v[2]) + " must be a whole number below next_seq");
        if (!whole(v[3], 0, tick)) return say(which + "born " + text::from_double(v[3]) + " must be a whole tick in 0..the state's tick");
        if (!(v[4] == -1 || whole(v[4], v[3], tick)))
            return say(which + "dies " + text::from_double(v[4]) + " must be -1 (never) or a whole tick in born..the state's tick");
    }
}

std::optional<neuron_index> state_check::add(const neuron_state& n) {
    const auto i = net_.find(n.id);
    if (!i) {
        problems_.push_back({n.where, "state of '" + n.id + "': the network has no such neuron"});
        return std::nullopt;
    }
    if (values_[*i] != absent) problems_.push_back({n.where, "state of '" + n.id + "' given twice"});
    values_[*i] = n.synapses.size();
    entry_[*i] = entries_++;
    const neuron_model model = net_.params_of(*i).model;
    const auto& names = state_variable_names(model);
    if (n.state.size() != names.size()) {
        std::string list;
        for (const auto& name : names) list += (list.empty() ? "" : " ") + name;
        problems_.push_back({n.where, "state of '" + n.id + "': a " + to_string(model) + " neuron has " +
                                          (names.empty() ? std::string("no state variables")
                                                         : std::to_string(names.size()) + " state variables (" + list + ")") +
                                          ", found " + std::to_string(n.state.size())});
    }
    // More is what nodes keep after an update shortened the longest delay (the longest at install).
    if (n.history.size() < history_)
        problems_.push_back({n.where, "state of '" + n.id + "': history must hold at least " + std::to_string(history_) +
                                          " past outputs (the longest delay minus one), found " + std::to_string(n.history.size())});
    check_against_model(n, net_.params_of(*i), net_.dt, problems_);
    check_growth(n, *i);
    return i;
}

void state_check::finish(const snapshot_state& state) {
    for (std::size_t i = 0; i < values_.size() && problems_.size() < 20; ++i)
        if (values_[i] == absent)
            problems_.push_back({state.where, "the state lacks neuron '" + net_.neuron_name(static_cast<neuron_index>(i)) + "'"});
    if (state.tick < 0) problems_.push_back({state.where, "the state's tick must be >= 0"});
    if (problems_.empty()) check_synapse_values(state);
    if (!problems_.empty()) throw config_error(std::move(problems_));
}

// Each neuron's synapse values against the plastic synapses the network gives it, per synapse
// its weight and its rule's state (synapse_model_info::state_bytes, in float32 values): so a
// state that does not fit is refused before anything changes on a cluster. Rows are counted
// a block of targets at a time, so fixed-outdegree draws hold one block's rows at most.
void state_check::check_synapse_values(const snapshot_state& state) {
    const network& net = *snapshot_.net;
    if (std::none_of(net.synapse_models.begin(), net.synapse_models.end(), [&](const synapse_model& m) {
            return resolve_synapse_model(net, m.id, m.where).info->plastic;
        }))
        return;
    constexpr std::size_t block = 65536;
    for (std::size_t first = 0; first < values_.size() && problems_.size() < 20; first += block) {
        std::vector<neuron_index> targets;
        for (auto t = first; t < std::min(values_.size(), first + block); ++t) targets.push_back(static_cast<neuron_index>(t));
        const synapse_rows rows(net, targets);
        for (const auto t : targets) {
            std::uint64_t values = 0;
            rows.for_each_element(t, [&](std::size_t e, std::uint64_t n) {
                const auto& info = *rows.synapse_models()[rows.synapse_model(e)].info;
                if (info.plastic) values += n * (1 + info.state_bytes / sizeof(float));
            });
            const auto found = values_[static_cast<std::size_t>(t)];
            if (found == values || problems_.size() >= 20) continue;
            // Entries read one at a time are not kept: their file locates them.
            const auto entry = entry_[static_cast<std::size_t>(t)];
            const bool kept = entry < state.neurons.size();
            problems_.push_back({kept ? state.neurons[entry].where : state.where,
                                 "state of '" + (kept ? state.neurons[entry].id : net_.neuron_name(t)) + "': its plastic synapses keep " +
                                     std::to_string(values) + " values, found " + std::to_string(found) +
                                     " (the synapse state does not match its network)"});
        }
    }
}

std::vector<indexed_state> states_of(const document& snapshot, const expanded_network& net) {
    if (!snapshot.state) throw config_error({snapshot.file, 0, 0}, "the document has no <state>");
    if (!snapshot.net) throw config_error({snapshot.file, 0, 0}, "the document has no <network>");
    std::vector<indexed_state> states(net.neuron_count());
    state_check check(snapshot, net);
    for (const auto& n : snapshot.state->neurons) {
        const auto i = check.add(n);
        if (!i) continue;
        auto& s = states[*i];
        s.index = *i;
        s.output = static_cast<float>(n.output);
        s.variables.assign(n.state.begin(), n.state.end());
        s.history.assign(n.history.begin(), n.history.end());
        s.traces = n.traces;
        s.synapses.assign(n.synapses.begin(), n.synapses.end());
        s.growth = n.growth;
    }
    check.finish(*snapshot.state);
    return states;
}

}  // namespace dnnc::protocol
