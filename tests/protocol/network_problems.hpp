#pragma once
// What the loader says about a few lines of a network, for the tests of its refusals.
#include "dnnc/model/check.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace dnnc::protocol::test {

// Every problem check_document finds in `body` (its lines numbered from 2) inside a
// <network name="t">, with `after_network` after it, read as `file`; the first problem
// leads the message. Fails the test when the document is accepted.
inline std::vector<diagnostic> network_problems(const std::string& body, const std::string& file,
                                                const std::string& after_network = "") {
    const std::string text = "<dnnc xmlns=\"urn:dnnc:1\"><network name=\"t\">\n" + body + "\n</network>" + after_network + "</dnnc>\n";
    try {
        check_document(parse_document(text, file));
    } catch (const config_error& e) {
        REQUIRE_FALSE(e.problems().empty());
        const diagnostic& first = e.problems().front();
        CHECK_THAT(std::string(e.what()), Catch::StartsWith(file + ":" + std::to_string(first.where.line) + ":"));
        return e.problems();
    }
    FAIL("accepted:\n" << text);
    throw;
}

}  // namespace dnnc::protocol::test
