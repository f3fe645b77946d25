#pragma once
// A folder of a test's own under the system's temporary folder (not created), removed with
// everything in it at the end.
#include <filesystem>
#include <random>
#include <string>

namespace dnnc::test {

struct temp_folder {
    // `name`: what the folder's name begins with, after "dnnc-".
    explicit temp_folder(const std::string& name)
        : path(std::filesystem::temp_directory_path() / ("dnnc-" + name + "-" + std::to_string(std::random_device{}()))) {}
    ~temp_folder() { std::filesystem::remove_all(path); }
    temp_folder(const temp_folder&) = delete;
    temp_folder& operator=(const temp_folder&) = delete;
    std::filesystem::path path;
};

}  // namespace dnnc::test
