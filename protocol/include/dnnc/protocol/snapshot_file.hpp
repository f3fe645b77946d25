#pragma once
// Binary snapshot files (.dnncs, snapshot.hpp) written and read one neuron's state at a time,
// so that whoever writes or restores a snapshot holds the document and one state, never all
// of them: the lead writes checkpoints as the nodes' pieces arrive, and restores them piece
// by piece (docs/snapshots.md).
#include "dnnc/core/files.hpp"
#include "dnnc/protocol/snapshot.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace dnnc::protocol {

// Writes a binary snapshot (format 3) atomically: `doc` without its state, `tick`, then the
// `count` states added, in the order added, then the checksum; the file takes its name at
// commit(). Destroyed uncommitted, it leaves no file.
class snapshot_writer {
public:
    snapshot_writer(const std::string& path, const model::document& doc, std::int64_t tick, std::uint64_t count);
    ~snapshot_writer();
    void add(const indexed_state& s);
    // Throws error unless exactly `count` states were added.
    void commit();
    // The bytes written so far (the file's size once committed).
    std::uint64_t bytes() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

// Reads a binary snapshot file (format 2 or 3) a state at a time. Any damage throws
// config_error naming the file ("damaged snapshot: ..."), the checksum's once the last state
// has been read: a caller acts on the states only after a first pass has read them all.
class snapshot_reader {
public:
    explicit snapshot_reader(const std::string& path, const file_access& access = {});
    ~snapshot_reader();
    // Its document, network checked; its state holds the tick, located at the file, and no entries.
    const model::document& doc() const;
    std::uint64_t count() const;
    // The next state; false after the last, once the checksum has matched.
    bool next(indexed_state& s);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

// Reads a binary snapshot file through once and checks it as load_snapshot and states_of
// do, holding one state at a time. Its document, checked (check_document), with a state
// that holds only the tick. Throws config_error.
model::document check_snapshot_file(const std::string& path, const file_access& access = {});

}  // namespace dnnc::protocol
