#include "dnnc/model/expand.hpp"
#include "dnnc/model/rows.hpp"

#include "dnnc/model/resolve.hpp"
#include "dnnc/model/weights_file.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>

namespace dnnc::model {
namespace {



// A dense projection's matrix: rows its targets, columns its sources, each in member order
// (a grown population's later extents after its first). The block of the ends as written is
// read from the weights file or drawn from the projection's seed, row-major, as always; a
// weight in a grown member's row or column is drawn on its own, keyed by the two members, so
// growing one end changes no weight that exists, whenever the growth comes (the check keeps
// a file's matrix from growing). The scale is that of the ends as written.
dense_block expand_dense(const projection& p, const std::vector<member_extent>& from, const std::vector<member_extent>& to,
                         const std::string& document_file, std::size_t element, const expand_limits& limits) {
    dense_block block;
    const std::uint64_t rows = members_in(to), cols = members_in(from);
    if (rows * cols > limits.max_dense_weights)
        throw config_error(p.where, "dense projection has " + std::to_string(rows * cols) +
                                        " weights; the limit is " + std::to_string(limits.max_dense_weights));
    for (const auto& x : from)
        for (std::uint64_t i = 0; i < x.size; ++i) block.sources.push_back(static_cast<neuron_index>(x.first + i));
    for (const auto& x : to)
        for (std::uint64_t i = 0; i < x.size; ++i) block.targets.push_back(static_cast<neuron_index>(x.first + i));
    block.delay = static_cast<std::uint16_t>(p.delay);
    block.split_rows = p.split_rows;
    block.element = element;
    const std::uint64_t written_rows = to.front().size, written_cols = from.front().size;
    if (!p.weights_file.empty()) {
        block.weights = read_weights_file(file_named_by(document_file, p.weights_file).string(), rows, cols, p.where);
        return block;
    }
    // Default scale keeps the variance of a row's sum at about 1.
    const double scale = p.scale.value_or(1.0 / std::sqrt(static_cast<double>(written_cols)));
    auto draw = [&](splitmix64& rng) {
        return p.init == dense_init::normal    ? static_cast<float>(scale * rng.normal())
               : p.init == dense_init::uniform ? static_cast<float>(scale * (2 * rng.uniform() - 1))
                                               : 0.0f;
    };
    block.weights.assign(rows * cols, 0.0f);
    splitmix64 rng(p.seed);
    for (std::uint64_t r = 0; r < written_rows; ++r)
        for (std::uint64_t c = 0; c < written_cols; ++c) block.weights[r * cols + c] = draw(rng);
    if (rows == written_rows && cols == written_cols) return block;
    // Grown members' weights: member indices of a target and a source (below 2^32: the
    // neuron limit) key each one's stream, far from the written block's.
    const std::uint64_t grown_seed = splitmix64(p.seed ^ 0x64656e73652d6772ULL).next();
    std::vector<std::uint64_t> row_member, col_member;
    for (const auto& x : to)
        for (std::uint64_t i = 0; i < x.size; ++i) row_member.push_back(x.member + i);
    for (const auto& x : from)
        for (std::uint64_t i = 0; i < x.size; ++i) col_member.push_back(x.member + i);
    for (std::uint64_t r = 0; r < rows; ++r)
        for (std::uint64_t c = r < written_rows ? written_cols : 0; c < cols; ++c) {
            auto one = splitmix64::at(grown_seed, row_member[r] << 32 | col_member[c]);
            block.weights[r * cols + c] = draw(one);
        }
    return block;
}

}  // namespace

std::filesystem::path file_named_by(const std::string& document_file, const std::string& named) {
    const std::filesystem::path path(named);
    return path.is_absolute() ? path : std::filesystem::path(document_file).parent_path() / path;
}

std::string expanded_network::neuron_name(neuron_index i) const {
    const neuron_group& g = groups[group_of[i]];
    if (!g.is_population) return g.id;
    return g.id + "[" + std::to_string(g.member + (i - g.first)) + "]";
}

std::optional<neuron_index> expanded_network::find(std::string_view ref) const {
    const auto open = ref.find('[');
    const auto it = group_index.find(std::string(ref.substr(0, open)));
    if (it == group_index.end()) return std::nullopt;
    const neuron_group& g = groups[it->second];
    if (open == std::string_view::npos) {
        if (g.is_population) return std::nullopt;
        return g.first;
    }
    if (!g.is_population || ref.back() != ']') return std::nullopt;
    std::uint64_t index = 0;
    const char* first = ref.data() + open + 1;
    const char* last = ref.data() + ref.size() - 1;
    const auto [end, ec] = std::from_chars(first, last, index);
    if (ec != std::errc() || end != last || first == last) return std::nullopt;
    // A grown population's later extents follow every population's first (expand_marked).
    for (auto k = it->second; k < groups.size(); ++k) {
        const neuron_group& x = groups[k];
        if (x.id == g.id && x.member <= index && index < std::uint64_t{x.member} + x.size)
            return static_cast<neuron_index>(x.first + (index - x.member));
    }
    return std::nullopt;
}

namespace {

// Which connections an expansion makes.
enum class connections { all, into_local_neurons, none };

}  // namespace

std::vector<sampling> samplings_of(const network& net) {
    std::vector<sampling> out;
    const symbol_table symbols(net);
    std::vector<bool> sampled;
    for (const auto& r : net.records) {
        if (r.variables.empty() || !r.neurons) continue;
        sampling s{{}, r.variables, r.interval_ms ? ticks_of_ms(*r.interval_ms, net.dt) : 1};
        for (const auto& ref : *r.neurons)
            for (const auto& g : symbols.extents(ref, r.where)) {
                if (sampled.size() < g.first + g.size) sampled.resize(g.first + g.size, false);
                for (std::uint64_t i = g.first; i < g.first + g.size; ++i) {
                    if (sampled[i]) throw config_error(r.where, "record: neuron " + std::to_string(i) + " (in " + ref + ") is sampled twice (by one or two <record variables>)");
                    sampled[i] = true;
                    s.neurons.push_back(static_cast<neuron_index>(i));
                }
            }
        std::sort(s.neurons.begin(), s.neurons.end());
        out.push_back(std::move(s));
    }
    return out;
}

namespace {

// The inputs, the outputs and the recorded neurons, neuron by neuron.
expanded_network finish_ports(const network& net, const symbol_table& symbols, expanded_network out) {
    out.drive = resolve_generators(net);
    std::vector<bool> recorded(net.records.empty() ? 0 : out.neuron_count(), false);
    out.samplings = samplings_of(net);
    out.structure = resolve_structure(net);
    for (const auto& r : net.records) {
        if (!r.variables.empty()) continue;
        if (!r.neurons) {
            for (neuron_index i = 0; i < out.neuron_count(); ++i) recorded[i] = recorded[i] || is_spiking(out.params_of(i).model);
            continue;
        }
        for (const auto& ref : *r.neurons)
            for (const auto& g : symbols.extents(ref, r.where))
                std::fill(recorded.begin() + static_cast<std::ptrdiff_t>(g.first),
                          recorded.begin() + static_cast<std::ptrdiff_t>(g.first + g.size), true);
    }
    for (neuron_index i = 0; i < recorded.size(); ++i)
        if (recorded[i]) out.recorded.push_back(i);
    for (const auto* ports : {&net.inputs, &net.outputs}) {
        auto& named = ports == &net.inputs ? out.inputs : out.outputs;
        for (const auto& p : *ports) {
            named_neurons nn{p.id, {}};
            for (const auto& r : p.neurons)
                for (const auto& g : symbols.extents(r, p.where))
                    for (std::uint64_t i = 0; i < g.size; ++i) nn.neurons.push_back(static_cast<neuron_index>(g.first + i));
            named.push_back(std::move(nn));
        }
    }
    return out;
}

// A node's neurons as targets to draw rows for (checked against the network beforehand).
std::vector<neuron_index> local_targets(const std::vector<std::int64_t>& local_neurons) {
    return {local_neurons.begin(), local_neurons.end()};
}

expanded_network expand_marked(const network& net, const std::string& document_file, const expand_limits& limits,
                               connections which, const std::vector<std::int64_t>* local_neurons = nullptr) {
    const symbol_table symbols(net);
    if (symbols.neuron_count() > limits.max_neurons)
        throw config_error(net.where, "network has " + std::to_string(symbols.neuron_count()) +
                                          " neurons; the limit is " + std::to_string(limits.max_neurons));
    std::vector<bool> local;
    if (which == connections::into_local_neurons) {
        local.assign(symbols.neuron_count(), false);
        for (auto i : *local_neurons) {
            if (i < 0 || static_cast<std::uint64_t>(i) >= symbols.neuron_count())
                throw config_error(net.where, "neuron index " + std::to_string(i) + " lies outside the network's " +
                                                  std::to_string(symbols.neuron_count()) + " neurons");
            local[static_cast<std::size_t>(i)] = true;
        }
    }
    auto keeps = [&](std::uint64_t target) { return local.empty() || local[static_cast<std::size_t>(target)]; };
    expanded_network out;
    out.name = net.name;
    out.dt = net.dt;
    const auto n = static_cast<neuron_index>(symbols.neuron_count());
    out.group_of.reserve(n);
    auto add_group = [&](const std::string& id, std::uint64_t size, bool is_population, std::uint64_t seed,
                         const neuron_params& params, std::uint64_t member, const std::vector<double>& v_inits) {
        const auto first = static_cast<neuron_index>(out.group_of.size());
        out.group_index.emplace(id, static_cast<std::uint32_t>(out.groups.size()));  // its first extent
        out.group_of.insert(out.group_of.end(), size, static_cast<std::uint32_t>(out.groups.size()));
        out.groups.push_back(
            {id, first, static_cast<neuron_index>(size), is_population, seed, params, static_cast<neuron_index>(member), v_inits});
    };
    for (const auto& nr : net.neurons) add_group(nr.id, 1, false, 0, nr.params, 0, {});
    for (const auto& p : net.populations) add_group(p.id, static_cast<std::uint64_t>(p.size), true, p.seed, p.params, 0, p.v_inits);
    // The extents applied grows added, in their numbering order.
    for (const auto& g : net.grows) {
        if (!g.applied) continue;
        const auto& p = *std::find_if(net.populations.begin(), net.populations.end(), [&](const population& q) { return q.id == g.population; });
        const auto extents = symbols.extents(p.id, g.where);
        const auto& x = *std::find_if(extents.begin(), extents.end(), [&](const member_extent& e) { return e.first == out.group_of.size(); });
        add_group(p.id, x.size, true, p.seed, p.params, x.member, {});  // a population that lists v-init does not grow
    }
    if (which == connections::none) return finish_ports(net, symbols, std::move(out));
    out.in_begin.assign(static_cast<std::size_t>(n) + 1, 0);

    const synapse_rows rows = local.empty() ? synapse_rows(net) : synapse_rows(net, local_targets(*local_neurons));
    // Dense projections stay matrices; every element's target range, for the limit check.
    std::vector<std::vector<member_extent>> targets(net.connection_order.size());
    std::uint64_t most = 0;  // an upper bound of the synapse count
    double expected = 0;
    for (std::size_t element = 0; element < net.connection_order.size(); ++element) {
        const connection_ref& ref = net.connection_order[element];
        if (ref.kind == connection_ref::type::synapse) {
            targets[element] = symbols.extents(net.synapses[ref.index].to, net.synapses[ref.index].where);
            ++most;
            ++expected;
            continue;
        }
        const projection& p = net.projections[ref.index];
        // Sizes with grown members (bounds: a grown target draws from what was there at its growth).
        const auto from_extents = symbols.extents(p.from, p.where);
        targets[element] = symbols.extents(p.to, p.where);
        const neuron_range from{from_extents.front().first, members_in(from_extents)};
        const neuron_range to{targets[element].front().first, members_in(targets[element])};
        switch (p.kind) {
        case projection_kind::one_to_one:
            most += to.size;
            expected += static_cast<double>(to.size);
            break;
        case projection_kind::all:
        case projection_kind::random:
            most += from.size * to.size;
            expected += static_cast<double>(from.size * to.size) *
                        (p.kind == projection_kind::all ? 1.0 : std::min(1.0, p.p.value_or(0) * 1.01));
            break;
        case projection_kind::fixed_indegree:
        case projection_kind::fixed_outdegree:
        case projection_kind::fixed_total_number: {
            const auto count = [](const std::optional<std::int64_t>& k) {
                return static_cast<std::uint64_t>(std::max<std::int64_t>(0, k.value_or(0)));
            };
            const std::uint64_t synapses = p.kind == projection_kind::fixed_indegree    ? count(p.indegree) * to.size
                                           : p.kind == projection_kind::fixed_outdegree ? count(p.outdegree) * from.size
                                                                                        : count(p.total);
            most += synapses;
            expected += static_cast<double>(synapses);
            break;
        }
        case projection_kind::list:
            most += p.connections.size();
            expected += static_cast<double>(p.connections.size());
            break;
        case projection_kind::dense:
            if (which == connections::into_local_neurons)
                throw config_error(p.where, "a node's share of a network carries no dense projections");
            out.dense.push_back(expand_dense(p, from_extents, targets[element], document_file, element, limits));
            break;
        }
    }
    // Only when the bound exceeds the limit are the rows counted, element by element, to
    // find the element that breaks it.
    if (most > limits.max_synapses) {
        const auto over = [&](std::size_t element) {
            return config_error(rows.where(element),
                                "expansion exceeds the limit of " + std::to_string(limits.max_synapses) + " synapses");
        };
        std::uint64_t made = 0;
        for (std::size_t element = 0; element < net.connection_order.size(); ++element) {
            const connection_ref& ref = net.connection_order[element];
            const auto kind = ref.kind == connection_ref::type::synapse ? projection_kind::one_to_one
                                                                        : net.projections[ref.index].kind;
            if (kind == projection_kind::dense) continue;
            if (kind == projection_kind::all &&
                made + members_in(symbols.extents(net.projections[ref.index].from, rows.where(element))) * members_in(targets[element]) >
                    limits.max_synapses)
                throw over(element);
            for (const auto& to : targets[element])
                for (std::uint64_t t = to.first; t < to.first + to.size; ++t) {
                    if (!keeps(t)) continue;
                    made += rows.count(static_cast<neuron_index>(t), element);
                    if (kind != projection_kind::all && made > limits.max_synapses) throw over(element);
                }
        }
    }

    // Row by row, in target order: the rows are the CSR arrays.
    const double kept = local.empty() || n == 0 ? 1.0 : static_cast<double>(local_neurons->size()) / static_cast<double>(n);
    const auto reserve = static_cast<std::size_t>(std::min(expected * kept + 16, static_cast<double>(most) + 16));
    out.in_source.reserve(reserve);
    out.in_weight.reserve(reserve);
    out.in_delay.reserve(reserve);
    for (neuron_index t = 0; t < n; ++t) {
        if (keeps(t))
            rows.for_each(t, [&](neuron_index source, float weight, std::uint16_t delay, std::size_t) {
                out.in_source.push_back(source);
                out.in_weight.push_back(weight);
                out.in_delay.push_back(delay);
            });
        out.in_begin[t + 1] = out.in_source.size();
    }
    return finish_ports(net, symbols, std::move(out));
}

}  // namespace

generators resolve_generators(const network& net) {
    const symbol_table symbols(net);
    auto spans = [&](const std::vector<std::string>& to, const source_location& where) {
        std::vector<neuron_span> out;
        for (const auto& ref : to)
            for (const auto& r : symbols.extents(ref, where))
                out.push_back({static_cast<neuron_index>(r.first), static_cast<neuron_index>(r.size)});
        return out;
    };
    generators g;
    for (const auto& p : net.poisson) g.poisson.push_back({spans(p.to, p.where), p.rate, p.weight, p.seed});
    for (const auto& c : net.currents) g.currents.push_back({spans(c.to, c.where), c});
    for (const auto& p : net.populations) {
        if (p.rates.empty() && p.spikes.empty()) continue;
        const auto first = static_cast<neuron_index>(symbols.range(p.id, p.where).first);  // spike sources never grow
        if (!p.rates.empty())
            g.trains.push_back({{first, static_cast<neuron_index>(p.size)}, p.rates, p.seed, p.start, p.stop});
        for (const auto& s : p.spikes) g.spikes.push_back({first + static_cast<neuron_index>(s.index), s.tick});
    }
    std::stable_sort(g.spikes.begin(), g.spikes.end(), [](const listed_spike& a, const listed_spike& b) { return a.tick < b.tick; });
    return g;
}

expanded_network expand(const network& net, const std::string& document_file, const expand_limits& limits) {
    return expand_marked(net, document_file, limits, connections::all);
}

expanded_network expand_share(const network& share, const std::vector<std::int64_t>& local_neurons,
                              const expand_limits& limits) {
    return expand_marked(share, {}, limits, connections::into_local_neurons, &local_neurons);
}

expanded_network expand_neurons(const network& net, const expand_limits& limits) {
    return expand_marked(net, {}, limits, connections::none);
}

std::uint16_t longest_delay(const network& net) {
    std::int64_t longest = 1;
    for (const auto& s : net.synapses) longest = std::max(longest, delay_ticks(s, net.dt));
    for (const auto& p : net.projections) {
        longest = std::max<std::int64_t>(longest, p.delay_distribution ? delay_cap(*p.delay_distribution, net.dt) : delay_ticks(p, net.dt));
        for (const auto d : p.connections.delays) longest = std::max<std::int64_t>(longest, d);
    }
    if (const auto structure = resolve_structure(net)) longest = std::max<std::int64_t>(longest, structure->longest_delay());
    return static_cast<std::uint16_t>(std::min<std::int64_t>(longest, 65535));
}

std::uint16_t longest_delay(const expanded_network& net) {
    std::uint16_t longest = 1;
    for (auto d : net.in_delay) longest = std::max(longest, d);
    for (const auto& b : net.dense) longest = std::max(longest, b.delay);
    if (net.structure) longest = std::max(longest, net.structure->longest_delay());
    return longest;
}

neuron_params expanded_network::member_params(neuron_index i) const {
    const neuron_group& g = groups[group_of[i]];
    neuron_params p = g.params;
    if (!g.v_inits.empty()) p.v_init = g.v_inits[static_cast<std::size_t>(g.member + (i - g.first))];
    return p;
}

}  // namespace dnnc::model
