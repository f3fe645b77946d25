// The control plane's decoders (protocol/control_plane.hpp, status.hpp) on any bytes a peer
// or client sends as a JSON payload: a clock request or reply, a tick report, a client's
// command, a run's progress, a node's status.
// Each either throws dnnc::error (a payload that is not JSON: nlohmann's parse_error, which
// the node answers as a malformed payload) or gives a message whose encoding decodes to the
// same encoding: what the lead acts on is exactly what it would send on.
#include "dnnc/core/error.hpp"
#include "dnnc/protocol/control_plane.hpp"
#include "dnnc/protocol/status.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

using json = nlohmann::json;

void require(bool ok) {
    if (!ok) std::abort();
}

// decode(encode(m)) encodes as m does, for m decoded from `j` (when it decodes).
template <typename Decode>
void round_trip(const json& j, Decode decode) {
    json once;
    try {
        once = dnnc::protocol::encode(decode(j));
    } catch (const dnnc::error&) {
        return;
    }
    require(dnnc::protocol::encode(decode(once)) == once);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const json j = json::parse(std::string_view(reinterpret_cast<const char*>(data), size), nullptr, false);
    if (j.is_discarded()) return 0;
    round_trip(j, [](const json& x) { return dnnc::protocol::decode_control_request(x); });
    round_trip(j, [](const json& x) { return dnnc::protocol::decode_clock_request(x); });
    round_trip(j, [](const json& x) { return dnnc::protocol::decode_clock_reply(x); });
    round_trip(j, [](const json& x) { return dnnc::protocol::decode_tick_report(x); });
    round_trip(j, [](const json& x) { return dnnc::protocol::decode_run_progress(x); });
    round_trip(j, [](const json& x) { return dnnc::protocol::decode_node_status(x); });
    return 0;
}
