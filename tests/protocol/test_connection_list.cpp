// List projections (kind="list"): the .npy file and the inline binary form read into the
// same connections, which expand exactly as the same connections written as <synapse>
// elements; bad files and bad inline text are refused with located errors.
#include "dnnc/model/check.hpp"
#include "dnnc/model/expand.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

using namespace dnnc;
using namespace dnnc::model;
using namespace dnnc::protocol;

namespace {

struct row {
    double source, target, weight, delay_ms;
};

// A folder for this run's files, removed at exit.
std::filesystem::path scratch() {
    static const struct folder {
        std::filesystem::path path = std::filesystem::temp_directory_path() / ("dnnc-lists-" + std::to_string(std::random_device{}()));
        folder() { std::filesystem::create_directories(path); }
        ~folder() {
            std::error_code ignored;
            std::filesystem::remove_all(path, ignored);
        }
    } dir;
    return dir.path;
}

// A .npy file as NumPy writes it: `descr` '<f8' or '<f4', shape (rows, columns); the header
// declares `declared` rows instead when given.
std::string write_npy(const std::string& name, const std::vector<double>& values, std::size_t columns,
                      const std::string& descr = "<f8", std::uint64_t declared = 0) {
    std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" +
                         std::to_string(declared ? declared : values.size() / columns) + ", " + std::to_string(columns) + "), }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    const auto path = (scratch() / name).string();
    std::ofstream out(path, std::ios::binary);
    out.write("\x93NUMPY\x01\x00", 8);
    const unsigned char length[2] = {static_cast<unsigned char>(header.size() & 0xFF), static_cast<unsigned char>(header.size() >> 8)};
    out.write(reinterpret_cast<const char*>(length), 2);
    out << header;
    for (double v : values) {
        if (descr == "<f4") {
            const auto f = static_cast<float>(v);
            out.write(reinterpret_cast<const char*>(&f), 4);
        } else {
            out.write(reinterpret_cast<const char*>(&v), 8);
        }
    }
    return path;
}

std::string write_list(const std::string& name, const std::vector<row>& rows, const std::string& descr = "<f8") {
    std::vector<double> values;
    for (const auto& r : rows) values.insert(values.end(), {r.source, r.target, r.weight, r.delay_ms});
    return write_npy(name, values, 4, descr);
}

const char* const neurons = R"(<synapse-model id="ee" model="stdp_synapse" Wmax="10"/>
    <population id="p" size="4" model="iaf_psc_exp"/><population id="q" size="3" model="iaf_psc_exp"/>)";

document read(const std::string& body) {
    const std::string text = "<dnnc xmlns=\"urn:dnnc:1\"><network name=\"t\" dt=\"0.1\">" + std::string(neurons) + body +
                             "</network></dnnc>";
    auto doc = parse_document(text, (scratch() / "t.xml").string());
    check_document(doc);
    return doc;
}

// The rows, the weights and the delays of every neuron, for comparing two expansions.
void require_same_rows(const expanded_network& a, const expanded_network& b) {
    REQUIRE(a.in_begin == b.in_begin);
    REQUIRE(a.in_source == b.in_source);
    REQUIRE(a.in_delay == b.in_delay);
    REQUIRE(a.in_weight.size() == b.in_weight.size());
    for (std::size_t k = 0; k < a.in_weight.size(); ++k)
        REQUIRE(std::memcmp(&a.in_weight[k], &b.in_weight[k], sizeof(float)) == 0);
}

// Unsorted targets, two connections into one target from one source, weights that round
// to float32, delays that round to ticks (0.15 ms up to 2 ticks).
const std::vector<row> example = {{2, 1, 0.1, 0.15}, {0, 0, 1.5, 1}, {3, 1, 2.25, 0.3}, {2, 1, 1e-3, 0.1}, {1, 2, 7, 6553.5}};

