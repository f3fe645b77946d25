#pragma once
// Fixed-size values in and out of byte strings, for the binary formats (signal packets,
// snapshots). The supported platforms are little-endian; values are copied as they are.
#include "dnnc/core/error.hpp"

#include <cstring>
#include <string>
#include <string_view>

namespace dnnc::protocol {

template <typename T>
void put(std::string& out, T value) {
    char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    out.append(bytes, sizeof(T));
}

// Writes fixed-size values one after another at `at`.
class byte_writer {
public:
    explicit byte_writer(char* at) : at_(at) {}
    template <typename T>
    void put(T value) {
        std::memcpy(at_, &value, sizeof(T));
        at_ += sizeof(T);
    }
    void put(std::string_view bytes) {
        if (bytes.empty()) return;
        std::memcpy(at_, bytes.data(), bytes.size());
        at_ += bytes.size();
    }
    char* at() const { return at_; }

private:
    char* at_;
};

// Reads values in order; throws protocol_error("WHAT is truncated") past the end.
class byte_reader {
public:
    byte_reader(std::string_view bytes, const char* what) : bytes_(bytes), what_(what) {}
    template <typename T>
    T get() {
        need(sizeof(T));
        T value;
        std::memcpy(&value, bytes_.data() + at_, sizeof(T));
        at_ += sizeof(T);
        return value;
    }
    std::string_view take(std::size_t n) {
        need(n);
        const auto s = bytes_.substr(at_, n);
        at_ += n;
        return s;
    }
    std::size_t left() const { return bytes_.size() - at_; }
    bool done() const { return at_ == bytes_.size(); }

private:
    void need(std::size_t n) const {
        if (bytes_.size() - at_ < n) throw protocol_error(std::string(what_) + " is truncated");
    }
    std::string_view bytes_;
    const char* what_;
    std::size_t at_ = 0;
};

}  // namespace dnnc::protocol
