// What a node reads for the documents it is given: without a secret, only files inside its
// data folders (node_options::data_dirs), checked before any is read; with one, any.
#include "dnnc/node_server/log.hpp"
#include "dnnc/node_server/node.hpp"
#include "dnnc/node_server/peer_client.hpp"
#include "dnnc/protocol/snapshot.hpp"
#include "dnnc/protocol/xml.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>

using namespace dnnc;
using namespace dnnc::node_server;
using protocol::message_type;

// Any local user may submit to a node without a secret: a spike source's file= once made it
// read any file its user could and echo a line of it in the error.
TEST_CASE("a node without a secret reads only files inside its data folders and echoes none") {
    set_log_level(log_level::error);
    namespace fs = std::filesystem;
    const fs::path root = fs::temp_directory_path() / ("dnnc-data-" + std::to_string(std::random_device{}()));
    const fs::path data = root / "data", outside = root / "private";
    fs::create_directories(data);
    fs::create_directories(outside);
    std::ofstream((data / "in.csv").string()) << "t_ms,index\n0.5,0\n";
    std::ofstream((outside / "secret.csv").string()) << "t_ms,index\nTOPSECRET,0\n";
    fs::create_symlink(outside / "secret.csv", data / "link.csv");

    node_options options;
    options.silence_limit = std::chrono::seconds(2);
    options.data_dirs = {data.string()};
    node n(options);
    n.start();
    const endpoint at{"127.0.0.1", n.port()};
    const std::string cluster = "<cluster lead=\"a\"><node id=\"a\" port=\"" + std::to_string(n.port()) + "\"/></cluster>";
    auto document = [&](const std::string& spike_file, const std::string& weights_file = {}) {
        return "<dnnc xmlns=\"urn:dnnc:1\"><network name=\"f\"><spike-source id=\"s\" size=\"2\" file=\"" + spike_file +
               "\"/><population id=\"p\" size=\"2\" model=\"tanh\"/>" +
               (weights_file.empty() ? std::string("<projection from=\"s\" to=\"p\" kind=\"all\"/>")
                                     : "<projection from=\"s\" to=\"p\" kind=\"dense\" weights=\"" + weights_file + "\"/>") +
               "<output id=\"y\" neurons=\"p[0]\"/></network>" + cluster + "</dnnc>";
    };
    peer_client client;
    const std::vector<std::string> refused{document("/etc/passwd"), document((outside / "secret.csv").string()),
                                           document((data / ".." / "private" / "secret.csv").string()),
                                           document((data / "link.csv").string()),
                                           document((data / "in.csv").string(), (outside / "secret.csv").string())};
    for (const auto& doc : refused) {
        INFO(doc);
        try {
            client.call(at, {message_type::submit, 0, 0, doc}, std::chrono::seconds(20));
            FAIL("the document was accepted");
        } catch (const remote_refusal& e) {
            CHECK_THAT(e.what(), Catch::Contains("is not read here: only files inside the data folders (" +
                                                 fs::weakly_canonical(data).string() + ") are"));
            CHECK_THAT(e.what(), !Catch::Contains("TOPSECRET") && !Catch::Contains("root:"));
        }
    }
    // A binary snapshot's embedded network is held to the same folders.
    model::document snapshot = protocol::parse_document(document((data / "in.csv").string()), "f.xml");
    snapshot.state = model::snapshot_state{0, {}, {}};
    for (const auto* id : {"s[0]", "s[1]", "p[0]", "p[1]"}) snapshot.state->neurons.push_back({id, 0, {}, {}, {}, {}, {}, {}});
    snapshot.net->populations[0].spike_file = (outside / "secret.csv").string();
    const auto bytes = protocol::encode_binary_snapshot(snapshot, model::expand_neurons(*snapshot.net));
    CHECK_THROWS_WITH(client.call(at, {message_type::submit, 0, 0, bytes}, std::chrono::seconds(20)),
                      Catch::Contains("is not read here") && !Catch::Contains("TOPSECRET"));
    // Inside them, the file is read.
    CHECK(client.call(at, {message_type::submit, 0, 0, document((data / "in.csv").string())}, std::chrono::seconds(20)).type ==
          message_type::submit_reply);
    n.stop();

    // With a secret only the cluster's clients submit, and they may name any file.
    node_options secured;
    secured.server.secret = "a cluster secret";
    node s(secured);
    s.start();
    peer_client member("a cluster secret");
    const std::string elsewhere = "<cluster lead=\"a\"><node id=\"a\" port=\"" + std::to_string(s.port()) + "\"/></cluster>";
    std::string doc = document((outside / "secret.csv").string());
    doc.replace(doc.find(cluster), cluster.size(), elsewhere);
    CHECK_THROWS_WITH(member.call({"127.0.0.1", s.port()}, {message_type::submit, 0, 0, doc}, std::chrono::seconds(20)),
                      Catch::Contains("t_ms 'TOPSECRET' is not a number"));  // read: it is the user's own file
    s.stop();
    fs::remove_all(root);
}
