#include "dnnc/protocol/expand.hpp"

#include "resolve.hpp"
#include "weights_file.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>

namespace dnnc::protocol {
namespace {

// splitmix64: a small generator whose output is fixed by its definition, so expansions
// are the same on every platform and library (std:: distributions are not).
class random_stream {
public:
    explicit random_stream(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }
    // Uniform in [0, 1).
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    double normal() {
        // Box-Muller; 1 - uniform() lies in (0, 1], so the log is finite.
        const double r = std::sqrt(-2.0 * std::log(1.0 - uniform()));
        return r * std::cos(6.283185307179586 * uniform());
    }

private:
    std::uint64_t state_;
};

// Synapses in generation order before they are grouped by target; with `local` set, only
// those into the marked neurons are kept.
struct synapse_list {
    std::vector<neuron_index> target, source;
    std::vector<float> weight;
    std::vector<std::uint16_t> delay;
    const std::vector<bool>* local = nullptr;
    double kept_fraction = 1;  // of the neurons, for reserving

    bool keeps(std::uint64_t to) const { return !local || (*local)[to]; }
    void add(std::uint64_t to, std::uint64_t from, float w, std::uint16_t d) {
        if (!keeps(to)) return;
        target.push_back(static_cast<neuron_index>(to));
        source.push_back(static_cast<neuron_index>(from));
        weight.push_back(w);
        delay.push_back(d);
    }
    void reserve_more(std::uint64_t n) {
        n = static_cast<std::uint64_t>(static_cast<double>(n) * kept_fraction);
        for (auto* v : {&target, &source}) v->reserve(v->size() + n);
        weight.reserve(weight.size() + n);
        delay.reserve(delay.size() + n);
    }
};

neuron_range range_of(const symbol_table& symbols, const std::string& ref, const source_location& where) {
    auto g = symbols.group(ref);
    if (auto* why = std::get_if<std::string>(&g)) throw config_error(where, *why);
    return std::get<neuron_range>(g);
}

// Bernoulli(p) over every (source, target) pair, row by row with geometric skips, so the
// cost follows the number of synapses made rather than |A|·|B|. Each target row draws from
// its own stream (the projection's seed mixed with the row), so a node that expands only
// its own rows draws only those, and gets the same rows as the whole network.
void expand_random(synapse_list& out, const projection& p, neuron_range from, neuron_range to, float w,
                   std::uint16_t d, std::uint64_t limit) {
    const double prob = p.p.value_or(0);
    if (prob <= 0 || from.size == 0) return;
    const double log_q = std::log1p(-prob);
    out.reserve_more(static_cast<std::uint64_t>(static_cast<double>(from.size * to.size) * prob * 1.01) + 16);
    for (std::uint64_t row = 0; row < to.size; ++row) {
        const std::uint64_t target = to.first + row;
        if (!out.keeps(target)) continue;
        random_stream rng(random_stream(p.seed ^ (0xD1B54A32D192ED03ULL * (row + 1))).next());
        for (std::uint64_t k = 0;; ++k) {
            if (prob < 1) {
                const double skip = std::floor(std::log1p(-rng.uniform()) / log_q);
                if (skip >= static_cast<double>(from.size - k)) break;
                k += static_cast<std::uint64_t>(skip);
            }
            if (k >= from.size) break;
            const std::uint64_t source = from.first + k;
            if (p.autapses || source != target) out.add(target, source, w, d);
            if (out.target.size() > limit)
                throw config_error(p.where, "expansion exceeds the limit of " + std::to_string(limit) + " synapses");
        }
    }
}

dense_block expand_dense(const projection& p, neuron_range from, neuron_range to, const std::string& document_file,
                         std::size_t element, const expand_limits& limits) {
    dense_block block;
    const std::uint64_t rows = to.size, cols = from.size;
    if (rows * cols > limits.max_dense_weights)
        throw config_error(p.where, "dense projection has " + std::to_string(rows * cols) +
                                        " weights; the limit is " + std::to_string(limits.max_dense_weights));
    for (std::uint64_t i = 0; i < cols; ++i) block.sources.push_back(static_cast<neuron_index>(from.first + i));
    for (std::uint64_t i = 0; i < rows; ++i) block.targets.push_back(static_cast<neuron_index>(to.first + i));
    block.delay = static_cast<std::uint16_t>(p.delay);
    block.split_rows = p.split_rows;
    block.element = element;
    if (!p.weights_file.empty()) {
        const std::filesystem::path base = std::filesystem::path(document_file).parent_path();
        const std::filesystem::path file = std::filesystem::path(p.weights_file).is_absolute()
                                               ? std::filesystem::path(p.weights_file)
                                               : base / p.weights_file;
        block.weights = read_weights_file(file.string(), rows, cols, p.where);
        return block;
    }
    // Default scale keeps the variance of a row's sum at about 1.
    const double scale = p.scale.value_or(1.0 / std::sqrt(static_cast<double>(cols)));
    block.weights.assign(rows * cols, 0.0f);
    random_stream rng(p.seed);
    if (p.init == dense_init::normal)
        for (auto& w : block.weights) w = static_cast<float>(scale * rng.normal());
    else if (p.init == dense_init::uniform)
        for (auto& w : block.weights) w = static_cast<float>(scale * (2 * rng.uniform() - 1));
    return block;
}

}  // namespace

std::string expanded_network::neuron_name(neuron_index i) const {
    const neuron_group& g = groups[group_of[i]];
    if (!g.is_population) return g.id;
    return g.id + "[" + std::to_string(i - g.first) + "]";
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
    if (ec != std::errc() || end != last || first == last || index >= g.size) return std::nullopt;
    return static_cast<neuron_index>(g.first + index);
}

namespace {

// Which connections an expansion makes.
enum class connections { all, into_local_neurons, none };

expanded_network expand_marked(const network& net, const std::string& document_file, const expand_limits& limits,
                               connections which, const std::vector<std::int64_t>* local_neurons = nullptr) {
    const symbol_table symbols(net);
    if (symbols.neuron_count() > limits.max_neurons)
        throw config_error(net.where, "network has " + std::to_string(symbols.neuron_count()) +
                                          " neurons; the limit is " + std::to_string(limits.max_neurons));
    synapse_list list;
    std::vector<bool> local;
    if (which == connections::into_local_neurons) {
        local.assign(symbols.neuron_count(), false);
        for (auto i : *local_neurons) {
            if (i < 0 || static_cast<std::uint64_t>(i) >= symbols.neuron_count())
                throw config_error(net.where, "neuron index " + std::to_string(i) + " lies outside the network's " +
                                                  std::to_string(symbols.neuron_count()) + " neurons");
            local[static_cast<std::size_t>(i)] = true;
        }
        list.local = &local;
        list.kept_fraction = symbols.neuron_count() ? static_cast<double>(local_neurons->size()) /
                                                          static_cast<double>(symbols.neuron_count())
                                                    : 1.0;
    }
    expanded_network out;
    out.name = net.name;
    const auto n = static_cast<neuron_index>(symbols.neuron_count());
    out.group_of.reserve(n);
    auto add_group = [&](const std::string& id, std::uint64_t size, bool is_population, std::uint64_t seed,
                         const neuron_params& params) {
        const auto first = static_cast<neuron_index>(out.group_of.size());
        out.group_index.emplace(id, static_cast<std::uint32_t>(out.groups.size()));
        out.group_of.insert(out.group_of.end(), size, static_cast<std::uint32_t>(out.groups.size()));
        out.groups.push_back({id, first, static_cast<neuron_index>(size), is_population, seed, params});
    };
    for (const auto& nr : net.neurons) add_group(nr.id, 1, false, 0, nr.params);
    for (const auto& p : net.populations) add_group(p.id, static_cast<std::uint64_t>(p.size), true, p.seed, p.params);

    const std::size_t elements = which == connections::none ? 0 : net.connection_order.size();
    for (std::size_t element = 0; element < elements; ++element) {
        const connection_ref& ref = net.connection_order[element];
        if (ref.kind == connection_ref::type::synapse) {
            const synapse& s = net.synapses[ref.index];
            list.add(range_of(symbols, s.to, s.where).first, range_of(symbols, s.from, s.where).first,
                     static_cast<float>(s.weight), static_cast<std::uint16_t>(s.delay));
            continue;
        }
        const projection& p = net.projections[ref.index];
        const neuron_range from = range_of(symbols, p.from, p.where);
        const neuron_range to = range_of(symbols, p.to, p.where);
        const auto w = static_cast<float>(p.weight);
        const auto d = static_cast<std::uint16_t>(p.delay);
        switch (p.kind) {
        case projection_kind::all:
            if (list.target.size() + from.size * to.size > limits.max_synapses)
                throw config_error(p.where, "expansion exceeds the limit of " + std::to_string(limits.max_synapses) +
                                                " synapses");
            list.reserve_more(from.size * to.size);
            for (std::uint64_t t = 0; t < to.size; ++t)
                if (list.keeps(to.first + t))
                    for (std::uint64_t s = 0; s < from.size; ++s)
                        if (p.autapses || from.first + s != to.first + t) list.add(to.first + t, from.first + s, w, d);
            break;
        case projection_kind::one_to_one:
            for (std::uint64_t i = 0; i < to.size; ++i)
                if (p.autapses || from.first != to.first) list.add(to.first + i, from.first + i, w, d);
            break;
        case projection_kind::random: expand_random(list, p, from, to, w, d, limits.max_synapses); break;
        case projection_kind::dense:
            if (which == connections::into_local_neurons)
                throw config_error(p.where, "a node's share of a network carries no dense projections");
            out.dense.push_back(expand_dense(p, from, to, document_file, element, limits));
            break;
        }
    }

    // Group by target with a stable counting sort: generation order within a target is
    // the canonical order (element order, then source order within a projection).
    const std::size_t m = list.target.size();
    out.in_begin.assign(static_cast<std::size_t>(n) + 1, 0);
    for (neuron_index t : list.target) ++out.in_begin[t + 1];
    for (std::size_t i = 0; i < n; ++i) out.in_begin[i + 1] += out.in_begin[i];
    std::vector<std::uint64_t> cursor(out.in_begin.begin(), out.in_begin.end() - 1);
    out.in_source.resize(m);
    out.in_weight.resize(m);
    out.in_delay.resize(m);
    for (std::size_t i = 0; i < m; ++i) {
        const auto at = cursor[list.target[i]]++;
        out.in_source[at] = list.source[i];
        out.in_weight[at] = list.weight[i];
        out.in_delay[at] = list.delay[i];
    }

    for (const auto* ports : {&net.inputs, &net.outputs}) {
        auto& named = ports == &net.inputs ? out.inputs : out.outputs;
        for (const auto& p : *ports) {
            named_neurons nn{p.id, {}};
            for (const auto& r : p.neurons) {
                const neuron_range g = range_of(symbols, r, p.where);
                for (std::uint64_t i = 0; i < g.size; ++i) nn.neurons.push_back(static_cast<neuron_index>(g.first + i));
            }
            named.push_back(std::move(nn));
        }
    }
    return out;
}

}  // namespace

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

}  // namespace dnnc::protocol
