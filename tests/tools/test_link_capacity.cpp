// Link throughput on test hosts (scripts/test_hosts.sh): host 3's link shaped to 10 Mbit/s
// each way, the others left at the speed of a veth. The lead's throughput probes at submit
// find the links to host 3 near 10 Mbit/s and the other link far faster, and status shows
// both with the bandwidth the document declares. A cluster whose one node sits behind a
// slow link runs without it, with the outputs of the placement on every node.
#include "test_hosts_fixture.hpp"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <regex>

using namespace dnnc::test;
using json = nlohmann::json;

TEST_CASE("throughputs measured at submit find the test host whose link is shaped to 10 Mbit/s") {
    if (!test_hosts_available()) return;
    scratch_dir dir;
    test_hosts hosts(dir, 3);
    hosts.shape(3, "10mbit");
    // A triangle: h1-h3 is probed from the lead, h2-h3 through h1-h2.
    std::string cluster = "<cluster lead=\"h1\">" + test_hosts::nodes_xml(3);
    cluster += "<link from=\"h1\" to=\"h2\"/><link from=\"h2\" to=\"h3\" bandwidth=\"10Mbit\"/><link from=\"h1\" to=\"h3\"/></cluster>";
    const auto doc = dir.file("hosts.xml", "<dnnc xmlns=\"urn:dnnc:1\"><network name=\"capacity\">"
                                           "<population id=\"p\" size=\"60\" model=\"tanh\"/>"
                                           "<projection from=\"p\" to=\"p\" kind=\"random\" p=\"0.1\" seed=\"5\"/>"
                                           "<output id=\"y\" neurons=\"p[0:3]\"/></network>" +
                                               cluster + "<run probes=\"4\" throughput-probes=\"3\"/></dnnc>\n");
    must(hosts.dnnc_on(1, "submit " + doc + " --to " + test_hosts::endpoint(1)));
    const std::string lead = " --lead " + test_hosts::endpoint(1);
    const auto s = json::parse(run_command(hosts.dnnc_on(1, "status --json" + lead)).out);
    INFO(s["links"].dump());
    REQUIRE(s["links"].size() == 3);
    for (const auto& l : s["links"]) {
        const bool shaped = l["to"] == "h3";
        REQUIRE(l.contains("throughput_bps"));
        const double measured = l["throughput_bps"].get<double>();
        INFO("link " << l["from"] << "-" << l["to"] << " measured " << measured / 1e6 << " Mbit/s");
        if (shaped)
            CHECK(std::abs(measured - 10e6) <= 0.35 * 10e6);
        else
            CHECK(measured > 50e6);
        if (l["from"] == "h2") {
            CHECK(l["bandwidth_bps"] == 10e6);
        } else {
            CHECK_FALSE(l.contains("bandwidth_bps"));
        }
    }
    // The text lists each link's throughput and, on h2-h3, the declared 10 Mbit/s.
    const auto text = run_command(hosts.dnnc_on(1, "status --links" + lead)).out;
    INFO(text);
    CHECK(std::regex_search(text, std::regex("\nh2 +h3 +[0-9.]+ +[0-9.]+ +[0-9.]+ [kMG]?bit/s +10\\.0 Mbit/s")));
    CHECK(std::regex_search(text, std::regex("\nh1 +h2 +[0-9.]+ +[0-9.]+ +[0-9.]+ [MG]bit/s +- ")));
}

TEST_CASE("a node behind a declared slow link is left idle, and the outputs are those of the run on every node") {
    if (!test_hosts_available()) return;
    scratch_dir dir;
    test_hosts hosts(dir, 4);
    hosts.shape(4, "10mbit");
    // brunel_small's network; h4's only link is h3 - h4, shaped and (when `declared`) declared
    // at 10 Mbit/s; dense packets.
    const auto brunel = slurp(source_path("examples/brunel/brunel_small.xml"));
    const auto network = brunel.substr(brunel.find("<network"), brunel.find("</network>") + 10 - brunel.find("<network"));
    auto doc_with = [&](bool declared) {
        const std::string fast = declared ? " bandwidth=\"1Gbit\"" : "", slow = declared ? " bandwidth=\"10Mbit\"" : "";
        return dir.file(declared ? "aware.xml" : "blind.xml",
                        "<dnnc xmlns=\"urn:dnnc:1\">" + network + "<cluster lead=\"h1\">" + test_hosts::nodes_xml(4) +
                            "<link from=\"h1\" to=\"h2\"" + fast + "/><link from=\"h1\" to=\"h3\"" + fast +
                            "/><link from=\"h2\" to=\"h3\"" + fast + "/><link from=\"h3\" to=\"h4\"" + slow +
                            "/></cluster><run send=\"always\" compress=\"never\" probes=\"2\"/></dnnc>\n");
    };
    const std::string lead = " --lead " + test_hosts::endpoint(1);
    std::string outputs[2];
    for (const bool declared : {true, false}) {
        const auto submitted = run_command(hosts.dnnc_on(1, "submit --replace " + doc_with(declared) + " --to " + test_hosts::endpoint(1)));
        REQUIRE(submitted.exit_code == 0);
        INFO(submitted.out);
        CHECK((submitted.out.find("left idle for slow links: h4 (") != std::string::npos) == declared);
        const auto s = json::parse(run_command(hosts.dnnc_on(1, "status --json" + lead)).out);
        CHECK((s["nodes"][3]["neurons"] == 0) == declared);
        must(hosts.dnnc_on(1, "step 100" + lead));
        const auto file = (dir.path / (declared ? "aware.csv" : "blind.csv")).string();
        must(hosts.dnnc_on(1, "output -o " + file + lead));
        outputs[declared ? 0 : 1] = slurp(file);
    }
    CHECK(std::count(outputs[0].begin(), outputs[0].end(), '\n') == 101);
    CHECK(outputs[0] == outputs[1]);
}
