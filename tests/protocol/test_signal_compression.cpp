// LZ4 payloads of signal packets: the same bytes back, incompressible packets left as they
// are, and a corrupt or oversized payload refused with protocol_error.
#include "dnnc/protocol/frame.hpp"
#include "dnnc/protocol/signal_codec.hpp"
#include "dnnc/protocol/signal_compression.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <random>

using namespace dnnc;
using namespace dnnc::protocol;

namespace {
// A dense packet of spikes: mostly zeros, as a spiking network's outputs are.
std::string spike_packet(std::size_t count) {
    std::vector<float> values(count, 0.0f);
    for (std::size_t i = 0; i < count; i += 37) values[i] = 1.0f;
    return encode_signals({"h1", 7, 42, true, values, {}});
}
}  // namespace

TEST_CASE("a compressed signal packet decompresses to the same bytes, and a spike packet shrinks") {
    const auto packet = spike_packet(4000);
    std::string compressed, restored;
    REQUIRE(compress_signals(packet, compressed));
    CHECK(compressed.size() * 10 < packet.size());
    decompress_signals(compressed, default_max_payload, restored);
    CHECK(restored == packet);
    CHECK(decode_signals(restored).values == decode_signals(packet).values);
}

TEST_CASE("a packet that compression would not make smaller is left as it is") {
    std::mt19937 random(3);
    std::uniform_real_distribution<float> any(-1.0f, 1.0f);
    std::vector<float> values(1000);
    for (auto& v : values) v = any(random);
    std::string compressed;
    CHECK_FALSE(compress_signals(encode_signals({"h1", 7, 42, true, values, {}}), compressed));
    CHECK_FALSE(compress_signals("", compressed));
    CHECK_FALSE(compress_signals("abc", compressed));
}

TEST_CASE("a corrupt compressed packet is a protocol error") {
    std::string compressed, restored;
    REQUIRE(compress_signals(spike_packet(4000), compressed));
    CHECK_THROWS_AS(decompress_signals("", default_max_payload, restored), protocol_error);
    CHECK_THROWS_AS(decompress_signals(compressed.substr(0, 3), default_max_payload, restored), protocol_error);
    CHECK_THROWS_AS(decompress_signals(compressed.substr(0, compressed.size() - 1), default_max_payload, restored), protocol_error);
    // A size that the block does not fill, one it overflows, and bytes flipped throughout.
    auto resized = compressed;
    const std::uint32_t larger = 4000 * 4 + 100, smaller = 10;
    std::memcpy(resized.data(), &larger, 4);
    CHECK_THROWS_AS(decompress_signals(resized, default_max_payload, restored), protocol_error);
    std::memcpy(resized.data(), &smaller, 4);
    CHECK_THROWS_AS(decompress_signals(resized, default_max_payload, restored), protocol_error);
    std::mt19937 random(5);
    for (int trial = 0; trial < 200; ++trial) {
        auto broken = compressed;
        for (int k = 0; k < 4; ++k) broken[4 + random() % (broken.size() - 4)] ^= static_cast<char>(1 + random() % 255);
        try {
            decompress_signals(broken, default_max_payload, restored);
            CHECK(restored.size() == spike_packet(4000).size());  // a flip that still decodes keeps the size
        } catch (const protocol_error&) {
        }
    }
}

TEST_CASE("a compressed packet that claims more than the bound is refused before anything is allocated") {
    // A few bytes claiming 4 GiB: refused from the size field alone.
    std::string bomb(4, '\xff');
    bomb += std::string(16, '\0');
    std::string restored;
    CHECK_THROWS_AS(decompress_signals(bomb, default_max_payload, restored), protocol_error);
    CHECK(restored.capacity() < 1024);
    // A real block of 1 MiB of zeros is refused under a smaller bound.
    std::string compressed;
    REQUIRE(compress_signals(std::string(1u << 20, '\0'), compressed));
    CHECK(compressed.size() < 8192);
    CHECK_THROWS_AS(decompress_signals(compressed, 1u << 16, restored), protocol_error);
    decompress_signals(compressed, 1u << 20, restored);
    CHECK(restored == std::string(1u << 20, '\0'));
}
