// bench_loopback: the raw loopback round trip that a lockstep tick is measured against. A
// thread echoes 64-byte messages over one TCP connection on 127.0.0.1 (TCP_NODELAY, as the
// nodes use); the client times --trips round trips after 1,000 untimed ones and prints the
// median and 90th percentile in microseconds as one JSON object.
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

int main(int argc, char** argv) {
    int trips = 20000;
    for (int i = 1; i + 1 < argc; i += 2)
        if (std::string(argv[i]) == "--trips") trips = std::atoi(argv[i + 1]);
    asio::io_context io;
    tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
    const auto port = acceptor.local_endpoint().port();
    std::thread echo([&] {
        tcp::socket s = acceptor.accept();
        s.set_option(tcp::no_delay(true));
        std::array<char, 64> buffer{};
        boost::system::error_code ec;
        while (asio::read(s, asio::buffer(buffer), ec) == buffer.size() && !ec) asio::write(s, asio::buffer(buffer));
    });
    tcp::socket client(io);
    client.connect({asio::ip::make_address("127.0.0.1"), port});
    client.set_option(tcp::no_delay(true));
    std::array<char, 64> message{};
    std::vector<double> micros;
    for (int k = 0; k < trips + 1000; ++k) {
        const auto start = std::chrono::steady_clock::now();
        asio::write(client, asio::buffer(message));
        asio::read(client, asio::buffer(message));
        if (k >= 1000) micros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    }
    client.close();
    echo.join();
    std::sort(micros.begin(), micros.end());
    std::printf("{\"trips\": %d, \"median_us\": %.2f, \"p90_us\": %.2f}\n", trips, micros[micros.size() / 2],
                micros[micros.size() * 9 / 10]);
    return 0;
}
