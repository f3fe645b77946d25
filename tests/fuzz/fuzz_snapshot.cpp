// The binary snapshot decoder and the neuron-state codec. The first byte picks what the
// rest is:
//   0: neuron states (decode_states); those accepted must encode back to the same bytes;
//   1: a whole binary snapshot, checksum included (decode_binary_snapshot);
//   2: a snapshot without its checksum, which is appended here, so that the fuzzer reaches
//      the embedded document and the states behind the SHA-256 it cannot forge.
#include "dnnc/core/error.hpp"
#include "dnnc/protocol/frame.hpp"
#include "dnnc/protocol/snapshot.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
    const std::string file = "/nonexistent/fuzz.dnncs";
    switch (data[0] % 3) {
    case 0: {
        std::vector<dnnc::protocol::indexed_state> states;
        try {
            states = dnnc::protocol::decode_states(rest);
        } catch (const dnnc::protocol_error&) {
            return 0;
        }
        if (dnnc::protocol::encode_states(states) != rest) std::abort();
        return 0;
    }
    case 1:
        try {
            (void)dnnc::protocol::decode_binary_snapshot(rest, file);
        } catch (const dnnc::error&) {
        }
        return 0;
    default: {
        const std::string sealed = std::string(rest) + dnnc::protocol::sha256(rest);
        try {
            (void)dnnc::protocol::decode_binary_snapshot(sealed, file);
        } catch (const dnnc::error&) {
        }
        return 0;
    }
    }
}
