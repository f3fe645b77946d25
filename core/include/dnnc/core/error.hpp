#pragma once
// The one error hierarchy of dnnc. Library code throws these and never prints or exits;
// the tools map them to exit codes (config and usage errors: 2, the rest: 1).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace dnnc {

struct error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Where something stands in a document. line and column are 1-based; 0 means unknown.
struct source_location {
    std::string file;
    int line = 0;
    int column = 0;
};

// "file:line:column: message", leaving out the parts that are unknown.
std::string format_located(const source_location& where, const std::string& message);

struct diagnostic {
    source_location where;
    std::string message;
};

// A document the user wrote is wrong. Holds every problem found (at least one), in
// document order; what() is all of them, one per line.
struct config_error : error {
    explicit config_error(std::vector<diagnostic> problems);
    config_error(source_location where, const std::string& message);
    const std::vector<diagnostic>& problems() const { return problems_; }

private:
    std::vector<diagnostic> problems_;
};

// A command or library call was given arguments that make no sense.
struct usage_error : error {
    using error::error;
};

// A file could not be read or written.
struct io_error : error {
    using error::error;
};

// A protocol frame or payload is malformed.
struct protocol_error : error {
    using error::error;
};

}  // namespace dnnc
