#include "dnnc/core/files.hpp"

#include "dnnc/core/error.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dnnc {

namespace {

std::string size_text(std::uint64_t bytes) {
    if (bytes >= (std::uint64_t{1} << 20) && bytes % (std::uint64_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
    if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " bytes";
}

}  // namespace

std::string read_file(const std::string& path, std::uint64_t limit) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw config_error({path, 0, 0}, std::string("cannot open the file: ") + std::strerror(errno));
    struct closer {
        int fd;
        ~closer() { ::close(fd); }
    } closing{fd};
    const auto too_long = [&] {
        return config_error({path, 0, 0}, "the file is longer than " + size_text(limit) + ", the most read of such a file: byte " +
                                              std::to_string(limit + 1) + " is past the limit");
    };
    struct stat about{};
    if (::fstat(fd, &about) != 0) throw config_error({path, 0, 0}, std::string("cannot read the file: ") + std::strerror(errno));
    if (S_ISDIR(about.st_mode)) throw config_error({path, 0, 0}, "is a folder, not a file");
    if (S_ISREG(about.st_mode) && static_cast<std::uint64_t>(about.st_size) > limit) throw too_long();
    std::string bytes;
    if (S_ISREG(about.st_mode)) bytes.reserve(static_cast<std::size_t>(about.st_size));
    char chunk[1 << 16];
    while (true) {
        const auto n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw config_error({path, 0, 0}, std::string("cannot read the file: ") + std::strerror(errno));
        if (n == 0) return bytes;
        if (bytes.size() + static_cast<std::uint64_t>(n) > limit) throw too_long();
        bytes.append(chunk, static_cast<std::size_t>(n));
    }
}

atomic_file::atomic_file(const std::string& path)
    : target_(std::filesystem::absolute(path).string()), temporary_(target_ + ".tmp-" + std::to_string(getpid())) {
    fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw io_error("cannot write " + temporary_ + ": " + std::strerror(errno));
}

atomic_file::~atomic_file() {
    if (fd_ < 0) return;
    ::close(fd_);
    std::error_code ignored;
    std::filesystem::remove(temporary_, ignored);
}

void atomic_file::append(std::string_view bytes) {
    if (fd_ < 0) throw io_error("cannot write " + temporary_ + ": already committed");
    std::size_t written = 0;
    while (written < bytes.size()) {
        const auto n = ::write(fd_, bytes.data() + written, bytes.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw io_error("cannot write " + temporary_ + ": " + std::strerror(errno));
        written += static_cast<std::size_t>(n);
    }
}

void atomic_file::commit() {
    const int fd = std::exchange(fd_, -1);
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        std::error_code ignored;
        std::filesystem::remove(temporary_, ignored);
        throw io_error("cannot flush " + temporary_);
    }
    std::filesystem::rename(temporary_, target_);
    const int dir = ::open(std::filesystem::path(target_).parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
}

void write_atomically(const std::string& path, std::string_view bytes) {
    atomic_file file(path);
    file.append(bytes);
    file.commit();
}

removed_at_exit::~removed_at_exit() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

}  // namespace dnnc
