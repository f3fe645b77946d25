#pragma once
// Runs an io_context's handlers on the calling thread until it stops (private to
// dnnc_node_server). Handlers run on peers' bytes, so one that throws must not end the
// process: the exception is logged and the loop goes on (Asio lets run() be called again
// after a handler threw; the other handlers are untouched).
#include "dnnc/node_server/log.hpp"

#include <boost/asio/io_context.hpp>

#include <exception>

namespace dnnc::node_server {

inline void run_handlers(boost::asio::io_context& io, const char* what) {
    for (;;) {
        try {
            io.run();
            return;
        } catch (const std::exception& e) {
            DNNC_LOG(error, what << ": a handler failed and was dropped: " << e.what());
        }
    }
}

}  // namespace dnnc::node_server
