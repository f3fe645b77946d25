#pragma once
// A PNG file decoded to 8-bit RGB (libpng's simplified API), for tests that look at what a
// browser drew.
#include <png.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace dnnc::test {

struct rgb_image {
    std::uint32_t width = 0, height = 0;
    std::vector<std::uint8_t> pixels;  // row by row, 3 bytes a pixel
    const std::uint8_t* at(std::uint32_t x, std::uint32_t y) const { return pixels.data() + (std::size_t{y} * width + x) * 3; }
};

inline rgb_image read_png(const std::string& path) {
    png_image png{};
    png.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&png, path.c_str())) throw std::runtime_error(path + ": " + png.message);
    png.format = PNG_FORMAT_RGB;
    rgb_image image;
    image.width = png.width;
    image.height = png.height;
    image.pixels.resize(PNG_IMAGE_SIZE(png));
    if (!png_image_finish_read(&png, nullptr, image.pixels.data(), 0, nullptr)) {
        png_image_free(&png);
        throw std::runtime_error(path + ": " + png.message);
    }
    return image;
}

}  // namespace dnnc::test
