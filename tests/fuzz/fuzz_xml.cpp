// The XML reader: any bytes given to parse_document, parse_node_config or
// parse_signal_packet either parse or throw a dnnc::error. Every input goes to
// parse_document; those that name the other readers' root elements go to them too (a
// reader stops at a root its schema does not declare, so others would only cost time).
#include "dnnc/core/error.hpp"
#include "dnnc/protocol/xml.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view xml(reinterpret_cast<const char*>(data), size);
    // Spike files named by a document resolve against this folder, which does not exist:
    // the run reads no file an input names by a relative path.
    const std::string file = "/nonexistent/fuzz.xml";
    try {
        (void)dnnc::protocol::parse_document(xml, file);
    } catch (const dnnc::error&) {
    }
    if (xml.find("node-config") != std::string_view::npos) {
        try {
            (void)dnnc::protocol::parse_node_config(xml, file);
        } catch (const dnnc::error&) {
        }
    }
    if (xml.find("signals") != std::string_view::npos) {
        try {
            (void)dnnc::protocol::parse_signal_packet(xml, file);
        } catch (const dnnc::error&) {
        }
    }
    return 0;
}
