// dnnc grow as a user runs it, before there is a lead that grows: a count that is not a
// whole number >= 1, or a missing argument, is a usage error (exit 2) and nothing reaches
// the lead; sound arguments do reach it. The "lead" is a listening socket that never answers.
#include "run_command.hpp"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

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

TEST_CASE("dnnc grow with sound arguments asks the lead") {
    silent_lead lead;
    const auto r = run_command(dnnc_binary() + " grow --timeout 1 --lead " + lead.address() + " E 3");
    CHECK(r.exit_code == 1);  // the lead never answers
    CHECK(lead.connections() >= 1);
}
