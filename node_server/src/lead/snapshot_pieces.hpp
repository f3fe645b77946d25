#pragma once
// Binary snapshots of the frozen network for clients (private to dnnc_node_server), written
// by the nodes into a file under the lead's folder: read back whole for one frame, or
// served piece by piece to a client that writes a file of any size. A snapshot read in
// pieces stays in its file while the network stays at its tick; the file goes once its last
// byte has been read, or with this object (a client that stopped reading).
#include <cstdint>
#include <functional>
#include <string>

namespace dnnc::node_server {

// Writes a binary snapshot of the network at `tick` (the next to compute) into `file`.
using capture_link = std::function<void(std::int64_t tick, const std::string& file)>;

// The snapshot at `tick` written into a file of `folder` by `capture`, whole; the file goes.
std::string whole_snapshot(const std::string& folder, std::int64_t tick, const capture_link& capture);

struct snapshot_piece {
    std::uint64_t total = 0;  // the snapshot's bytes
    std::int64_t tick = 0;
    // Which capture the bytes are of (unique in this process): each new capture goes into
    // the same file, so a client reading on whose capture has changed would mix two (an
    // update between).
    std::uint64_t capture = 0;
    std::string bytes;  // [from, from + count)
};

class snapshot_pieces {
public:
    explicit snapshot_pieces(std::string folder) : folder_(std::move(folder)) {}
    ~snapshot_pieces();
    snapshot_pieces(const snapshot_pieces&) = delete;
    snapshot_pieces& operator=(const snapshot_pieces&) = delete;

    static constexpr std::size_t max_piece = 4u << 20;
    // A new snapshot at `tick`, written by `capture`, replaces the one being read.
    void capture(std::int64_t tick, const capture_link& capture);
    // Its bytes [from, from + count), at most max_piece; usage_error unless a snapshot of
    // `tick` is being read and has byte `from`. `buffer` becomes the piece's bytes (a
    // client's previous piece, so that a download allocates its piece once).
    snapshot_piece piece(std::int64_t tick, std::uint64_t from, std::size_t count, std::string buffer);

private:
    std::string folder_;
    std::string file_;  // empty: none being read
    std::int64_t tick_ = 0;
    std::uint64_t capture_ = 0;
};

}  // namespace dnnc::node_server
