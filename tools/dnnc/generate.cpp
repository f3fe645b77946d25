#include "generate.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/partitioner/generators.hpp"
#include "dnnc/partitioner/metis_io.hpp"
#include "dnnc/protocol/xml.hpp"

#include <cmath>
#include <fstream>

namespace dnnc::cli {

namespace dp = dnnc::partitioner;

const std::map<std::string, std::vector<std::string>>& generator_kinds() {
    static const std::map<std::string, std::vector<std::string>> table{
        {"erdos-renyi", {"--n", "--p|--degree"}},
        {"sbm", {"--blocks", "--p-in", "--p-out"}},
        {"watts-strogatz", {"--n", "--k", "--beta"}},
        {"barabasi-albert", {"--n", "--m"}},
        {"grid2d", {"--dims"}},
        {"grid3d", {"--dims"}},
        {"random-geometric", {"--n", "--radius|--degree"}},
        {"feed-forward", {"--layers", "--p"}},
    };
    return table;
}

const std::vector<std::string> generator_parameters{"--n", "--p", "--degree", "--blocks", "--p-in",
                                               "--p-out", "--k", "--beta", "--m", "--dims",
                                               "--radius", "--layers"};

namespace {

void check_parameters(const gen_options& o) {
    std::set<std::string> allowed;
    for (const auto& req : generator_kinds().at(o.kind)) {
        std::vector<std::string> alternatives;
        for (std::size_t start = 0;;) {
            const auto bar = req.find('|', start);
            alternatives.push_back(req.substr(start, bar - start));
            if (bar == std::string::npos) break;
            start = bar + 1;
        }
        std::size_t present = 0;
        for (const auto& a : alternatives) {
            allowed.insert(a);
            present += o.given.count(a);
        }
        std::string names = alternatives[0];
        for (std::size_t i = 1; i < alternatives.size(); ++i) names += " or " + alternatives[i];
        if (present == 0) throw usage_error("gen " + o.kind + ": " + names + " is required");
        if (present > 1) throw usage_error("gen " + o.kind + ": give " + names + ", not both");
    }
    for (const auto& g : o.given) {
        if (allowed.count(g) == 0) throw usage_error("gen " + o.kind + ": " + g + " does not apply");
    }
    if (o.given.count("--dims")) {
        const std::size_t want = o.kind == "grid2d" ? 2 : 3;
        if (o.dims.size() != want) {
            throw usage_error("gen " + o.kind + ": --dims needs " + std::to_string(want) +
                              " sizes, like " + (want == 2 ? "100x200" : "20x20x20"));
        }
    }
    if (o.given.count("--degree") && !(o.degree >= 0 && std::isfinite(o.degree))) {
        throw usage_error("gen " + o.kind + ": --degree must be >= 0");
    }
}

dp::graph generate(const gen_options& o) {
    const auto& k = o.kind;
    if (k == "erdos-renyi") {
        if (o.n == 0) throw usage_error("gen erdos-renyi: --n must be at least 1");
        const double p = o.given.count("--p") ? o.p
                                              : (o.n > 1 ? o.degree / static_cast<double>(o.n - 1) : 0);
        return dp::erdos_renyi(o.n, p, o.seed);
    }
    if (k == "sbm") return dp::stochastic_block_model(o.blocks, o.p_in, o.p_out, o.seed);
    if (k == "watts-strogatz") return dp::watts_strogatz(o.n, o.k, o.beta, o.seed);
    if (k == "barabasi-albert") return dp::barabasi_albert(o.n, o.m, o.seed);
    if (k == "grid2d") return dp::grid_2d(o.dims[0], o.dims[1]);
    if (k == "grid3d") return dp::grid_3d(o.dims[0], o.dims[1], o.dims[2]);
    if (k == "random-geometric") {
        if (o.n == 0) throw usage_error("gen random-geometric: --n must be at least 1");
        // Expected degree d = n π r² away from the border.
        constexpr double pi = 3.14159265358979323846;
        const double r = o.given.count("--radius")
                             ? o.radius
                             : std::sqrt(o.degree / (pi * static_cast<double>(o.n)));
        return dp::random_geometric(o.n, r, o.seed);
    }
    return dp::layered_feed_forward(o.layers, o.p, o.seed);
}

std::string to_network_xml(const dp::graph& g, const std::string& name) {
    model::document doc;
    model::network net;
    net.name = name;
    net.neurons.reserve(g.vertex_count());
    for (dp::vertex_id v = 0; v < g.vertex_count(); ++v) {
        model::neuron neuron;
        neuron.id = "v" + std::to_string(v);
        net.neurons.push_back(std::move(neuron));
    }
    net.synapses.reserve(g.edge_count());
    for (dp::vertex_id v = 0; v < g.vertex_count(); ++v) {
        for (auto u = g.neighbors_begin(v); u != g.neighbors_end(v); ++u) {
            if (*u < v) continue;
            model::synapse s;
            s.from = net.neurons[v].id;
            s.to = net.neurons[*u].id;
            net.connection_order.push_back({model::connection_ref::type::synapse, net.synapses.size()});
            net.synapses.push_back(std::move(s));
        }
    }
    doc.net = std::move(net);
    return protocol::serialize(doc);
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

dp::graph write_generated(const gen_options& o) {
    if (!generator_kinds().count(o.kind)) throw usage_error("gen: unknown kind '" + o.kind + "'");
    check_parameters(o);
    const bool xml = ends_with(o.output, ".xml");
    if (!xml && !ends_with(o.output, ".graph")) {
        throw usage_error("gen: the output must end in .graph (METIS) or .xml (DNNC), got " + o.output);
    }
    dp::graph g = generate(o);
    if (xml) {
        const std::string text = to_network_xml(g, o.name.empty() ? o.kind : o.name);
        std::ofstream out(o.output, std::ios::binary | std::ios::trunc);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        out.close();
        if (!out) throw io_error("cannot write " + o.output);
    } else {
        dp::write_metis(g, o.output);
    }
    return g;
}

}  // namespace dnnc::cli
