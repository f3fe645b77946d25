// A local cluster whose nodes speak TLS (dnnc cluster up --tls-cert/--tls-key/--tls-ca):
// commands find the CA in the cluster's record, a lockstep network's signal links run over
// TLS, and its outputs equal those of a plain run.
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>

using namespace dnnc::test;

TEST_CASE("a lockstep network on a TLS cluster gives the outputs of a plain run") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    const auto certs = dir.path / "certs";
    const std::string script = source_path("scripts/tls_certs.sh") + " ";
    REQUIRE(run_command(script + certs.string() + " node 127.0.0.1").exit_code == 0);
    REQUIRE(run_command(script + (certs / "other").string() + " stranger 127.0.0.1").exit_code == 0);
    std::vector<int> ports;
    const auto config = dir.file(
        "net.xml", cluster_document({{"a"}, {"b"}, {"c"}}, {R"(<link from="a" to="b"/>)", R"(<link from="b" to="c"/>)"}, ports, 300,
                                    "  <run probes=\"2\"/>\n"));
    const auto inputs = dir.file("in.csv", "tick,target,value\n0,p[3],1\n0,p[100],-1\n");
    const std::string lead = " --lead 127.0.0.1:" + std::to_string(ports[0]);
    {
        local_cluster_guard cluster(config, "--tls-cert " + (certs / "node.pem").string() + " --tls-key " + (certs / "node.key").string() +
                                                " --tls-ca " + (certs / "ca.pem").string());
        INFO(cluster.up.err);
        REQUIRE(cluster.up.exit_code == 0);
        CHECK_THAT(cluster.up.out, Catch::Contains("TLS: certificates signed by"));
        for (const auto& command : {" submit " + config + " --to 127.0.0.1:" + std::to_string(ports[0]), " input " + inputs + lead,
                                    " step 200" + lead, " output -o " + (dir.path / "out.csv").string() + lead}) {
            const auto r = run_command(dnnc + command);
            INFO(command << "\n" << r.err);
            REQUIRE(r.exit_code == 0);
        }
        const auto stranger = run_command(dnnc + " status --tls-ca " + (certs / "other" / "ca.pem").string() + lead);
        CHECK(stranger.exit_code == 1);
        CHECK_THAT(stranger.err, Catch::Contains("TLS handshake failed"));
    }
    const auto plain = run_command(dnnc + " run " + config + " --nodes 1 --ticks 200 --input " + inputs + " --output " +
                                   (dir.path / "plain.csv").string());
    REQUIRE(plain.exit_code == 0);
    CHECK(slurp((dir.path / "out.csv").string()) == slurp((dir.path / "plain.csv").string()));
}

TEST_CASE("cluster up refuses half a TLS setting before starting anything") {
    scratch_dir dir;
    std::vector<int> ports;
    const auto config = dir.file("net.xml", two_linked_nodes(ports, 20, ""));
    const auto r = run_command(dnnc_binary() + " cluster up " + config + " --tls-cert x.pem --tls-key x.key");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--tls-ca"));
    const auto missing = run_command(dnnc_binary() + " cluster up " + config + " --tls-cert x.pem --tls-key x.key --tls-ca ca.pem");
    CHECK(missing.exit_code == 2);
    CHECK_THAT(missing.err, Catch::Contains("ca.pem"));
}
