// What a snapshot costs the lead: with 20 million plastic synapse values (80 MB of state) on
// three local nodes whose lead holds a small share, the lead's peak memory grows by far less
// than the state while it writes a checkpoint (pulled from the nodes in pieces, written as
// they arrive, replicated to its standby in pieces), and recovering from it after a node dies
// (read in two passes, checked, then sent in pieces) costs it about what installing the
// network did (planning, its own share), not that plus the state; `dnnc snapshot` of it
// (more than a frame holds) travels in pieces, and so does `dnnc restore` of that file; the
// live page's GET /api/snapshot streams it as the chunks of one response, the same bytes, and
// ends it without its last chunk when the network is resumed mid-way. The peak is the lead's
// VmHWM, reset (/proc/PID/clear_refs) before each step measured, and the client's maximum RSS.
#include "../http_download.hpp"
#include "cluster_fixture.hpp"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace dnnc::test;

namespace {

// 5,000 neurons with 1,000 tsodyks2 synapses each: 5M synapses of 4 values (w, x, u and the
// weight stored), 20M values. The lead, n0, holds about 2% of the neurons.
std::string plastic_cluster(std::vector<int>& ports, const std::string& state_dir) {
    setenv("XDG_STATE_HOME", state_dir.c_str(), 1);
    std::string doc = R"(<dnnc xmlns="urn:dnnc:1">
  <network name="big" dt="0.1">
    <synapse-model id="d" model="tsodyks2_synapse" U="0.5" tau_rec="800" tau_fac="20"/>
    <population id="E" size="5000" model="iaf_psc_delta" seed="1" v-init="-70" v-init-max="-56"/>
    <projection id="E_E" from="E" to="E" kind="fixed-indegree" indegree="1000" weight="0.05" delay-ms="1.5" seed="3" synapse-model="d"/>
    <poisson to="E" rate="1500" weight="1" seed="7"/>
  </network>
  <cluster lead="n0">
)";
    ports.clear();
    const double capacity[] = {0.04, 1, 1};
    for (int i = 0; i < 3; ++i) {
        ports.push_back(free_port());
        doc += "    <node id=\"n" + std::to_string(i) + "\" port=\"" + std::to_string(ports.back()) + "\" capacity=\"" +
               std::to_string(capacity[i]) + "\"/>\n";
    }
    doc += R"(    <link from="n0" to="n1"/><link from="n0" to="n2"/><link from="n1" to="n2"/>
  </cluster>
  <run probes="2" checkpoint-every="10"/>
</dnnc>
)";
    return doc;
}

// A /proc/PID/status field in bytes.
long long status_bytes(int pid, const std::string& field) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;
    FAIL("no " << field << " for process " << pid);
    return 0;
}

// How far the peak memory of process `pid` rises above what it holds now while `work` runs.
template <typename Work>
long long peak_growth(int pid, Work work) {
    std::ofstream("/proc/" + std::to_string(pid) + "/clear_refs") << "5";  // VmHWM := VmRSS
    const auto before = status_bytes(pid, "VmRSS");
    work();
    return status_bytes(pid, "VmHWM") - before;
}

// The lead's live page: its port, and the token `dnnc status` names it with.
struct live_page {
    int port = 0;
    std::string token;
};
live_page page_of(const std::vector<int>& ports) {
    const auto r = run_command(dnnc_binary() + " status" + lead_of(ports));
    const std::string prefix = "live page: http://";
    const auto at = r.out.find(prefix);
    INFO(r.out);
    REQUIRE(at != std::string::npos);
    const auto url = r.out.substr(at + prefix.size(), r.out.find('\n', at) - at - prefix.size());  // HOST:PORT/?token=TOKEN
    const auto token_at = url.find("token=");
    REQUIRE(token_at != std::string::npos);
    return {std::stoi(url.substr(url.find(':') + 1)), url.substr(token_at + 6, 64)};
}

}  // namespace

