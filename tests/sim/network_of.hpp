#pragma once
// A network for model tests, written as the body of a <network dt="DT">, expanded.
#include "dnnc/model/expand.hpp"
#include "dnnc/protocol/xml.hpp"

#include <string>

namespace dnnc::test {

inline model::expanded_network network_of(const std::string& body, double dt = 0.1) {
    const auto doc = protocol::parse_document(
        "<dnnc xmlns=\"urn:dnnc:1\"><network name=\"t\" dt=\"" + std::to_string(dt) + "\">" + body + "</network></dnnc>", "t.xml");
    return model::expand(*doc.net, "t.xml");
}

}  // namespace dnnc::test
