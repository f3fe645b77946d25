#include "dnnc/node_server/log.hpp"

#include "dnnc/core/error.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>

namespace dnnc::node_server {
namespace {
std::atomic<int> current_level{static_cast<int>(log_level::info)};
std::mutex output;
const char* const names[] = {"error", "warn", "info", "debug"};
}  // namespace

void set_log_level(log_level level) { current_level = static_cast<int>(level); }

log_level parse_log_level(const std::string& name) {
    for (int i = 0; i < 4; ++i)
        if (name == names[i]) return static_cast<log_level>(i);
    throw usage_error("unknown log level '" + name + "' (error, warn, info, debug)");
}

bool log_enabled(log_level level) { return static_cast<int>(level) <= current_level.load(); }

void log_line(log_level level, const std::string& text) {
    const auto now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::lock_guard<std::mutex> lock(output);
    std::fprintf(stderr, "%.3f %-5s %s\n", now, names[static_cast<int>(level)], text.c_str());
    std::fflush(stderr);
}

}  // namespace dnnc::node_server
