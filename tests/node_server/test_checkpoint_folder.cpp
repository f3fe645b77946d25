// A run's checkpoint folder: under the lead's root and nowhere else, the newest `keep`
// checkpoints kept, settings given back as a "checkpoint" command takes them.
#include "lead/checkpoint_folder.hpp"

#include "dnnc/core/error.hpp"

#include "temp_folder.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace dnnc;
using namespace dnnc::node_server;
namespace fs = std::filesystem;

namespace {

using test::temp_folder;

}  // namespace

TEST_CASE("a checkpoint folder stays under its root") {
    temp_folder root("checkpoint-folder");
    checkpoint_folder folder(root.path.string(), 10, 2, "net");
    CHECK(folder.current().dir == (root.path / "net").string());
    CHECK(folder.dir_named("a/./c") == (root.path / "a/c").string());
    CHECK_THROWS_AS(folder.dir_named("a/../b"), usage_error);
    CHECK_THROWS_AS(folder.dir_named("../elsewhere"), usage_error);
    CHECK_THROWS_AS(folder.dir_named("/tmp"), usage_error);
    CHECK_THROWS_AS(folder.dir_named(""), usage_error);
    CHECK_THROWS_AS(checkpoint_folder(root.path.string(), 10, 2, ".."), usage_error);
    CHECK(folder.settings_json() == nlohmann::json{{"every", 10}, {"keep", 2}, {"dir", "net"}});
    folder.set({20, 4, ""});  // an empty folder keeps the current one
    CHECK(folder.settings_json() == nlohmann::json{{"every", 20}, {"keep", 4}, {"dir", "net"}});
}

TEST_CASE("a checkpoint folder keeps the newest checkpoints written") {
    temp_folder root("checkpoint-folder");
    checkpoint_folder folder(root.path.string(), 10, 2, "net");
    CHECK(folder.last().empty());
    std::vector<std::string> files;
    for (std::int64_t tick : {10, 20, 30}) {
        files.push_back(checkpoint_folder::file_of(folder.current(), tick));
        std::ofstream(files.back()) << tick;
        folder.written(files.back());
    }
    CHECK(files[2] == (root.path / "net" / "checkpoint-30.dnncs").string());
    CHECK(folder.last() == files[2]);
    CHECK_FALSE(fs::exists(files[0]));
    CHECK(fs::exists(files[1]));
    CHECK(fs::exists(files[2]));
}
