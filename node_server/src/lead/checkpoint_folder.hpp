#pragma once
// Where a run's periodic checkpoints go (private to dnnc_node_server): a folder under the
// lead's checkpoint root, never outside it, holding checkpoint-TICK.dnncs files of which only
// the newest `keep` are kept. Not locked: lead_run calls it under its own lock.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace dnnc::node_server {

// A network's name as a folder name (checkpoints and replicas are kept in one per network).
std::string folder_name_of(std::string network);

class checkpoint_folder {
public:
    struct settings {
        std::int64_t every = 0;  // ticks; 0: none
        int keep = 3;
        std::string dir;  // a folder under the root
    };

    // Checkpoints of every `every` ticks, the newest `keep` kept, in the folder `name` under `root`.
    checkpoint_folder(std::string root, std::int64_t every, int keep, const std::string& name);

    const settings& current() const { return settings_; }
    // New settings; an empty dir keeps the current one.
    void set(settings s);
    // The folder `name` under the root: usage_error for an absolute path or one that climbs
    // out with "..".
    std::string dir_named(const std::string& name) const;
    // The settings as a "checkpoint" command takes them: {"every", "keep", "dir" (relative)}.
    nlohmann::json settings_json() const;

    // The file of the checkpoint of `tick` in `s`'s folder, which is made if missing.
    static std::string file_of(const settings& s, std::int64_t tick);
    // A checkpoint was written, or adopted, into `file`: the newest. Once written, those
    // beyond the newest `keep` are removed.
    void written(const std::string& file);
    void adopted(const std::string& file) { files_.push_back(file); }
    // The newest checkpoint, or empty when there is none.
    std::string last() const { return files_.empty() ? std::string() : files_.back(); }

private:
    std::string root_;
    settings settings_;
    std::vector<std::string> files_;  // oldest first
};

}  // namespace dnnc::node_server
