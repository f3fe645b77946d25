#include "lead/checkpoint_folder.hpp"

#include "dnnc/core/error.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace dnnc::node_server {

std::string folder_name_of(std::string name) {
    for (auto& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
    return name.empty() || name == "." || name == ".." ? "network" : name;
}

namespace fs = std::filesystem;

checkpoint_folder::checkpoint_folder(std::string root, std::int64_t every, int keep, const std::string& name) : root_(std::move(root)) {
    settings_.every = every;
    settings_.keep = keep;
    settings_.dir = dir_named(name);
}

void checkpoint_folder::set(settings s) {
    if (s.dir.empty()) s.dir = settings_.dir;
    settings_ = std::move(s);
}

std::string checkpoint_folder::dir_named(const std::string& name) const {
    const fs::path relative(name);
    bool climbs = false;
    for (const auto& part : relative) climbs = climbs || part == "..";
    if (name.empty() || relative.is_absolute() || climbs)
        throw usage_error("checkpoint folder '" + name + "': checkpoints stay in the lead's state folder " + root_ +
                          "; give a relative name without '..'");
    return (fs::path(root_) / relative).lexically_normal().string();
}

nlohmann::json checkpoint_folder::settings_json() const {
    return {{"every", settings_.every}, {"keep", settings_.keep}, {"dir", fs::path(settings_.dir).lexically_relative(root_).string()}};
}

std::string checkpoint_folder::file_of(const settings& s, std::int64_t tick) {
    fs::create_directories(s.dir);
    return (fs::path(s.dir) / ("checkpoint-" + std::to_string(tick) + ".dnncs")).string();
}

void checkpoint_folder::written(const std::string& file) {
    files_.push_back(file);
    while (files_.size() > static_cast<std::size_t>(std::max(1, settings_.keep))) {
        std::error_code ignored;
        fs::remove(files_.front(), ignored);
        files_.erase(files_.begin());
    }
}

}  // namespace dnnc::node_server
