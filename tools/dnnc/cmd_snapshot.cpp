// dnnc snapshot --lead HOST:PORT -o FILE (the network must be frozen) and
// dnnc restore FILE [--cluster OTHER.xml] --to HOST:PORT [--replace]: save everything a
// network knows, and continue it later on the same or another cluster.
#include "client.hpp"
#include "commands.hpp"

#include "dnnc/model/check.hpp"
#include "dnnc/protocol/snapshot.hpp"
#include "dnnc/protocol/snapshot_file.hpp"
#include "dnnc/protocol/xml.hpp"

#include <iostream>
#include <optional>

namespace dnnc::cli {
namespace {

struct snapshot_options {
    std::string lead, out;
    client_options client;
};

struct restore_options {
    std::string file, cluster, to;
    bool replace = false;
    client_options client;
};

int run_snapshot(const snapshot_options& o) {
    const auto saved = save_snapshot_of(o.client, o.lead, o.out);
    std::cout << "snapshot of '" << saved.network << "' at tick " << saved.tick << ": " << saved.neurons << " neurons -> " << o.out << '\n';
    return 0;
}

int run_restore(const restore_options& o) {
    std::optional<model::cluster> other;
    if (!o.cluster.empty()) {
        other = protocol::load_document(o.cluster).clu;
        if (!other) throw usage_error(o.cluster + ": the document has no <cluster>");
    }
    // The snapshot's own cluster, or the other one, whose clock the lead then is.
    auto on_its_cluster = [&](model::document& doc) {
        if (other) {
            doc.clu = other;
            if (doc.run) doc.run->clock.clear();
        }
        if (!doc.clu) throw usage_error(o.file + ": no <cluster>; give --cluster OTHER.xml");
        model::check_document(doc);
    };
    nlohmann::json summary;
    if (protocol::is_binary_snapshot_path(o.file)) {
        // Every state entry must fit the network: read through and checked before anything
        // is sent, then uploaded in pieces (rewritten first when the cluster changes).
        protocol::check_snapshot_file(o.file);
        summary = restore_binary_snapshot(o.client, o.to, o.file, o.replace, on_its_cluster);
    } else {
        model::document doc = protocol::load_snapshot(o.file);
        on_its_cluster(doc);
        protocol::states_of(doc, model::expand_neurons(*doc.net));
        summary = nlohmann::json::parse(
            call_node(o.client, o.to, {protocol::message_type::submit, o.replace ? protocol::replace_flag : std::uint16_t{0}, 0, submission_of(doc)})
                .payload);
    }
    std::cout << "network '" << summary["network"].get<std::string>() << "' restored on " << summary["nodes"].size()
              << " nodes, frozen at tick " << summary["tick"] << " (dnnc resume or dnnc step to go on)\n";
    return 0;
}

}  // namespace

void add_snapshot(CLI::App& app, action& chosen) {
    auto s = std::make_shared<snapshot_options>();
    auto* snap = app.add_subcommand("snapshot", "Save the frozen network's complete state (XML, or binary for .dnncs)");
    snap->add_option("--lead", s->lead, "HOST:PORT of the lead")->required();
    snap->add_option("-o,--output", s->out, "Snapshot file: FILE.xml or FILE.dnncs")->required();
    s->client.add_to(snap);
    snap->callback([s, &chosen] { chosen = [s] { return run_snapshot(*s); }; });

    auto r = std::make_shared<restore_options>();
    auto* restore = app.add_subcommand("restore", "Install a snapshot on a cluster, frozen at its tick");
    restore->add_option("file", r->file, "Snapshot (XML or .dnncs)")->required();
    restore->add_option("--cluster", r->cluster, "Run it on this document's <cluster> instead");
    restore->add_option("--to", r->to, "HOST:PORT of the node that becomes the lead")->required();
    restore->add_flag("--replace", r->replace, "Replace the network the nodes already serve");
    r->client.add_to(restore);
    restore->callback([r, &chosen] { chosen = [r] { return run_restore(*r); }; });
}

}  // namespace dnnc::cli
