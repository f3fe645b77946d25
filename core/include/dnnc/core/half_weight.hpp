#pragma once
// Synapse weights in 16 bits (<run weight-precision="half">, docs/simulation.md "Weights in
// 16 bits"): IEEE 754 binary16, to nearest with ties to even. The rounding depends on the
// value alone, so every node keeps the same weight for a synapse, every path adds the same
// float, and an export shows the weight the engine keeps. Written with integer and float operations that every x86-64
// has (no F16C), so the values do not depend on the CPU or the compiler's half type.
#include <cstdint>
#include <cstring>

namespace dnnc::half_weight {

// The largest finite binary16 magnitude; a float at or above 65520 rounds to infinity.
inline constexpr float largest = 65504.0f;
inline constexpr float overflows_at = 65520.0f;

inline std::uint32_t bits_of(float f) {
    std::uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}
inline float float_of(std::uint32_t b) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
}

// Whether `w` has a binary16 value (finite, |w| < 65520 before rounding).
inline bool fits(float w) { return (bits_of(w) & 0x7fffffffu) < bits_of(overflows_at); }

// The nearest binary16 of `w`, ties to even; `w` must fit (fits()).
inline std::uint16_t encode(float w) {
    const std::uint32_t b = bits_of(w);
    const auto sign = static_cast<std::uint16_t>((b >> 16) & 0x8000u);
    const std::uint32_t magnitude = b & 0x7fffffffu;
    if (magnitude < (113u << 23)) {
        // Below 2^-14: a subnormal or zero half, a multiple of 2^-24. Adding 0.5 (whose
        // float ulp is 2^-24) lets the float addition round it, ties to even.
        const float rounded = float_of(magnitude) + 0.5f;
        return static_cast<std::uint16_t>(sign | (bits_of(rounded) - bits_of(0.5f)));
    }
    // A normal half: 13 mantissa bits dropped, rounded to nearest even, the exponent rebased
    // from 127 to 15 (a carry out of the mantissa moves the exponent up, as it should).
    const std::uint32_t odd = (magnitude >> 13) & 1u;
    const std::uint32_t rebased = magnitude - (112u << 23) + 0xfffu + odd;
    return static_cast<std::uint16_t>(sign | (rebased >> 13));
}

// The float of a binary16 (finite: encode never makes infinities or NaNs): a normal half's
// exponent and mantissa moved to a float's places and rebased, a subnormal one's mantissa
// times 2^-24 (both exact, and neither reads a subnormal float, which a flush-to-zero mode
// would take for 0).
inline float decode(std::uint16_t h) {
    const std::uint32_t magnitude = h & 0x7fffu;
    const float normal = float_of((magnitude << 13) + (112u << 23));
    const float subnormal = static_cast<float>(magnitude) * 0x1p-24f;
    const float value = magnitude < 0x400u ? subnormal : normal;
    return float_of(bits_of(value) | std::uint32_t{h & 0x8000u} << 16);
}

// `w` as the weight a synapse keeps in 16 bits.
inline float rounded(float w) { return decode(encode(w)); }

// `w` as an engine with half weights keeps it, for what shows a network's weights (exports):
// rounded where it fits, else as it is (an engine refuses it).
inline float as_kept(float w) { return fits(w) ? rounded(w) : w; }

}  // namespace dnnc::half_weight
