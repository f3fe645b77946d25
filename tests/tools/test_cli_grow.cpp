// dnnc grow as a user runs it, before there is a lead that grows: a count that is not a
// whole number >= 1, or a missing argument, is a usage error (exit 2) and nothing reaches
// the lead; sound arguments send the lead's grow command, whose answer is printed. The
// "lead" is a listening socket, silent or answering one request as the lead will.
#include "dnnc/protocol/frame.hpp"
#include "run_command.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>

using namespace dnnc::test;

namespace {

// A socket listening on a free local port that counts the connections made to it.
class silent_lead {
public:
    silent_lead() {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        REQUIRE(fd_ >= 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
        REQUIRE(::listen(fd_, 16) == 0);
        socklen_t length = sizeof address;
        REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0);
        port_ = ntohs(address.sin_port);
        ::fcntl(fd_, F_SETFL, O_NONBLOCK);
    }
    ~silent_lead() { ::close(fd_); }
    silent_lead(const silent_lead&) = delete;
    silent_lead& operator=(const silent_lead&) = delete;

    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
    // Waits up to 10 s for one request frame and answers it with a control_reply of `reply`;
    // returns the request's payload (empty when none came or the answer could not be sent).
    // Runs beside the test's thread, so it asserts nothing itself.
    std::string answer_once(const std::string& reply) {
        pollfd waiting{fd_, POLLIN, 0};
        if (::poll(&waiting, 1, 10000) != 1) return {};
        const int c = ::accept(fd_, nullptr, nullptr);
        std::string bytes;
        const auto read_to = [&](std::size_t size) {
            char buffer[4096];
            while (bytes.size() < size) {
                pollfd readable{c, POLLIN, 0};
                if (::poll(&readable, 1, 10000) != 1) return false;
                const auto n = ::read(c, buffer, std::min(sizeof buffer, size - bytes.size()));
                if (n <= 0) return false;
                bytes.append(buffer, static_cast<std::size_t>(n));
            }
            return true;
        };
        std::string payload;
        if (read_to(dnnc::protocol::frame_header_size)) {
            const auto header = dnnc::protocol::decode_header(bytes, dnnc::protocol::default_max_payload, false);
            if (read_to(dnnc::protocol::frame_header_size + header.body_size())) {
                const std::string_view all(bytes);
                payload = dnnc::protocol::decode_body(header, all.substr(0, dnnc::protocol::frame_header_size),
                                                      all.substr(dnnc::protocol::frame_header_size), {})
                              .payload;
                const auto out = dnnc::protocol::encode_frame({dnnc::protocol::message_type::control_reply, 0, header.request_id, reply});
                if (::write(c, out.data(), out.size()) != static_cast<ssize_t>(out.size())) payload.clear();
            }
        }
        ::close(c);
        return payload;
    }
    // The connections made since the last call (the kernel completes them without us).
    int connections() {
        int n = 0;
        for (int c; (c = ::accept(fd_, nullptr, nullptr)) >= 0; ++n) ::close(c);
        return n;
    }

private:
    int fd_ = -1;
    int port_ = 0;
};

}  // namespace

TEST_CASE("dnnc grow refuses a count that is not a whole number >= 1, and sends nothing") {
    silent_lead lead;
    const std::string grow = dnnc_binary() + " grow --timeout 1 --lead " + lead.address() + " E ";
    for (const std::string n : {"0", "-3", "2.5", "many", "''"}) {
        INFO("N = " << n);
        const auto r = run_command(grow + n);
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK_FALSE(r.err.empty());
        CHECK(lead.connections() == 0);
    }
    const auto zero = run_command(grow + "0");
    CHECK_THAT(zero.err, Catch::Contains("grow: the number of members to add must be a whole number >= 1 (got 0)"));
}

TEST_CASE("dnnc grow needs a population, a count and a lead") {
    silent_lead lead;
    for (const std::string arguments : {"E", "", "E 3 --json"}) {
        INFO(arguments);
        const std::string lead_option = arguments == "E 3 --json" ? "" : " --lead " + lead.address();
        const auto r = run_command(dnnc_binary() + " grow " + arguments + lead_option);
        CHECK(r.exit_code == 2);
        CHECK(lead.connections() == 0);
    }
}

TEST_CASE("dnnc grow sends the lead's grow command and prints its answer") {
    silent_lead lead;
    const auto silent = run_command(dnnc_binary() + " grow --timeout 1 --lead " + lead.address() + " E 3");
    CHECK(silent.exit_code == 1);  // the lead never answers
    CHECK(lead.connections() >= 1);

    const nlohmann::json answer{{"population", "E"}, {"added", 3}, {"size", 103}, {"first_new", "E[100]"},
                                {"tick", 250}, {"paused_ms", 1.5}};
    for (const bool json : {false, true}) {
        INFO("--json " << json);
        auto request = std::async(std::launch::async, [&] { return lead.answer_once(answer.dump()); });
        const auto r = run_command(dnnc_binary() + " grow --lead " + lead.address() + " E 3" + (json ? " --json" : ""));
        CHECK(nlohmann::json::parse(request.get()) == nlohmann::json{{"command", "grow"}, {"population", "E"}, {"add", 3}});
        CHECK(r.exit_code == 0);
        if (json)
            CHECK(nlohmann::json::parse(r.out) == answer);
        else
            CHECK(r.out == "grew E by 3 to 103 neurons (the first new one E[100]) at tick 250 (run paused 1.5 ms)\n");
    }
}
