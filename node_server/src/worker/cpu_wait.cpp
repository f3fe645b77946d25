#include "worker/cpu_wait.hpp"

#include <cstdio>

namespace dnnc::node_server {

std::int64_t this_thread_cpu_wait_ns() {
    std::FILE* f = std::fopen("/proc/thread-self/schedstat", "r");
    if (!f) return 0;
    unsigned long long running = 0, waiting = 0;
    const bool read = std::fscanf(f, "%llu %llu", &running, &waiting) == 2;
    std::fclose(f);
    return read ? static_cast<std::int64_t>(waiting) : 0;
}

}  // namespace dnnc::node_server
