// dnnc grow --lead HOST:PORT POPULATION N: N new members join a population of the running
// network (docs/document.md, "Growing populations").
#include "client.hpp"
#include "commands.hpp"

#include <iostream>

namespace dnnc::cli {
namespace {

struct grow_options {
    std::string lead, population;
    std::int64_t add = 0;
    bool json = false;
    client_options client;
};

int run_grow(const grow_options& o) {
    const auto reply = grow_population(o.client, o.lead, o.population, o.add);
    if (o.json) {
        std::cout << reply.dump(2) << '\n';
        return 0;
    }
    std::cout << "grew " << reply["population"].get<std::string>() << " by " << reply["added"] << " to " << reply["size"]
              << " neurons (the first new one " << reply["first_new"].get<std::string>() << ") at tick " << reply["tick"]
              << " (run paused " << reply["paused_ms"] << " ms)\n";
    return 0;
}

}  // namespace

void add_grow(CLI::App& app, action& chosen) {
    auto o = std::make_shared<grow_options>();
    auto* cmd = app.add_subcommand("grow", "Add N new members to a population of the running network");
    cmd->add_option("population", o->population, "The population's id")->required();
    cmd->add_option("n", o->add, "How many members to add (a whole number >= 1)")->required();
    cmd->add_option("--lead", o->lead, "HOST:PORT of the lead")->required();
    cmd->add_flag("--json", o->json, "Print the lead's answer as JSON");
    o->client.add_to(cmd);
    cmd->callback([o, &chosen] { chosen = [o] { return run_grow(*o); }; });
}

}  // namespace dnnc::cli
