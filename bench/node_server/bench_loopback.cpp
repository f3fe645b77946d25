// bench_loopback: the raw loopback round trip that a lockstep tick is measured against. A
// thread echoes 64-byte messages over one TCP connection on 127.0.0.1 (TCP_NODELAY, as the
// nodes use); the client times --trips round trips after 1,000 untimed ones, twice:
//   polled:   both ends spin on non-blocking reads, as lockstep runners do while they wait
//             (two threads on two cores, no scheduler in the path): the peer of the tick;
//   blocking: both ends sleep in read(): how fast the scheduler wakes a thread, which on a
//             virtual machine swings with load (about 4 us while another thread keeps a
//             core busy and the two share the other, 75-80 us with idle cores here).
// Prints the medians and 90th percentiles in microseconds as one JSON object.
#include <boost/asio.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using message = std::array<char, 64>;

namespace {

// Reads the whole message; polling spins on the non-blocking socket. False at the end of
// the stream.
bool read_message(tcp::socket& s, message& m, bool polling) {
    std::size_t got = 0;
    while (got < m.size()) {
        boost::system::error_code ec;
        got += s.read_some(asio::buffer(m.data() + got, m.size() - got), ec);
        if (polling && (ec == asio::error::would_block || ec == asio::error::try_again)) continue;
        if (ec) return false;
    }
    return true;
}

struct percentiles {
    double median, p90;
};

percentiles round_trips(int trips, bool polling) {
    asio::io_context io;
    tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
    const auto port = acceptor.local_endpoint().port();
    std::thread echo([&] {
        tcp::socket s = acceptor.accept();
        s.set_option(tcp::no_delay(true));
        s.non_blocking(polling);
        message m{};
        boost::system::error_code ec;
        while (read_message(s, m, polling) && !ec) asio::write(s, asio::buffer(m), ec);
    });
    tcp::socket client(io);
    client.connect({asio::ip::make_address("127.0.0.1"), port});
    client.set_option(tcp::no_delay(true));
    client.non_blocking(polling);
    message m{};
    std::vector<double> micros;
    for (int k = 0; k < trips + 1000; ++k) {
        const auto start = std::chrono::steady_clock::now();
        asio::write(client, asio::buffer(m));
        read_message(client, m, polling);
        if (k >= 1000) micros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    }
    client.close();
    echo.join();
    std::sort(micros.begin(), micros.end());
    return {micros[micros.size() / 2], micros[micros.size() * 9 / 10]};
}

}  // namespace

int main(int argc, char** argv) {
    int trips = 20000;
    for (int i = 1; i + 1 < argc; i += 2)
        if (std::string(argv[i]) == "--trips") trips = std::atoi(argv[i + 1]);
    const auto polled = round_trips(trips, true);
    const auto blocking = round_trips(trips, false);
    std::printf("{\"trips\": %d, \"median_us\": %.2f, \"p90_us\": %.2f, \"blocking_median_us\": %.2f, "
                "\"blocking_p90_us\": %.2f}\n",
                trips, polled.median, polled.p90, blocking.median, blocking.p90);
    return 0;
}
