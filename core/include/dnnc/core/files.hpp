#pragma once
// Reading and writing whole files, the way every part of dnnc does it.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace dnnc {

// The most bytes dnnc reads of any file (documents, snapshots, spike times, reports);
// kinds of file that need less have smaller limits of their own.
inline constexpr std::uint64_t max_file_bytes = std::uint64_t{1} << 30;

// The bytes of a file of at most `limit` bytes, read in chunks as a stream: a regular file
// longer than the limit is refused before it is read, and anything else (a device such as
// /dev/zero, a pipe) is read no further than the byte past it. Throws config_error located
// at the file when it cannot be opened or read, and at that byte's offset when it is too long.
std::string read_file(const std::string& path, std::uint64_t limit = max_file_bytes);

// A file written atomically in pieces: a temporary file beside `path` takes the bytes,
// commit() flushes it (fsync), renames it to `path` and flushes the folder; a crash, or a
// writer destroyed uncommitted, leaves the old file (or none), never a part. Throws io_error.
class atomic_file {
public:
    explicit atomic_file(const std::string& path);
    ~atomic_file();
    atomic_file(const atomic_file&) = delete;
    atomic_file& operator=(const atomic_file&) = delete;
    void append(std::string_view bytes);
    void commit();

private:
    std::string target_, temporary_;
    int fd_ = -1;
};

// Writes `bytes` atomically (atomic_file).
void write_atomically(const std::string& path, std::string_view bytes);

// A file or folder (with everything in it) removed when this goes out of scope, however the
// scope ends; one that does not exist is no error.
class removed_at_exit {
public:
    explicit removed_at_exit(std::string path) : path_(std::move(path)) {}
    ~removed_at_exit();
    removed_at_exit(const removed_at_exit&) = delete;
    removed_at_exit& operator=(const removed_at_exit&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

}  // namespace dnnc
