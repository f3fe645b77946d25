#include "dnnc/core/files.hpp"

#include "dnnc/core/error.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

namespace dnnc {

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw config_error({path, 0, 0}, "cannot open the file");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
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
