#include "dnnc/node_server/node.hpp"

#include "dnnc/node_server/log.hpp"
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/node_server/secret.hpp"
#include "dnnc/node_server/signal_inbox.hpp"
#include "http/http_server.hpp"
#include "lead/lead.hpp"
#include "node_messages.hpp"
#include "net/relays.hpp"
#include "tasks.hpp"
#include "worker/worker.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <mutex>
#include <string>

#include <unistd.h>

namespace dnnc::node_server {

using json = nlohmann::json;
using protocol::frame;
using protocol::message_type;

namespace {

// status, heartbeat, shutdown.
class admin_module final : public module {
public:
    admin_module(server& srv, std::function<json()> status, std::function<json(const std::string& payload)> heartbeat)
        : srv_(srv), status_(std::move(status)), heartbeat_(std::move(heartbeat)) {}
    std::vector<message_type> handles() const override {
        return {message_type::status, message_type::heartbeat, message_type::shutdown};
    }
    void handle(const frame& request, responder respond) override {
        switch (request.type) {
        case message_type::status: respond(reply_of(message_type::status_reply, status_().dump())); return;
        case message_type::heartbeat: respond(reply_of(message_type::heartbeat_reply, heartbeat_(request.payload).dump())); return;
        case message_type::shutdown:
            DNNC_LOG(info, "shutdown requested");
            respond(reply_of(message_type::shutdown_reply));
            srv_.stop();
            return;
        default: throw protocol_error("unexpected frame");
        }
    }

private:
    server& srv_;
    std::function<json()> status_;
    std::function<json(const std::string& payload)> heartbeat_;
};

}  // namespace

// Every node is a worker (its own share of a network); the node a document is submitted to
// is also the lead. Both are modules of one server and share its peer client and task pool.
struct node::impl {
    node_options options;
    signal_inbox signals_in;  // outlives the server, whose thread adopts links into it
    server srv;
    peer_client calls;  // configure, probes, clock, captures
    task_pool tasks;
    std::shared_ptr<worker> own;
    std::shared_ptr<lead> leader;
    std::shared_ptr<standby> backup;  // of another node's lead
    std::unique_ptr<http_server> page;  // the live page, when asked for; stopped before the tasks end
    std::mutex lead_page_mutex;
    std::string lead_page;  // where the lead's page is, as its last heartbeat said

    explicit impl(node_options o)
        : options(std::move(o)),
          signals_in(options.server.max_payload),
          srv(options.server),
          calls(options.server.secret, options.server.max_payload, options.server.tls) {
        srv.hand_over(message_type::signal_link, [this](const frame& opening, int socket, protocol::frame_auth auth) {
            signals_in.adopt(socket, opening.payload, std::move(auth));
        });
        srv.hand_over(message_type::relay, relays::carry);
        own = std::make_shared<worker>(options, calls, signals_in, tasks,
                                       worker::hooks{[this](const protocol::tick_report& report) { leader->report(report); },
                                                     [this] { leader->resign(); },
                                                     [this](const std::string& lead) { backup->forget_unless_led_by(lead); },
                                                     [this] { backup->forget(); }});
        leader = std::make_shared<lead>(options, srv, calls, tasks, *own);
        backup = std::make_shared<standby>(options, [this](const replica& r) { leader->take_over(r); });
        srv.add_module(own);
        srv.add_module(leader);
        srv.add_module(backup);
        srv.add_module(std::make_shared<admin_module>(srv, [this] { return status(); },
                                                      [this](const std::string& payload) { return heartbeat(payload); }));
        if (options.http_port >= 0) page = std::make_unique<http_server>(page_options(), page_handlers());
    }

    http_options page_options() const {
        http_options o;
        o.bind = options.http_bind;
        o.port = static_cast<std::uint16_t>(options.http_port);
        if (!options.server.secret.empty()) {
            o.secret = options.server.secret;
            o.token = http_token(options.server.secret);
        }
        return o;
    }

