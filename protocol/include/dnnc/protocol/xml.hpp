#pragma once
// Reading and writing the three DNNC documents. Reading validates against the schemas
// compiled into the library (network.xsd, node.xsd, signals.xsd); DTDs, external entities
// and entity expansion are refused, so a document can never make the parser read another
// file or blow up in memory. Errors are config_error with file:line:column.
#include "dnnc/model/model.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace dnnc::protocol {

// Documents larger than this are refused before parsing.
inline constexpr std::size_t max_document_bytes = std::size_t{1} << 30;

// The files a document names (a spike source's file=, a dense projection's weights=) that
// its reader may read: any (the default), or only those inside `folders`, symbolic links
// resolved. A node that serves every local user reads no other (docs/node_server.md).
struct file_access {
    bool any = true;
    std::vector<std::string> folders;
};

// Throws config_error, located at the element that names it, for the first file `net` names
// that `access` does not allow; reads none of them.
void check_file_access(const model::network& net, const std::string& document_file, const file_access& access);

// Parses and validates a DNNC document (structure only; see check.hpp for the rest).
// `file` names the source in messages; the files it names are checked against `access`
// and then the spike files of its spike sources and the connection files of its list
// projections are loaded (load_spike_files, load_connection_files).
model::document parse_document(std::string_view xml, const std::string& file, const file_access& access = {});
// Reads the CSV each spike source names (file_named_by) into its spikes, and sorts every
// spike source's spikes by tick, then index. Errors are located in the CSV
// (file:line:column), or at the element when the file cannot be read.
void load_spike_files(model::network& net, const std::string& document_file);
// Reads the .npy file each list projection names (file_named_by) into its connections.
// Errors are located at the projection and name the file (and the row at fault).
void load_connection_files(model::network& net, const std::string& document_file);
model::node_config parse_node_config(std::string_view xml, const std::string& file = "node-config");
model::signal_packet parse_signal_packet(std::string_view xml, const std::string& file = "signals");

// Reads `path`, parses it and runs every check in check.hpp.
model::document load_document(const std::string& path);

// Writes valid documents; parse(serialize(x)) == x, numbers round-trip exactly.
std::string serialize(const model::document& doc);
std::string serialize(const model::node_config& config);
std::string serialize(const model::signal_packet& packet);

}  // namespace dnnc::protocol