std::string as_synapses(const std::vector<row>& rows, const std::string& model = "") {
    std::string out;
    for (const auto& r : rows) {
        char text[256];
        std::snprintf(text, sizeof text, R"(<synapse from="p[%d]" to="q[%d]" weight="%.17g" delay-ms="%.17g"%s/>)",
                      static_cast<int>(r.source), static_cast<int>(r.target), r.weight, r.delay_ms,
                      model.empty() ? "" : (" synapse-model=\"" + model + "\"").c_str());
        out += text;
    }
    return out;
}

config_error refusal(const std::string& body) {
    try {
        read(body);
    } catch (const config_error& e) {
        return e;
    }
    FAIL("accepted: " << body);
    throw;
}

}  // namespace

TEST_CASE("a list file expands exactly as the same connections written as <synapse> elements") {
    const auto file = write_list("example.npy", example);
    for (const std::string model : {"", "ee"}) {
        INFO("synapse-model '" << model << "'");
        const std::string attr = model.empty() ? "" : " synapse-model=\"" + model + "\"";
        const auto listed = read(R"(<projection from="p" to="q" kind="list" connections=")" + file + "\"" + attr + "/>");
        const auto written = read(as_synapses(example, model));
        require_same_rows(expand(*listed.net, listed.file), expand(*written.net, written.file));
        CHECK(longest_delay(*listed.net) == longest_delay(*written.net));
        CHECK(longest_delay(*listed.net) == 65535);
    }
    // Before and after other elements: the list's place in the document is its place in
    // each target's canonical order.
    const auto mixed = read(R"(<projection from="p" to="q" kind="all" weight="3"/><projection from="p" to="q" kind="list" connections=")" +
                            file + R"("/><synapse from="p[0]" to="q[1]" weight="-1"/>)");
    const auto spelled = read(R"(<projection from="p" to="q" kind="all" weight="3"/>)" + as_synapses(example) +
                              R"(<synapse from="p[0]" to="q[1]" weight="-1"/>)");
    require_same_rows(expand(*mixed.net, mixed.file), expand(*spelled.net, spelled.file));
}

TEST_CASE("a list keeps a target's connections in the list's order, sorted by target stably") {
    const auto doc = read(R"(<projection from="p" to="q" kind="list" connections=")" + write_list("order.npy", example) + "\"/>");
    const auto& list = doc.net->projections[0].connections;
    CHECK(list.targets == std::vector<std::uint32_t>{0, 1, 1, 1, 2});
    CHECK(list.sources == std::vector<std::uint32_t>{0, 2, 3, 2, 1});
    CHECK(list.delays == std::vector<std::uint16_t>{10, 2, 3, 1, 65535});
    CHECK(list.weights[1] == static_cast<float>(0.1));
}

TEST_CASE("float32 list files read as float64 ones of the same values") {
    const std::vector<row> exact = {{3, 0, 0.5, 0.2}, {1, 2, -2.75, 1.5}};
    const auto a = read(R"(<projection from="p" to="q" kind="list" connections=")" + write_list("f8.npy", exact) + "\"/>");
    const auto b = read(R"(<projection from="p" to="q" kind="list" connections=")" + write_list("f4.npy", exact, "<f4") + "\"/>");
    CHECK(a.net->projections[0].connections == b.net->projections[0].connections);
}

TEST_CASE("a list without its file is written inline in binary and reads back the same") {
    auto doc = read(R"(<projection from="p" to="q" kind="list" connections=")" + write_list("inline.npy", example) + "\"/>");
    doc.net->projections[0].connections_file.clear();
    const std::string text = serialize(doc);
    CHECK(text.find("<connections>") != std::string::npos);
    CHECK(text.find("<synapse ") == std::string::npos);
    const auto back = parse_document(text, doc.file);
    CHECK(back == doc);
    require_same_rows(expand(*back.net, back.file), expand(*doc.net, doc.file));

    // An empty list too.
    doc.net->projections[0].connections = {};
    CHECK(parse_document(serialize(doc), doc.file) == doc);
}