    // The page reads what `dnnc status` reads, the spikes without draining them, and drives
    // the clock as `dnnc freeze/resume/step` do (off the page's thread: a freeze waits).
    http_handlers page_handlers() {
        http_handlers h;
        h.status = [this] { return status(); };
        h.spikes = [this](const json& request) { return leader->peek_spikes(request); };
        h.control = [this](const protocol::control_request& command, http_handlers::done done) {
            tasks.run([this, command, done = std::move(done)] {
                try {
                    done(200, leader->control(command));
                } catch (const dnnc::error& e) {
                    done(409, json{{"error", e.what()}});
                } catch (const std::exception& e) {
                    done(500, json{{"error", e.what()}});
                }
            });
        };
        h.snapshot = [this](std::uint64_t from, std::size_t count, std::string buffer, http_handlers::done_piece done) {
            tasks.run([this, from, count, buffer = std::move(buffer), done = std::move(done)]() mutable {
                http_handlers::snapshot_piece answer;
                try {
                    auto piece = leader->snapshot_piece_at(from, count, std::move(buffer));
                    answer.total = piece.total;
                    answer.capture = piece.capture;
                    answer.bytes = std::move(piece.bytes);
                } catch (const dnnc::error& e) {
                    answer.http_status = 409;
                    answer.error = e.what();
                } catch (const std::exception& e) {
                    answer.http_status = 500;
                    answer.error = e.what();
                }
                done(std::move(answer));
            });
        };
        return h;
    }

    std::string page_address() const { return options.http_bind + ":" + std::to_string(page->port()); }

    // A lead's heartbeat names the lead ({"lead": ID}: its standby counts it as the lead
    // alive) and its page ({"page": HOST:PORT}), so that the page of a node that does not
    // lead can say where the lead's is; the reply names this node's page.
    json heartbeat(const std::string& payload) {
        if (!payload.empty()) {
            const auto beat = json::parse(payload, nullptr, false);
            if (beat.is_object() && beat.contains("page") && beat["page"].is_string()) {
                std::lock_guard<std::mutex> lock(lead_page_mutex);
                lead_page = beat["page"].get<std::string>();
            }
            if (beat.is_object() && beat.contains("lead") && beat["lead"].is_string())
                backup->lead_heard(beat["lead"].get<std::string>());
        }
        json reply = own->heartbeat();
        if (page) reply["page"] = page_address();
        return reply;
    }

    // The pid tells a starter which process answers on the port (see start_local_cluster).
    json status() {
        protocol::node_status s;
        s.pid = getpid();
        own->describe(s);
        leader->describe(s);
        backup->describe(s);
        if (page) s.http = protocol::node_status::page_status{page_address(), !options.server.secret.empty()};
        if (s.role != "lead") {
            std::lock_guard<std::mutex> lock(lead_page_mutex);
            if (!lead_page.empty()) s.lead_page = lead_page;
        }
        return protocol::encode(s);
    }
};

std::string default_state_dir() {
    if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state) return std::string(state) + "/dnnc";
    if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.local/state/dnnc";
    return "/tmp/dnnc-state-" + std::to_string(getuid());
}

std::uint64_t parse_byte_size(const std::string& text) {
    std::size_t used = 0;
    double value = -1;
    try {
        value = std::stod(text, &used);
    } catch (const std::exception&) {
    }
    const std::string unit = text.substr(std::min(used, text.size()));
    const std::string units = "KMGT";
    const auto power = unit.empty() ? 0 : units.find(unit) + 1;
    if (value < 0 || used == 0 || (!unit.empty() && (unit.size() != 1 || power == 0)) || !std::isfinite(value))
        throw usage_error("'" + text + "' is not a size (bytes, or a number followed by K, M, G or T)");
    return static_cast<std::uint64_t>(value * std::pow(1024.0, static_cast<double>(power)));
}

node::node(node_options options) : impl_(std::make_unique<impl>(std::move(options))) {}

node::~node() {
    stop();
    // The standby's watch ends first (it may be taking over); the run goes before the
    // simulation its clock drives; tasks may still use both.
    impl_->backup->shutdown();
    impl_->leader->shutdown();
    impl_->own->shutdown();
    impl_->tasks.wait_all();
}

void node::start() {
    // The page first: the lead names its address in its heartbeats.
    if (impl_->page) {
        impl_->page->start();
        impl_->leader->serve_page_at(impl_->page_address());
    }
    impl_->srv.start();
}
std::uint16_t node::port() const { return impl_->srv.port(); }
std::uint16_t node::http_port() const { return impl_->page ? impl_->page->port() : 0; }
void node::wait() { impl_->srv.wait(); }
void node::stop() {
    if (impl_->page) impl_->page->stop();
    impl_->leader->stop();
    impl_->srv.stop();
}

}  // namespace dnnc::node_server
