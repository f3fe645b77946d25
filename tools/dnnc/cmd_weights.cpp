// dnnc weights --lead HOST:PORT [--projection ID] -o FILE.csv: the weights of the plastic
// synapses of a frozen network, as CSV (projection,source,target,weight), read page by page
// from one node after another through the lead, so that neither the lead nor this client
// holds a projection's weights at once. Also what dnnc run --weights writes.
#include "client.hpp"
#include "commands.hpp"

#include "dnnc/core/error.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

namespace dnnc::cli {

using json = nlohmann::json;

std::uint64_t save_weights(const client_options& o, const std::string& lead, const std::string& path, const std::string& projection) {
    std::ofstream out(path);
    if (!out) throw io_error("cannot write " + path);
    out << "projection,source,target,weight\n";
    constexpr std::uint64_t page = 100000;
    std::uint64_t written = 0;
    std::size_t nodes = 1;
    char value[32];
    for (std::size_t node = 0; node < nodes; ++node)
        for (std::uint64_t from = 0, total = 1; from < total; from += page) {
            const json request{{"node", node}, {"from", from}, {"limit", page}};
            const auto reply = json::parse(call_node(o, lead, {protocol::message_type::weights, 0, 0, request.dump()}).payload);
            nodes = reply.at("nodes").get<std::size_t>();
            total = reply.at("total").get<std::uint64_t>();
            const auto& plastic = reply.at("plastic");
            if (!projection.empty() && std::find(plastic.begin(), plastic.end(), projection) == plastic.end())
                throw usage_error("no plastic projection '" + projection + "' (plastic: " + (plastic.empty() ? "none" : plastic.dump()) + ")");
            for (const auto& row : reply.at("rows")) {
                const auto label = row[0].get<std::string>();
                if (!projection.empty() && label != projection) continue;
                std::snprintf(value, sizeof value, "%.9g", static_cast<double>(row[3].get<float>()));
                out << label << ',' << row[1].get<std::string>() << ',' << row[2].get<std::string>() << ',' << value << '\n';
                ++written;
            }
        }
    if (!out.flush()) throw io_error("cannot write " + path);
    return written;
}

namespace {
struct weights_options {
    std::string lead, out, projection;
    client_options client;
};
}  // namespace

void add_weights(CLI::App& app, action& chosen) {
    auto o = std::make_shared<weights_options>();
    auto* cmd = app.add_subcommand("weights", "Write the frozen network's plastic weights as CSV (projection,source,target,weight)");
    cmd->add_option("--lead", o->lead, "HOST:PORT of the lead")->required();
    cmd->add_option("-o,--out", o->out, "CSV file to write")->required();
    cmd->add_option("--projection", o->projection, "Only this plastic projection (its id)");
    o->client.add_to(cmd);
    cmd->callback([o, &chosen] {
        chosen = [o] {
            const auto n = save_weights(o->client, o->lead, o->out, o->projection);
            std::cout << "weights: " << o->out << " (" << n << " synapses)\n";
            return 0;
        };
    });
}

}  // namespace dnnc::cli
