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

namespace {
constexpr std::size_t header_size = 1 + 1 + 2 + 8 + 8 + 4;  // without the sender id
}  // namespace

std::size_t signals_size(std::size_t from_size, bool dense, std::size_t count) {
    return header_size + from_size + count * (dense ? 4 : 8);
}

std::size_t encode_signals(std::string_view from, std::uint64_t epoch, std::int64_t tick, bool dense,
                           const std::vector<float>& values, const std::vector<std::pair<std::uint32_t, float>>& nonzero,
                           char* out) {
    if (from.size() > UINT16_MAX) throw protocol_error("sender id too long");
    const std::size_t count = dense ? values.size() : nonzero.size();
    byte_writer w(out);
    w.put<std::uint8_t>(signals_version);
    w.put<std::uint8_t>(dense ? 1 : 0);
    w.put<std::uint16_t>(static_cast<std::uint16_t>(from.size()));
    w.put(from);
    w.put<std::uint64_t>(epoch);
    w.put<std::int64_t>(tick);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(count));
    if (dense) {
        w.put(std::string_view(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    } else {
        for (const auto& [position, value] : nonzero) {
            w.put<std::uint32_t>(position);
            w.put<float>(value);
        }
    }
    return static_cast<std::size_t>(w.at() - out);
}

void encode_signals(std::string_view from, std::uint64_t epoch, std::int64_t tick, bool dense, const std::vector<float>& values,
                    const std::vector<std::pair<std::uint32_t, float>>& nonzero, std::string& out) {
    if (from.size() > UINT16_MAX) throw protocol_error("sender id too long");
    out.resize(signals_size(from.size(), dense, dense ? values.size() : nonzero.size()));
    encode_signals(from, epoch, tick, dense, values, nonzero, out.data());
}

namespace {
void read_version(byte_reader& r) {
    if (const auto version = r.get<std::uint8_t>(); version != signals_version)
        throw protocol_error("signal packet version " + std::to_string(version) + ", expected " +
                             std::to_string(signals_version));
}

// Reads the header up to the count into `s`.
std::uint32_t read_header(byte_reader& r, binary_signals& s) {
    read_version(r);
    s.dense = r.get<std::uint8_t>() & 1;
    s.from.assign(r.take(r.get<std::uint16_t>()));
    s.epoch = r.get<std::uint64_t>();
    s.tick = r.get<std::int64_t>();
    return r.get<std::uint32_t>();
}
}  // namespace

std::size_t signals_length(std::string_view bytes) {
    byte_reader r(bytes, "signal packet");
    read_version(r);
    const bool dense = r.get<std::uint8_t>() & 1;
    const auto from_size = r.get<std::uint16_t>();
    r.take(from_size + 8 + 8);
    return signals_size(from_size, dense, r.get<std::uint32_t>());
}

binary_signals decode_signals(std::string_view bytes) {
    binary_signals s;
    decode_signals(bytes, s);
    return s;
}

void decode_signals(std::string_view bytes, binary_signals& s) {
    byte_reader r(bytes, "signal packet");
    const auto count = read_header(r, s);
    const std::size_t each = s.dense ? 4 : 8;
    if (r.left() != static_cast<std::size_t>(count) * each) throw protocol_error("signal packet length does not match its count");
    s.values.clear();
    s.nonzero.clear();
    if (s.dense) {
        s.values.resize(count);
        if (count) std::memcpy(s.values.data(), r.take(count * each).data(), count * each);
    } else {
        s.nonzero.resize(count);
        for (auto& [position, value] : s.nonzero) {
            position = r.get<std::uint32_t>();
            value = r.get<float>();
        }
    }
}

}  // namespace dnnc::protocol