TEST_CASE("a node's share with part of a list expands its neurons' rows as the whole list does") {
    const auto doc = read(R"(<projection from="p" to="q" kind="list" connections=")" + write_list("share.npy", example) + "\"/>");
    // q[1] (neuron 5) alone: its three connections, inline.
    network share = *doc.net;
    auto& list = share.projections[0].connections;
    share.projections[0].connections_file.clear();
    list = {{list.sources.begin() + 1, list.sources.begin() + 4},
            {list.targets.begin() + 1, list.targets.begin() + 4},
            {list.weights.begin() + 1, list.weights.begin() + 4},
            {list.delays.begin() + 1, list.delays.begin() + 4}};
    const auto whole = expand(*doc.net, doc.file);
    const auto part = expand_share(*parse_document(serialize(document{doc.file, share, {}, {}, {}}), doc.file).net, {5});
    REQUIRE(part.in_begin[6] - part.in_begin[5] == 3);
    for (std::uint64_t k = 0; k < 3; ++k) {
        CHECK(part.in_source[part.in_begin[5] + k] == whole.in_source[whole.in_begin[5] + k]);
        CHECK(part.in_weight[part.in_begin[5] + k] == whole.in_weight[whole.in_begin[5] + k]);
        CHECK(part.in_delay[part.in_begin[5] + k] == whole.in_delay[whole.in_begin[5] + k]);
    }
    CHECK(part.synapse_count() == 3);
}

TEST_CASE("bad list files are refused at the projection, naming the file and the row") {
    const auto refused = [](const std::string& file) {
        return std::string(refusal(R"(<projection from="p" to="q" kind="list" connections=")" + file + "\"/>").what());
    };
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    CHECK_THAT(refused(write_list("nan.npy", {{0, 0, 1, 1}, {1, 1, nan, 1}})), Catch::Contains("row 1: weight NaN is not a finite number"));
    CHECK_THAT(refused(write_list("inf.npy", {{0, 0, inf, 1}})), Catch::Contains("row 0: weight INF is not a finite number"));
    CHECK_THAT(refused(write_list("short.npy", {{0, 0, 1, 0.04}})), Catch::Contains("row 0: delay 0.04 ms is below one tick (dt 0.1 ms)"));
    CHECK_THAT(refused(write_list("long.npy", {{0, 0, 1, 6553.6}})), Catch::Contains("row 0: delay 6553.6 ms is above 65535 ticks"));
    CHECK_THAT(refused(write_list("nan_delay.npy", {{0, 0, 1, nan}})), Catch::Contains("row 0: delay NaN ms is not a finite number"));
    CHECK_THAT(refused(write_list("half.npy", {{0.5, 0, 1, 1}})), Catch::Contains("row 0: source 0.5 is not a neuron position"));
    CHECK_THAT(refused(write_list("negative.npy", {{0, -1, 1, 1}})), Catch::Contains("row 0: target -1 is not a neuron position"));
    CHECK_THAT(refused(write_list("target.npy", {{0, 3, 1, 1}})),
               Catch::Contains("the connection from source 0 to target 3 (in '") && Catch::Contains("target 3 lies outside 'q', which has 3 neurons"));
    CHECK_THAT(refused(write_npy("three.npy", {0, 0, 1}, 3)), Catch::Contains("must hold a 2-D array of 4 columns"));
    CHECK_THAT(refused(write_npy("ints.npy", {0, 0, 1, 1}, 4, "<i8")), Catch::Contains("dtype must be little-endian float64 ('<f8') or float32 ('<f4'), not '<i8'"));
    CHECK_THAT(refused((scratch() / "missing.npy").string()), Catch::Contains("cannot open connections file"));
    {
        const auto path = write_list("cut.npy", {{0, 0, 1, 1}, {1, 1, 1, 1}});
        std::filesystem::resize_file(path, std::filesystem::file_size(path) - 8);
        CHECK_THAT(refused(path), Catch::Contains("holds 56 bytes of data for the 2 rows its header declares"));
    }
    {
        // A header may claim any number of rows: more than a list may hold is refused unread.
        const auto path = write_npy("huge.npy", {0, 0, 1, 1}, 4, "<f8", 3'000'000'000);
        CHECK_THAT(refused(path), Catch::Contains("3000000000 rows; a list may hold at most 2000000000 connections"));
    }
    {
        const auto path = (scratch() / "text.npy").string();
        std::ofstream(path) << "source,target,weight,delay\n0,0,1,1\n";
        CHECK_THAT(refused(path), Catch::Contains("not a .npy file"));
    }
    // A plastic model bounded by Wmax > 0 takes no negative weight.
    CHECK_THAT(std::string(refusal(R"(<projection from="p" to="q" kind="list" synapse-model="ee" connections=")" +
                                   write_list("signs.npy", {{0, 0, 1, 1}, {1, 2, -1, 1}}) + "\"/>")
                               .what()),
               Catch::Contains("the connection from source 1 to target 2 has weight -1, on the other side of 0"));
    // Errors are located at the projection (on the document's second line).
    const auto e = refusal(R"(<projection from="p" to="q" kind="list" connections=")" + write_list("located.npy", {{0, 0, nan, 1}}) + "\"/>");
    CHECK(e.problems().front().where.line == 2);
    CHECK(e.problems().front().where.column > 1);
}

