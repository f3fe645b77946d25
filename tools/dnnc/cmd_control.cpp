// dnnc start|freeze|resume --lead HOST:PORT and dnnc step N --lead HOST:PORT: the clock.
#include "client.hpp"
#include "commands.hpp"

#include <iostream>

namespace dnnc::cli {
namespace {

struct control_options {
    std::string lead;
    std::int64_t ticks = 1;
    bool json = false;
    client_options client;
};

void print(const control_options& o, const nlohmann::json& reply) {
    if (o.json)
        std::cout << reply.dump(2) << '\n';
    else
        std::cout << "state " << reply["state"].get<std::string>() << ", last complete tick " << reply["completed"] << '\n';
}

CLI::App* add_one(CLI::App& app, action& chosen, const char* name, const char* help, const std::string& command) {
    auto o = std::make_shared<control_options>();
    auto* cmd = app.add_subcommand(name, help);
    if (command == "step") cmd->add_option("ticks", o->ticks, "How many ticks to run")->required()->check(CLI::PositiveNumber);
    cmd->add_option("--lead", o->lead, "HOST:PORT of the lead")->required();
    cmd->add_flag("--json", o->json, "Print the lead's answer as JSON");
    o->client.add_to(cmd);
    cmd->callback([o, &chosen, command] {
        chosen = [o, command] {
            auto reply = control(o->client, o->lead, {{"command", command}, {"ticks", o->ticks}});
            if (command == "step") reply = wait_for_tick(o->client, o->lead, reply["target"].get<std::int64_t>());
            if (command == "freeze" && !reply.contains("completed")) reply["completed"] = reply["tick"];
            print(*o, reply);
            return 0;
        };
    });
    return cmd;
}

}  // namespace

void add_control(CLI::App& app, action& chosen) {
    add_one(app, chosen, "start", "Start the clock: ticks run until freeze", "start");
    add_one(app, chosen, "freeze", "Stop the clock: every node completes the current tick and pauses", "freeze");
    add_one(app, chosen, "resume", "Restart the clock after a freeze", "resume");
    add_one(app, chosen, "step", "Run N ticks, then pause", "step");
}

}  // namespace dnnc::cli
