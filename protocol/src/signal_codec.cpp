#include "dnnc/protocol/signal_codec.hpp"

#include "bytes.hpp"

namespace dnnc::protocol {

namespace {
constexpr std::uint8_t signals_version = 2;  // 1 had no epoch
}  // namespace

std::string encode_signals(const binary_signals& s) {
    std::string out;
    encode_signals(s.from, s.epoch, s.tick, s.dense, s.values, s.nonzero, out);
    return out;
}

void encode_signals(std::string_view from, std::uint64_t epoch, std::int64_t tick, bool dense, const std::vector<float>& values,
                    const std::vector<std::pair<std::uint32_t, float>>& nonzero, std::string& out) {
    if (from.size() > UINT16_MAX) throw protocol_error("sender id too long");
    out.clear();
    const std::size_t count = dense ? values.size() : nonzero.size();
    out.reserve(24 + from.size() + count * 8);
    put<std::uint8_t>(out, signals_version);
    put<std::uint8_t>(out, dense ? 1 : 0);
    put<std::uint16_t>(out, static_cast<std::uint16_t>(from.size()));
    out += from;
    put<std::uint64_t>(out, epoch);
    put<std::int64_t>(out, tick);
    put<std::uint32_t>(out, static_cast<std::uint32_t>(count));
    if (dense) {
        out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
    } else {
        for (const auto& [position, value] : nonzero) {
            put<std::uint32_t>(out, position);
            put<float>(out, value);
        }
    }
}

binary_signals decode_signals(std::string_view bytes) {
    byte_reader r(bytes, "signal packet");
    if (const auto version = r.get<std::uint8_t>(); version != signals_version)
        throw protocol_error("signal packet version " + std::to_string(version) + ", expected " +
                             std::to_string(signals_version));
    const auto flags = r.get<std::uint8_t>();
    binary_signals s;
    s.dense = flags & 1;
    s.from = std::string(r.take(r.get<std::uint16_t>()));
    s.epoch = r.get<std::uint64_t>();
    s.tick = r.get<std::int64_t>();
    const auto count = r.get<std::uint32_t>();
    const std::size_t each = s.dense ? 4 : 8;
    if (r.left() != static_cast<std::size_t>(count) * each) throw protocol_error("signal packet length does not match its count");
    if (s.dense) {
        s.values.resize(count);
        for (auto& v : s.values) v = r.get<float>();
    } else {
        s.nonzero.resize(count);
        for (auto& [position, value] : s.nonzero) {
            position = r.get<std::uint32_t>();
            value = r.get<float>();
        }
    }
    return s;
}

}  // namespace dnnc::protocol