TEST_CASE("a checkpoint of 80 MB of plastic state, and recovery from it, grow the lead's peak memory by far less than the state") {
    scratch_dir dir;
    const auto dnnc = dnnc_binary();
    std::vector<int> ports;
    const auto config = dir.file("big.xml", plastic_cluster(ports, dir.path.string()));
    local_cluster_guard cluster(config, "--http 0");
    REQUIRE(cluster.up.exit_code == 0);
    const int lead = pid_in(cluster.up.out, "n0");
    const auto installed = peak_growth(lead, [&] { must(dnnc + " submit " + config + to_of(ports)); });
    must(dnnc + " step 5" + lead_of(ports));

    // Step 5 ends on tick 10, a multiple of checkpoint-every: its checkpoint is written, then
    // replicated to the standby, n1, which writes it as it comes.
    const auto file = dir.path / "dnnc" / "checkpoints" / "big" / "checkpoint-10.dnncs";
    const auto replica = dir.path / "dnnc" / "replicas" / "big" / "checkpoint-10.dnncs";
    const auto written = peak_growth(lead, [&] {
        must(dnnc + " step 5" + lead_of(ports));
        for (int i = 0; i < 600 && !std::filesystem::exists(replica); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    });
    REQUIRE(std::filesystem::exists(file));
    const auto state = static_cast<long long>(std::filesystem::file_size(file));
    REQUIRE(state > 80'000'000);
    REQUIRE(std::filesystem::exists(replica));
    const bool same = slurp(replica.string()) == slurp(file.string());
    CHECK(same);
    INFO("state " << state << " bytes; the lead's peak grew by " << written << " bytes writing it");
    CHECK(written < state / 8);

    // dnnc snapshot of the frozen network (more than a frame holds) reads it piece by piece:
    // the bytes of the checkpoint of the same tick, the client's and the lead's peaks far
    // below the state.
    const auto out = (dir.path / "big.dnncs").string();
    command_result saved;
    const auto served = peak_growth(lead, [&] { saved = run_command("/usr/bin/time -f 'peak %M KiB' " + dnnc + " snapshot -o " + out + lead_of(ports)); });
    INFO(saved.err);
    REQUIRE(saved.exit_code == 0);
    CHECK(saved.out.find("snapshot of 'big' at tick 10: 5000 neurons") != std::string::npos);
    const bool as_checkpoint = slurp(out) == slurp(file.string());
    CHECK(as_checkpoint);
    auto peak_of = [](const command_result& r) { return std::stoll(r.err.substr(r.err.rfind("peak ") + 5)) * 1024; };
    const auto idle = peak_of(run_command("/usr/bin/time -f 'peak %M KiB' " + dnnc + " status" + lead_of(ports)));
    const auto client_peak = peak_of(saved);
    INFO("the client's peak " << client_peak << " bytes (" << idle << " asking for the status); the lead's grew by " << served);
    CHECK(client_peak - idle < state / 8);
    CHECK(served < state / 6);  // the capture, as writing the checkpoint, and a piece

    // The live page's download of it (more than one response held whole could carry): the
    // same bytes, the lead (which serves the page) holding a piece at a time. Its peak grows
    // with the capture, as for dnnc snapshot (by a few MiB more or less from run to run, as
    // the new threads' malloc arenas fall), and not at all while the pieces stream.
    const auto page = page_of(ports);
    const auto over_http = (dir.path / "page.dnncs").string();
    http_download_result got;
    long long captured = -1;  // the lead's peak once the first piece has come
    const auto streamed = peak_growth(lead, [&] {
        got = http_download(page.port, "/api/snapshot", page.token, over_http, [&](std::uint64_t) {
            if (captured < 0) captured = status_bytes(lead, "VmHWM");
        });
    });
    const auto while_streaming = status_bytes(lead, "VmHWM") - captured;
    INFO(got.error.message());
    REQUIRE(got.complete());
    CHECK(got.status == 200);
    CHECK(got.bytes == static_cast<std::uint64_t>(state));
    const bool as_dnnc_snapshot = slurp(over_http) == slurp(out);
    CHECK(as_dnnc_snapshot);
    INFO("state " << state << " bytes; the lead's peak grew by " << streamed << " bytes serving it over HTTP, by "
                  << while_streaming << " after its first piece");
    CHECK(streamed < state / 4);
    CHECK(while_streaming < state / 40);

    REQUIRE(kill(pid_in(cluster.up.out, "n2"), SIGKILL) == 0);
    nlohmann::json summary;
    const auto recovered = peak_growth(lead, [&] {
        const auto r = run_command(dnnc + " recover --json" + lead_of(ports));
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        summary = nlohmann::json::parse(r.out);
    });
    INFO("state " << state << " bytes; the lead's peak grew by " << recovered << " bytes recovering from it, by " << installed
                   << " installing the network");
    CHECK(summary["tick"] == 10);
    CHECK(summary["removed"] == nlohmann::json::array({"n2"}));
    CHECK(recovered < installed + state / 8);
    must(dnnc + " step 2" + lead_of(ports));

    // dnnc restore of the snapshot onto the two survivors (its document rewritten with their
    // cluster, a state at a time) uploads it in pieces: the client holds a piece and a state.
    const auto two = dir.file("two.xml", R"(<dnnc xmlns="urn:dnnc:1"><cluster lead="n0">
    <node id="n0" port=")" + std::to_string(ports[0]) + R"(" capacity="0.04"/><node id="n1" port=")" + std::to_string(ports[1]) +
                                             R"("/><link from="n0" to="n1"/></cluster></dnnc>)");
    command_result restored;
    const auto taken = peak_growth(lead, [&] {
        restored = run_command("/usr/bin/time -f 'peak %M KiB' " + dnnc + " restore " + out + " --cluster " + two + " --replace" + to_of(ports));
    });
    INFO(restored.err);
    REQUIRE(restored.exit_code == 0);
    CHECK(restored.out.find("restored on 2 nodes, frozen at tick 10") != std::string::npos);
    INFO("the client's peak " << peak_of(restored) << " bytes restoring; the lead's grew by " << taken);
    CHECK(peak_of(restored) - idle < state / 8);
    CHECK(taken < installed + state / 8);
    must(dnnc + " step 2" + lead_of(ports));
    CHECK(std::filesystem::is_empty(dir.path / "dnnc" / "uploads"));  // the upload went once installed

    // Resumed mid-download: the page ends the response without its last chunk, so the client
    // sees a broken download, never a complete-looking file of two states.
    bool resumed = false;
    const auto broken = http_download(page.port, "/api/snapshot", page.token, over_http, [&](std::uint64_t bytes) {
        if (resumed || bytes < (8u << 20)) return;
        must(dnnc + " resume" + lead_of(ports));
        resumed = true;
    });
    CHECK(resumed);
    CHECK(broken.status == 200);
    CHECK(broken.error == boost::beast::http::error::partial_message);
    CHECK(broken.bytes < static_cast<std::uint64_t>(state));
}
