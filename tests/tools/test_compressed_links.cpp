// Signal packets compressed on slow links (docs/node_server.md "Compressed links"). On local
// nodes, <run compress="always"> gives the bits of compress="never" and of one node, and
// status counts the bytes each link saved. On test hosts (scripts/test_hosts.sh) with host
// 3's link shaped to 10 Mbit/s, the lead compresses the link to h3 and not the fast one, and
// the outputs are one local node's.
#include "test_hosts_fixture.hpp"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

using namespace dnnc::test;
using json = nlohmann::json;

namespace {
// A small Brunel network (brunel_small.xml's neurons, fewer of them) whose dense packets are
// mostly zeros, on `cluster`.
std::string brunel_on(const std::string& cluster, const std::string& compress, const std::string& run_extra = "") {
    return "<dnnc xmlns=\"urn:dnnc:1\"><network name=\"brunel\" dt=\"0.1\">"
           "<population id=\"E\" size=\"800\" model=\"iaf_psc_delta\" seed=\"1\" tau_m=\"20\" C_m=\"250\" t_ref=\"2\" "
           "E_L=\"0\" V_th=\"20\" V_reset=\"10\" v-init=\"0\" v-init-max=\"20\"/>"
           "<population id=\"I\" size=\"200\" model=\"iaf_psc_delta\" seed=\"2\" tau_m=\"20\" C_m=\"250\" t_ref=\"2\" "
           "E_L=\"0\" V_th=\"20\" V_reset=\"10\" v-init=\"0\" v-init-max=\"20\"/>"
           "<projection from=\"E\" to=\"E\" kind=\"fixed-indegree\" indegree=\"80\" weight=\"0.1\" delay=\"15\" seed=\"3\"/>"
           "<projection from=\"E\" to=\"I\" kind=\"fixed-indegree\" indegree=\"80\" weight=\"0.1\" delay=\"15\" seed=\"4\"/>"
           "<projection from=\"I\" to=\"E\" kind=\"fixed-indegree\" indegree=\"20\" weight=\"-0.5\" delay=\"15\" seed=\"5\"/>"
           "<projection from=\"I\" to=\"I\" kind=\"fixed-indegree\" indegree=\"20\" weight=\"-0.5\" delay=\"15\" seed=\"6\"/>"
           "<poisson to=\"E I\" rate=\"20000\" weight=\"0.1\" seed=\"7\"/>"
           "<output id=\"raster\" neurons=\"E[0:50] I[0:10]\"/></network>" +
           cluster + "<run probes=\"4\" heartbeat-timeout=\"15000\" compress=\"" + compress + "\"" + run_extra + "/></dnnc>\n";
}

// The outputs of `ticks` ticks of `doc` on one local node.
std::string on_one_node(const scratch_dir& dir, const std::string& doc, int ticks) {
    const auto out = (dir.path / "one.csv").string();
    must(dnnc_binary() + " run " + doc + " --nodes 1 --ticks " + std::to_string(ticks) + " --output " + out);
    return slurp(out);
}

std::string link_text(const json& l) { return l["from"].get<std::string>() + "-" + l["to"].get<std::string>(); }
}  // namespace

TEST_CASE("compress=always on local nodes gives the bits of compress=never and of one node, in fewer bytes") {
    scratch_dir dir;
    const int ticks = 300;
    std::vector<int> ports{free_port(), free_port(), free_port()};
    std::string cluster = "<cluster lead=\"a\">";
    for (std::size_t k = 0; k < 3; ++k)
        cluster += "<node id=\"" + std::string(1, static_cast<char>('a' + k)) + "\" port=\"" + std::to_string(ports[k]) + "\"/>";
    cluster += "<link from=\"a\" to=\"b\"/><link from=\"a\" to=\"c\"/></cluster>";
    const auto never = dir.file("never.xml", brunel_on(cluster, "never"));
    const auto always = dir.file("always.xml", brunel_on(cluster, "always"));
    const auto expected = on_one_node(dir, never, ticks);
    local_cluster_guard c(never);
    REQUIRE(c.up.exit_code == 0);
    const std::string lead = " --lead 127.0.0.1:" + std::to_string(ports[0]);
    auto run = [&](const std::string& doc, const std::string& name) {
        const auto outputs = outputs_of_fresh_run(doc, ports, ticks, (dir.path / name).string());
        return std::pair{outputs, json::parse(run_command(dnnc_binary() + " status --json" + lead).out)};
    };
    const auto [plain, plain_status] = run(never, "never.csv");
    const auto [packed, packed_status] = run(always, "always.csv");
    CHECK(plain == expected);
    CHECK(packed == expected);
    REQUIRE(plain_status["links"].size() == 2);
    REQUIRE(packed_status["links"].size() == 2);
    for (const auto& l : plain_status["links"]) {
        INFO(l.dump());
        CHECK(l["compressed"] == false);
        CHECK(l["packet_bytes"].get<std::int64_t>() > 0);
        CHECK(l["payload_bytes"] == l["packet_bytes"]);
    }
    for (const auto& l : packed_status["links"]) {
        INFO(l.dump());
        CHECK(l["compressed"] == true);
        CHECK(l["payload_bytes"].get<std::int64_t>() * 3 < l["packet_bytes"].get<std::int64_t>());
    }
    const auto text = run_command(dnnc_binary() + " status --links" + lead).out;
    INFO(text);
    CHECK_THAT(text, Catch::Contains(" yes "));
}

TEST_CASE("on test hosts, the lead compresses the link shaped to 10 Mbit/s and not the fast one, and the outputs are one node's") {
    if (!test_hosts_available()) return;
    scratch_dir dir;
    const int ticks = 300;
    test_hosts hosts(dir, 3);
    hosts.shape(3, "10mbit");
    const std::string cluster =
        "<cluster lead=\"h1\">" + test_hosts::nodes_xml(3) + "<link from=\"h1\" to=\"h2\"/><link from=\"h2\" to=\"h3\"/></cluster>";
    // A tick of 0.5 ms puts the rate below which a link is compressed near 22 Mbit/s (about
    // 1.4 kB a tick each way on either link): twice the shaped link's, and far below what a
    // machine busy with other work makes of the fast one (136 Mbit/s, the least seen with 6
    // busy loops on 2 cores). Free-running, that rate was near 300 Mbit/s, and such a reading
    // compressed the fast link.
    const auto doc = dir.file("hosts.xml", brunel_on(cluster, "auto", " tick-period=\"0.5\""));
    const auto expected = on_one_node(dir, doc, ticks);
    const std::string lead = " --lead " + test_hosts::endpoint(1);
    must(hosts.dnnc_on(1, "submit " + doc + " --to " + test_hosts::endpoint(1)));
    must(hosts.dnnc_on(1, "step " + std::to_string(ticks) + lead));
    must(hosts.dnnc_on(1, "output -o " + (dir.path / "hosts.csv").string() + lead));
    CHECK(slurp((dir.path / "hosts.csv").string()) == expected);
    const auto s = json::parse(run_command(hosts.dnnc_on(1, "status --json" + lead)).out);
    REQUIRE(s["links"].size() == 2);
    for (const auto& l : s["links"]) {
        INFO(l.dump());
        const bool slow = link_text(l) == "h2-h3";
        CHECK(l["compressed"] == slow);
        if (slow)
            CHECK(l["payload_bytes"].get<std::int64_t>() * 3 < l["packet_bytes"].get<std::int64_t>());
        else
            CHECK(l["payload_bytes"] == l["packet_bytes"]);
    }
}
