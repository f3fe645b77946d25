#include "lead/snapshot_pieces.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/core/files.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace dnnc::node_server {

namespace fs = std::filesystem;

namespace {
// Captures served in pieces, numbered across runs (snapshot_piece::capture).
std::atomic<std::uint64_t> piece_captures{0};
}  // namespace

std::string whole_snapshot(const std::string& folder, std::int64_t tick, const capture_link& capture) {
    fs::create_directories(folder);
    const auto file = (fs::path(folder) / ("snapshot-" + std::to_string(::getpid()) + ".dnncs")).string();
    const removed_at_exit removing(file);
    capture(tick, file);
    return read_file(file);
}

snapshot_pieces::~snapshot_pieces() {
    std::error_code ignored;
    if (!file_.empty()) fs::remove(file_, ignored);
}

void snapshot_pieces::capture(std::int64_t tick, const capture_link& capture) {
    fs::create_directories(folder_);
    file_ = (fs::path(folder_) / ("snapshot-pieces-" + std::to_string(::getpid()) + ".dnncs")).string();
    tick_ = tick;
    capture_ = ++piece_captures;
    capture(tick_, file_);
}

snapshot_piece snapshot_pieces::piece(std::int64_t tick, std::uint64_t from, std::size_t count, std::string buffer) {
    if (file_.empty() || tick_ != tick)
        throw usage_error("no snapshot of tick " + std::to_string(tick) + " is being read: ask from byte 0");
    snapshot_piece piece;
    piece.tick = tick_;
    piece.capture = capture_;
    piece.total = fs::file_size(file_);
    if (from > piece.total) throw usage_error("the snapshot has " + std::to_string(piece.total) + " bytes");
    piece.bytes = std::move(buffer);
    piece.bytes.resize(static_cast<std::size_t>(std::min<std::uint64_t>(std::min(count, max_piece), piece.total - from)));
    std::ifstream in(file_, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(from));
    if (!in.read(piece.bytes.data(), static_cast<std::streamsize>(piece.bytes.size()))) throw io_error("cannot read " + file_);
    if (from + piece.bytes.size() == piece.total) {
        std::error_code ignored;
        fs::remove(file_, ignored);
        file_.clear();
    }
    return piece;
}

}  // namespace dnnc::node_server
