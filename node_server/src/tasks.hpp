#pragma once
// Long operations (a fan-out, a whole submit, a freeze) run off the server's threads
// (private to dnnc_node_server).
#include <functional>
#include <future>
#include <list>
#include <mutex>

namespace dnnc::node_server {

class task_pool {
public:
    void run(std::function<void()> task) {
        std::lock_guard<std::mutex> lock(mutex_);
        tasks_.remove_if([](std::future<void>& f) { return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready; });
        tasks_.push_back(std::async(std::launch::async, std::move(task)));
    }
    // Waits for every task; none may be added meanwhile.
    void wait_all() {
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto& f : tasks_) f.wait();
    }

private:
    std::mutex mutex_;
    std::list<std::future<void>> tasks_;
};

}  // namespace dnnc::node_server
