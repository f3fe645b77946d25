// dnnc gen KIND [params] [--seed S] -o FILE: a synthetic graph, written as a METIS `.graph`
// file or as a DNNC network (`.xml`) whose synapses run from the lower neuron id to the
// higher one. See docs/partitioner.md for the kinds and their parameters.
#include "commands.hpp"
#include "generate.hpp"

#include <iostream>
#include <memory>

namespace dnnc::cli {

void add_gen(CLI::App& app, action& chosen) {
    auto o = std::make_shared<gen_options>();
    auto* cmd = app.add_subcommand("gen", "Generate a synthetic graph as METIS .graph or DNNC .xml");
    std::vector<std::string> names;
    for (const auto& entry : generator_kinds()) names.push_back(entry.first);
    const std::map<std::string, std::string> aliases{
        {"er", "erdos-renyi"}, {"ws", "watts-strogatz"}, {"ba", "barabasi-albert"},
        {"rgg", "random-geometric"}, {"ff", "feed-forward"}};
    cmd->add_option("kind", o->kind,
                    "erdos-renyi (er), sbm, watts-strogatz (ws), barabasi-albert (ba), grid2d, "
                    "grid3d, random-geometric (rgg), feed-forward (ff)")
        ->required()
        ->transform(CLI::Transformer(aliases).description(""))
        ->check(CLI::IsMember(names));
    cmd->add_option("-o,--output", o->output, "Output file: .graph (METIS) or .xml (DNNC network)")
        ->required();
    cmd->add_option("--seed", o->seed, "Random seed (default 1)");
    cmd->add_option("--name", o->name, "Network name in .xml output (default: the kind)");
    cmd->add_option("--n", o->n, "Vertices (er, ws, ba, rgg)");
    cmd->add_option("--p", o->p, "Edge probability (er; ff between consecutive layers)");
    cmd->add_option("--degree", o->degree, "Expected degree instead of --p (er) or --radius (rgg)");
    cmd->add_option("--blocks", o->blocks, "Block sizes, comma-separated (sbm)")->delimiter(',');
    cmd->add_option("--p-in", o->p_in, "Edge probability inside a block (sbm)");
    cmd->add_option("--p-out", o->p_out, "Edge probability across blocks (sbm)");
    cmd->add_option("--k", o->k, "Lattice neighbours, even (ws)");
    cmd->add_option("--beta", o->beta, "Rewiring probability (ws)");
    cmd->add_option("--m", o->m, "Edges per new vertex (ba)");
    cmd->add_option("--dims", o->dims, "Grid sizes like 100x200 or 20x20x20 (grid2d, grid3d)")
        ->delimiter('x');
    cmd->add_option("--radius", o->radius, "Connection radius in the unit square (rgg)");
    cmd->add_option("--layers", o->layers, "Layer sizes, comma-separated (ff)")->delimiter(',');
    cmd->callback([o, cmd, &chosen] {
        for (const auto& p : generator_parameters) {
            if (cmd->count(p) > 0) o->given.insert(p);
        }
        chosen = [o] {
            const auto g = write_generated(*o);
            std::cout << o->output << ": " << g.vertex_count() << " vertices, " << g.edge_count() << " edges\n";
            return 0;
        };
    });
}

}  // namespace dnnc::cli
