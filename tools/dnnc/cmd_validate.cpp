// dnnc validate FILE... [--json]: parse, validate and check DNNC documents, reading their
// dense weights and counting every synapse (without storing one), so that everything a run
// would reject is reported now.
#include "commands.hpp"

#include "dnnc/plan/counts.hpp"
#include "dnnc/plan/plan.hpp"
#include "dnnc/protocol/snapshot.hpp"
#include "dnnc/protocol/xml.hpp"

#include <nlohmann/json.hpp>

#include <iostream>

namespace dnnc::cli {
namespace {

struct validate_options {
    std::vector<std::string> files;
    bool json = false;
};

nlohmann::json summary_of(const model::document& doc) {
    nlohmann::json s;
    std::uint64_t neurons = 0, synapses = 0, dense_weights = 0;
    if (doc.net) {
        plan::neurons_and_dense_blocks(*doc.net, doc.file);  // reads and checks the weights files
        const auto size = plan::size_of(*doc.net);
        neurons = size.neurons;
        synapses = size.synapses;
        dense_weights = size.dense_weights;
        s["network"] = doc.net->name;
        s["populations"] = doc.net->populations.size();
        // Counted above: the members of applied grows; these come when their ticks do.
        std::int64_t scheduled = 0;
        for (const auto& g : doc.net->grows)
            if (!g.applied) scheduled += g.add;
        if (scheduled > 0) s["scheduled_neurons"] = scheduled;
    } else {
        s["populations"] = 0;
    }
    s["neurons"] = neurons;
    s["synapses"] = synapses;
    s["dense_weights"] = dense_weights;
    s["nodes"] = doc.clu ? doc.clu->nodes.size() : 0;
    s["links"] = doc.clu ? doc.clu->links.size() : 0;
    if (doc.state) s["state_tick"] = doc.state->tick;
    return s;
}

int run_validate(const validate_options& o) {
    nlohmann::json report = nlohmann::json::array();
    bool all_valid = true;
    for (const auto& file : o.files) {
        nlohmann::json entry{{"file", file}};
        try {
            const auto doc =
                protocol::is_binary_snapshot_path(file) ? protocol::load_snapshot(file) : protocol::load_document(file);
            entry.update(summary_of(doc));
            entry["valid"] = true;
            if (!o.json) {
                std::cout << file << ": valid";
                if (doc.net) std::cout << ", " << entry["neurons"] << " neurons, " << entry["synapses"] << " synapses";
                if (entry.contains("scheduled_neurons")) std::cout << " (" << entry["scheduled_neurons"] << " more neurons by its scheduled grows)";
                if (doc.clu) std::cout << ", " << entry["nodes"] << " nodes, " << entry["links"] << " links";
                std::cout << '\n';
            }
        } catch (const config_error& e) {
            all_valid = false;
            entry["valid"] = false;
            nlohmann::json errors = nlohmann::json::array();
            for (const auto& p : e.problems())
                errors.push_back({{"file", p.where.file}, {"line", p.where.line}, {"column", p.where.column},
                                  {"message", p.message}});
            entry["errors"] = errors;
            if (!o.json) std::cerr << e.what() << '\n';
        }
        report.push_back(entry);
    }
    if (o.json) std::cout << report.dump(2) << '\n';
    return all_valid ? 0 : 2;
}

}  // namespace

void add_validate(CLI::App& app, action& chosen) {
    auto options = std::make_shared<validate_options>();
    auto* cmd = app.add_subcommand("validate", "Check DNNC documents against the schemas and the model rules");
    cmd->add_option("files", options->files, "DNNC documents")->required();
    cmd->add_flag("--json", options->json, "Print a summary per file as JSON");
    cmd->callback([options, &chosen] { chosen = [options] { return run_validate(*options); }; });
}

}  // namespace dnnc::cli
