// Snapshots for clients: whole, or piece by piece from one capture while the network stays at
// its tick, the file gone after its last byte or with the server.
#include "lead/snapshot_pieces.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/core/files.hpp"

#include "temp_folder.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace dnnc;
using namespace dnnc::node_server;
namespace fs = std::filesystem;

namespace {

using test::temp_folder;

// The files in `folder` (none when it does not exist).
std::size_t files_in(const fs::path& folder) {
    return fs::exists(folder) ? static_cast<std::size_t>(std::distance(fs::directory_iterator(folder), {})) : 0;
}

const capture_link writes_tick = [](std::int64_t tick, const std::string& file) { write_atomically(file, "tick " + std::to_string(tick) + "!"); };

}  // namespace

TEST_CASE("a whole snapshot is read back and its file goes") {
    temp_folder folder("snapshot-pieces");
    CHECK(whole_snapshot(folder.path.string(), 42, writes_tick) == "tick 42!");
    CHECK(files_in(folder.path) == 0);
}

TEST_CASE("a snapshot read in pieces is one capture until its last byte, and then goes") {
    temp_folder folder("snapshot-pieces");
    snapshot_pieces pieces(folder.path.string());
    CHECK_THROWS_AS(pieces.piece(7, 0, 3, {}), usage_error);  // nothing captured
    pieces.capture(7, writes_tick);
    auto first = pieces.piece(7, 0, 3, {});
    CHECK(first.bytes == "tic");
    CHECK(first.total == 7);
    CHECK(first.tick == 7);
    CHECK_THROWS_AS(pieces.piece(8, 3, 3, {}), usage_error);  // the network moved on
    CHECK_THROWS_AS(pieces.piece(7, 8, 3, {}), usage_error);  // past the end
    auto last = pieces.piece(7, 3, 100, std::move(first.bytes));
    CHECK(last.bytes == "k 7!");
    CHECK(last.capture == first.capture);
    CHECK(files_in(folder.path) == 0);
    CHECK_THROWS_AS(pieces.piece(7, 0, 3, {}), usage_error);
    pieces.capture(7, writes_tick);
    CHECK(pieces.piece(7, 0, 1, {}).capture != first.capture);  // a new capture, numbered anew
}

TEST_CASE("a snapshot a client stopped reading goes with the server") {
    temp_folder folder("snapshot-pieces");
    {
        snapshot_pieces pieces(folder.path.string());
        pieces.capture(1, writes_tick);
        pieces.piece(1, 0, 2, {});
        CHECK(files_in(folder.path) == 1);
    }
    CHECK(files_in(folder.path) == 0);
}
