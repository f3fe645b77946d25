// The clock and its safety net: dnnc start|freeze|resume|recover --lead HOST:PORT,
// dnnc step N --lead HOST:PORT, dnnc checkpoint --every T [--dir D] [--keep M] | --now --lead HOST:PORT.
#include "client.hpp"
#include "commands.hpp"

#include "dnnc/model/model.hpp"

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
    if (command == "step") cmd->add_option("ticks", o->ticks, "How many ticks to run")->required()->check(CLI::Range(std::int64_t{1}, model::max_tick_count));
    cmd->add_option("--lead", o->lead, "HOST:PORT of the lead")->required();
    cmd->add_flag("--json", o->json, "Print the lead's answer as JSON");
    o->client.add_to(cmd);
    cmd->callback([o, &chosen, command] {
        chosen = [o, command] {
            protocol::control_request request(protocol::control_kind(command));
            request.ticks = o->ticks;
            if (command == "freeze") {  // the lead says {"state", "tick"}
                auto reply = control(o->client, o->lead, request);
                if (!reply.contains("completed")) reply["completed"] = reply["tick"];
                print(*o, reply);
                return 0;
            }
            auto progress = progress_after(o->client, o->lead, request);
            if (command == "step") progress = wait_for_tick(o->client, o->lead, progress.target);
            print(*o, protocol::encode(progress));
            return 0;
        };
    });
    return cmd;
}

struct checkpoint_options {
    std::string lead, dir;
    std::int64_t every = 0;
    int keep = 3;
    bool now = false;
    client_options client;
};

}  // namespace

void add_control(CLI::App& app, action& chosen) {
    add_one(app, chosen, "start", "Start the clock: ticks run until freeze", "start");
    add_one(app, chosen, "freeze", "Stop the clock: every node completes the current tick and pauses", "freeze");
    add_one(app, chosen, "resume", "Restart the clock after a freeze", "resume");
    add_one(app, chosen, "step", "Run N ticks, then pause", "step");

    auto c = std::make_shared<checkpoint_options>();
    auto* checkpoint = app.add_subcommand("checkpoint", "Snapshot the running network every T ticks into a folder on the lead");
    checkpoint->add_option("--lead", c->lead, "HOST:PORT of the lead")->required();
    auto* every = checkpoint->add_option("--every", c->every, "Ticks between checkpoints (0: none)")->check(CLI::Range(std::int64_t{0}, model::max_tick_count));
    checkpoint->add_flag("--now", c->now, "Write one checkpoint of the frozen network now")->excludes(every);
    checkpoint->add_option("--dir", c->dir, "Folder under the lead's STATE_DIR/checkpoints (default: the network's name)");
    checkpoint->add_option("--keep", c->keep, "How many checkpoints to keep")->check(CLI::PositiveNumber);
    c->client.add_to(checkpoint);
    checkpoint->callback([c, every, &chosen] {
        if (!c->now && every->count() == 0) throw CLI::RequiredError("checkpoint: give --every T or --now");
        chosen = [c] {
            if (c->now) {
                protocol::control_request now(protocol::control_request::kind::checkpoint);
                now.now = true;
                const auto reply = control(c->client, c->lead, now);
                std::cout << "checkpoint of tick " << reply["tick"] << ": " << reply["last"].get<std::string>() << '\n';
                return 0;
            }
            protocol::control_request request(protocol::control_request::kind::checkpoint);
            request.every = c->every;
            request.keep = c->keep;
            if (!c->dir.empty()) request.dir = c->dir;
            const auto reply = control(c->client, c->lead, request);
            std::cout << "checkpoints every " << reply["every"] << " ticks into " << reply["dir"].get<std::string>()
                      << ", keeping " << reply["keep"] << " (from the next start, resume or step)\n";
            return 0;
        };
    });

    auto r = std::make_shared<control_options>();
    auto* recover = app.add_subcommand("recover", "After a node died: restore the last checkpoint on the nodes still alive");
    recover->add_option("--lead", r->lead, "HOST:PORT of the lead")->required();
    recover->add_flag("--json", r->json, "Print the lead's answer as JSON");
    r->client.add_to(recover);
    recover->callback([r, &chosen] {
        chosen = [r] {
            const auto reply = control(r->client, r->lead, protocol::control_request::kind::recover);
            if (r->json) {
                std::cout << reply.dump(2) << '\n';
                return 0;
            }
            std::cout << "recovered from " << reply["recovered_from"].get<std::string>() << " onto " << reply["nodes"].size()
                      << " nodes without " << reply["removed"].dump() << "; frozen at tick " << reply["tick"] << '\n';
            return 0;
        };
    });
}

}  // namespace dnnc::cli
