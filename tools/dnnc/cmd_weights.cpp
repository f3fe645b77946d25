// dnnc weights --lead HOST:PORT [--projection ID] -o FILE.csv: the weights of the plastic
// synapses of a frozen network, as CSV (projection,source,target,weight), read through
// weights_reader.hpp. Also what dnnc run --weights writes.
#include "client.hpp"
#include "commands.hpp"
#include "weights_reader.hpp"

#include <iostream>
#include <memory>

namespace dnnc::cli {

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
