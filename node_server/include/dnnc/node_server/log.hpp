#pragma once
// The node server's log: one line per event on stderr, filtered by level. Only node_server
// and the tools log; the other libraries never print.
#include <sstream>
#include <string>

namespace dnnc::node_server {

enum class log_level { error = 0, warn = 1, info = 2, debug = 3 };

void set_log_level(log_level level);
log_level parse_log_level(const std::string& name);  // throws usage_error
bool log_enabled(log_level level);
void log_line(log_level level, const std::string& text);

}  // namespace dnnc::node_server

// Formats only when the level is enabled.
#define DNNC_LOG(level, expr)                                                          \
    do {                                                                               \
        if (::dnnc::node_server::log_enabled(::dnnc::node_server::log_level::level)) { \
            std::ostringstream dnnc_log_stream_;                                       \
            dnnc_log_stream_ << expr;                                                  \
            ::dnnc::node_server::log_line(::dnnc::node_server::log_level::level,       \
                                          dnnc_log_stream_.str());                     \
        }                                                                              \
    } while (false)
