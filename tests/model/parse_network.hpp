#pragma once
// The network a test writes as a few lines of XML: read and validated as "t.xml", not checked.
#include "dnnc/model/model.hpp"
#include "dnnc/protocol/xml.hpp"

#include <string>

namespace dnnc::test {

// The network of `body` inside <network name="t">.
inline model::network parse_network(const std::string& body) {
    const std::string text = "<dnnc xmlns=\"urn:dnnc:1\"><network name=\"t\">" + body + "</network></dnnc>";
    return *protocol::parse_document(text, "t.xml").net;
}

}  // namespace dnnc::test
