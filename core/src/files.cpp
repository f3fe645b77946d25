#include "dnnc/core/files.hpp"

#include "dnnc/core/error.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

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

void write_atomically(const std::string& path, std::string_view bytes) {
    namespace fs = std::filesystem;
    const fs::path target = fs::absolute(path);
    const fs::path temporary = target.string() + ".tmp-" + std::to_string(getpid());
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) throw io_error("cannot write " + temporary.string() + ": " + std::strerror(errno));
    std::size_t written = 0;
    while (written < bytes.size()) {
        const auto n = ::write(fd, bytes.data() + written, bytes.size() - written);
        if (n < 0) {
            ::close(fd);
            fs::remove(temporary);
            throw io_error("cannot write " + temporary.string() + ": " + std::strerror(errno));
        }
        written += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        fs::remove(temporary);
        throw io_error("cannot flush " + temporary.string());
    }
    fs::rename(temporary, target);
    const int dir = ::open(target.parent_path().c_str(), O_RDONLY | O_DIRECTORY);
    if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
}

}  // namespace dnnc
