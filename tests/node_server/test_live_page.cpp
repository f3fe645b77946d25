// The live page (live_page.cpp) in a headless Chromium, served by a stand-in for a node
// written here: a page whose node does not answer its first status request (a standby busy
// taking over, a node restarting) asks again and shows the node once it answers. Skipped
// without Chromium, as the other browser tests are.
#include "../tools/run_command.hpp"
#include "http/http_server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <istream>
#include <string>
#include <thread>
#include <vector>

using namespace dnnc::test;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// Serves the live page at /, drops the first `dropped` status requests without an answer,
// answers the later ones with a status of node "z", and /api/spikes with nothing; one
// request a connection.
class stand_in_node {
public:
    explicit stand_in_node(int dropped) : dropped_(dropped), acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}) {
        serving_ = std::thread([this] { serve(); });
    }
    ~stand_in_node() {
        stopping_ = true;
        boost::system::error_code ec;
        tcp::socket wake(io_);
        wake.connect(acceptor_.local_endpoint(), ec);
        serving_.join();
        for (auto& t : answering_) t.join();
    }
    int port() const { return acceptor_.local_endpoint().port(); }
    int status_requests() const { return status_requests_; }

private:
    void serve() {
        while (true) {
            tcp::socket s(io_);
            boost::system::error_code ec;
            acceptor_.accept(s, ec);
            if (stopping_) return;
            if (!ec) answering_.emplace_back([this, s = std::move(s)]() mutable { answer(s); });
        }
    }
    void answer(tcp::socket& s) {
        boost::system::error_code ec;
        asio::streambuf head;
        asio::read_until(s, head, "\r\n\r\n", ec);
        if (ec) return;
        std::string line;
        std::istream(&head) >> line >> line;  // the method, then the target
        std::string type = "application/json", body = "{}";
        if (line.rfind("/api/status", 0) == 0) {
            if (status_requests_++ < dropped_) return;  // closed without an answer
            body = R"({"node":"z","role":"lead","state":"running","tick":5,"network":"stand-in","nodes":[]})";
        } else if (line.rfind("/api/spikes", 0) != 0) {
            type = "text/html";
            body = dnnc::node_server::live_page();
        }
        const auto reply = "HTTP/1.1 200 OK\r\nContent-Type: " + type + "\r\nContent-Length: " + std::to_string(body.size()) +
                           "\r\nConnection: close\r\n\r\n" + body;
        asio::write(s, asio::buffer(reply), ec);
    }

    const int dropped_;
    std::atomic<int> status_requests_{0};
    std::atomic<bool> stopping_{false};
    asio::io_context io_;
    tcp::acceptor acceptor_;
    std::thread serving_;
    std::vector<std::thread> answering_;  // joined when the node goes
};

}  // namespace

TEST_CASE("a live page whose node does not answer its first status asks again and shows the node") {
    if (run_command("command -v chromium").exit_code != 0) {
        WARN("no chromium: the page is not loaded");
        return;
    }
    for (const int dropped : {0, 1, 3}) {
        stand_in_node node(dropped);
        const auto dom = run_command("timeout 60 chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=5000 --dump-dom "
                                     "'http://127.0.0.1:" + std::to_string(node.port()) + "/?poll'");
        INFO("dropped " << dropped << "; chromium exited " << dom.exit_code << ": " << dom.err.substr(0, 2000));
        CHECK(node.status_requests() > dropped);
        CHECK_THAT(dom.out, Catch::Contains("id=\"node\">z<"));
        CHECK_THAT(dom.out, Catch::Contains("id=\"network\">stand-in<"));
    }
}

TEST_CASE("the page carries the status it was served with, and no status text can end its element") {
    const std::string plain = dnnc::node_server::live_page();
    const auto with = dnnc::node_server::live_page_with({{"standby_node", "b"}, {"network", "</script><b>"}});
    CHECK_THAT(with, Catch::Contains(R"(id="status-at-load">{"network":"\u003c/script>\u003cb>","standby_node":"b"}</script>)"));
    auto count = [](const std::string& text, const std::string& what) {
        std::size_t n = 0;
        for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
        return n;
    };
    CHECK(count(with, "</script>") == count(plain, "</script>"));
}
