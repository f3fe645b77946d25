// A thread's CPU wait (cpu_wait.hpp): it grows while more threads are ready to run than
// there are cores, and a thread alone on an idle core hardly waits.
#include "worker/cpu_wait.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using dnnc::node_server::this_thread_cpu_wait_ns;

namespace {
// Spins for `how_long` and returns the CPU wait it saw meanwhile.
std::int64_t spin_and_measure(std::chrono::milliseconds how_long) {
    const auto before = this_thread_cpu_wait_ns();
    const auto until = std::chrono::steady_clock::now() + how_long;
    while (std::chrono::steady_clock::now() < until) {
    }
    return this_thread_cpu_wait_ns() - before;
}
}  // namespace

TEST_CASE("threads that outnumber the cores wait for a CPU, and the count says so") {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const unsigned threads = 4 * cores;
    std::vector<std::int64_t> waited(threads, 0);
    std::vector<std::thread> spinning;
    for (unsigned k = 0; k < threads; ++k)
        spinning.emplace_back([&waited, k] { waited[k] = spin_and_measure(std::chrono::milliseconds(400)); });
    for (auto& t : spinning) t.join();
    // Four threads a core spin for 400 ms: together they wait about 3 x 400 ms a core.
    std::int64_t total = 0;
    for (auto w : waited) {
        CHECK(w >= 0);
        total += w;
    }
    CHECK(total > static_cast<std::int64_t>(cores) * 400'000'000);
}

TEST_CASE("the count only grows") {
    const auto first = this_thread_cpu_wait_ns();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CHECK(this_thread_cpu_wait_ns() >= first);
}
