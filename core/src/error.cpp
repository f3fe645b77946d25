#include "dnnc/core/error.hpp"

namespace dnnc {

std::string format_located(const source_location& where, const std::string& message) {
    std::string out = where.file;
    if (where.line > 0) {
        out += ':' + std::to_string(where.line);
        if (where.column > 0) out += ':' + std::to_string(where.column);
    }
    return out.empty() ? message : out + ": " + message;
}

namespace {
std::string join(const std::vector<diagnostic>& problems) {
    std::string text;
    for (const auto& p : problems) {
        if (!text.empty()) text += '\n';
        text += format_located(p.where, p.message);
    }
    return text;
}
}  // namespace

config_error::config_error(std::vector<diagnostic> problems)
    : error(join(problems)), problems_(std::move(problems)) {}

config_error::config_error(source_location where, const std::string& message)
    : config_error(std::vector<diagnostic>{{std::move(where), message}}) {}

}  // namespace dnnc