TEST_CASE("the inline form survives any text: refused with a located error or read") {
    const auto doc = read(R"(<projection from="p" to="q" kind="list" connections=")" + write_list("fuzz.npy", example) + "\"/>");
    network net = *doc.net;
    net.projections[0].connections_file.clear();
    const std::string text = serialize(document{doc.file, net, {}, {}, {}});
    const auto open = text.find("<connections>") + 13, close = text.find("</connections>");
    const std::string good = text.substr(open, close - open);
    std::mt19937 gen(29);
    const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
    for (int trial = 0; trial < 2000; ++trial) {
        std::string mutated = good;
        const int edits = 1 + static_cast<int>(gen() % 4);
        for (int k = 0; k < edits; ++k) {
            const auto at = gen() % mutated.size();
            switch (gen() % 3) {
            case 0: mutated[at] = alphabet[gen() % alphabet.size()]; break;
            case 1: mutated.erase(at, 1 + gen() % 8); break;
            default: mutated.insert(at, 4, alphabet[gen() % alphabet.size()]); break;
            }
            if (mutated.empty()) mutated = "AAAA";
        }
        const std::string bad = text.substr(0, open) + mutated + text.substr(close);
        try {
            auto back = parse_document(bad, doc.file);
            check_document(back);
            expand(*back.net, back.file);
        } catch (const config_error& e) {
            CHECK(e.problems().front().where.line > 0);
        }
    }
}

TEST_CASE("a node refuses a share whose list names neurons outside its groups") {
    // check_network runs on the lead; the rows check a share's positions anyway.
    const auto doc = read(R"(<projection from="p" to="q" kind="list" connections=")" + write_list("node.npy", example) + "\"/>");
    const auto refused = [&](auto&& spoil) {
        network share = *doc.net;
        spoil(share.projections[0].connections);
        try {
            expand_share(share, {4, 5, 6});
        } catch (const config_error& e) {
            return std::string(e.what());
        }
        FAIL("accepted");
        return std::string();
    };
    CHECK_THAT(refused([](connection_list& l) { l.sources[0] = 4; }), Catch::Contains("lies outside its groups (4 and 3 neurons)"));
    CHECK_THAT(refused([](connection_list& l) { l.targets.back() = 3; }), Catch::Contains("lies outside its groups"));
}
