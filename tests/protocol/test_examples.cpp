// Every shipped example validates, expands (when it is small enough to hold here), and
// round-trips through the writer.
#include "dnnc/model/expand.hpp"
#include "dnnc/model/rows.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace dnnc::model;
using namespace dnnc::protocol;

namespace {
std::vector<std::string> example_documents() {
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(DNNC_SOURCE_DIR) + "/examples"))
        if (entry.path().extension() == ".xml") files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    return files;
}
}  // namespace

TEST_CASE("every example validates, expands and round-trips") {
    const auto files = example_documents();
    REQUIRE(files.size() >= 4);
    for (const auto& file : files) {
        INFO(file);
        const document doc = load_document(file);
        REQUIRE(doc.net);
        // Every example has a readme beside it.
        CHECK(std::filesystem::exists(std::filesystem::path(file).parent_path() / "readme.md"));
        const document again = parse_document(serialize(doc), file + " (rewritten)");
        CHECK(again == doc);
        // The full-scale microcircuit (3e8 synapses) is counted, not expanded.
        const synapse_rows rows(*doc.net);
        std::uint64_t synapses = 0;
        for (std::size_t t = 0; t < rows.neuron_count(); ++t) synapses += rows.count(static_cast<neuron_index>(t));
        if (synapses > 20'000'000) continue;
        const auto net = expand(*doc.net, doc.file);
        CHECK(net.neuron_count() > 0);
        CHECK(net.synapse_count() == synapses);
        CHECK(expand(*again.net, doc.file).in_source == net.in_source);
    }
}

TEST_CASE("the CUBA example has the benchmark's shape") {
    const document doc = load_document(std::string(DNNC_SOURCE_DIR) + "/examples/cuba/cuba.xml");
    const auto net = expand(*doc.net, doc.file);
    CHECK(net.neuron_count() == 4000);
    // 2% of 4000 x 4000 pairs, within 5 standard deviations.
    CHECK(std::abs(static_cast<double>(net.synapse_count()) - 320000.0) < 5 * std::sqrt(320000.0 * 0.98));
    CHECK(doc.clu->nodes.size() == 4);
    std::vector<double> capacities;
    for (const auto& n : doc.clu->nodes) capacities.push_back(n.capacity);
    std::sort(capacities.begin(), capacities.end());
    CHECK(std::adjacent_find(capacities.begin(), capacities.end()) == capacities.end());
}
