#pragma once
// How long the calling thread has waited for a CPU it was ready to run on, since it began,
// in ns (private to dnnc_node_server): the kernel's schedstat run_delay, the second field of
// /proc/thread-self/schedstat. It grows while other processes hold the cores and while a CPU
// quota (a cgroup's cpu.cfs_quota_us) holds the process back, so it is the time a node's
// ticks are late that its own compute time does not show: a runner that wakes with its
// peers' packets and waits to run. 0 where the kernel keeps no such count.
#include <cstdint>

namespace dnnc::node_server {

std::int64_t this_thread_cpu_wait_ns();

}  // namespace dnnc::node_server
