#include "dnnc/protocol/snapshot_file.hpp"

#include "dnnc/model/check.hpp"
#include "dnnc/model/resolve.hpp"
#include "dnnc/model/expand.hpp"
#include "dnnc/protocol/xml.hpp"
#include "state_codec.hpp"

#include <openssl/evp.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dnnc::protocol {
using namespace model;  // the values this codec reads and writes
namespace {

class sha256_stream {
public:
    sha256_stream() : ctx_(EVP_MD_CTX_new()) {
        if (!ctx_ || EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1) throw error("SHA-256 failed");
    }
    ~sha256_stream() { EVP_MD_CTX_free(ctx_); }
    sha256_stream(const sha256_stream&) = delete;
    sha256_stream& operator=(const sha256_stream&) = delete;
    void add(std::string_view bytes) {
        if (EVP_DigestUpdate(ctx_, bytes.data(), bytes.size()) != 1) throw error("SHA-256 failed");
    }
    std::string digest() {
        unsigned char out[EVP_MAX_MD_SIZE];
        unsigned int length = 0;
        if (EVP_DigestFinal_ex(ctx_, out, &length) != 1) throw error("SHA-256 failed");
        return std::string(reinterpret_cast<const char*>(out), length);
    }

private:
    EVP_MD_CTX* ctx_;
};

// Bytes are buffered up to this many before they go to the file (or after they came from it).
constexpr std::size_t file_chunk = std::size_t{1} << 20;
constexpr std::size_t checksum_bytes = 32;

}  // namespace

struct snapshot_writer::impl {
    atomic_file file;
    sha256_stream hash;
    std::string buffer;
    std::uint64_t count, added = 0, written = 0;

    impl(const std::string& path, std::uint64_t n) : file(path), count(n) {}
    void flush() {
        hash.add(buffer);
        file.append(buffer);
        written += buffer.size();
        buffer.clear();
    }
};

snapshot_writer::snapshot_writer(const std::string& path, const document& doc, std::int64_t tick, std::uint64_t count)
    : impl_(std::make_unique<impl>(path, count)) {
    document without = doc;
    without.state.reset();
    const std::string xml = serialize(without);
    auto& out = impl_->buffer;
    out.assign(snapshot_magic, sizeof snapshot_magic);
    put<std::uint32_t>(out, snapshot_format);
    put<std::uint64_t>(out, xml.size());
    out += xml;
    put<std::int64_t>(out, tick);
    put<std::uint64_t>(out, count);
}

snapshot_writer::~snapshot_writer() = default;

void snapshot_writer::add(const indexed_state& s) {
    if (impl_->added == impl_->count) throw error("a snapshot of " + std::to_string(impl_->count) + " neurons was given more states");
    put_state(impl_->buffer, s);
    ++impl_->added;
    if (impl_->buffer.size() >= file_chunk) impl_->flush();
}

void snapshot_writer::commit() {
    if (impl_->added != impl_->count)
        throw error("a snapshot of " + std::to_string(impl_->count) + " neurons was given " + std::to_string(impl_->added) + " states");
    impl_->flush();
    const std::string sum = impl_->hash.digest();
    impl_->file.append(sum);
    impl_->written += sum.size();
    impl_->file.commit();
}

std::uint64_t snapshot_writer::bytes() const { return impl_->written + impl_->buffer.size(); }

// Reads the body (everything before the checksum) through a buffer of a chunk, hashing each
// chunk as it is loaded; get/take/left as byte_reader has them, for the state codec.
struct snapshot_reader::impl {
    std::string path;
    int fd = -1;
    std::uint64_t unread = 0;  // body bytes not loaded yet
    std::string buffer;
    std::size_t at = 0;
    sha256_stream hash;
    std::uint32_t version = 0;
    document doc;
    std::uint64_t count = 0, read = 0;

    ~impl() {
        if (fd >= 0) ::close(fd);
    }
    void load(char* to, std::size_t n) {
        if (n > left()) throw protocol_error("snapshot is truncated");
        while (n > 0) {
            if (at == buffer.size()) refill(buffer, static_cast<std::size_t>(std::min<std::uint64_t>(unread, file_chunk)));
            const auto k = std::min(n, buffer.size() - at);
            std::memcpy(to, buffer.data() + at, k);
            at += k;
            to += k;
            n -= k;
        }
    }
    void refill(std::string& into, std::size_t n) {
        into.resize(n);
        std::size_t got = 0;
        while (got < n) {
            const auto r = ::read(fd, into.data() + got, n - got);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) throw config_error({path, 0, 0}, std::string("cannot read the file: ") + std::strerror(errno));
            if (r == 0) throw protocol_error("the file changed while it was read");
            got += static_cast<std::size_t>(r);
        }
        if (&into == &buffer) {
            hash.add(into);
            unread -= n;
            at = 0;
        }
    }
    template <typename T>
    T get() {
        T value;
        load(reinterpret_cast<char*>(&value), sizeof(T));
        return value;
    }
    std::string take(std::size_t n) {
        std::string s(n, '\0');
        load(s.data(), n);
        return s;
    }
    std::uint64_t left() const { return (buffer.size() - at) + unread; }
};

snapshot_reader::snapshot_reader(const std::string& path, const file_access& access) : impl_(std::make_unique<impl>()) {
    auto& m = *impl_;
    m.path = path;
    auto damaged = [&](const std::string& why) { return config_error({path, 0, 0}, "damaged snapshot: " + why); };
    m.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (m.fd < 0) throw config_error({path, 0, 0}, std::string("cannot open the file: ") + std::strerror(errno));
    struct stat about {};
    if (::fstat(m.fd, &about) != 0 || !S_ISREG(about.st_mode)) throw config_error({path, 0, 0}, "not a regular file");
    const auto size = static_cast<std::uint64_t>(about.st_size);
    if (size < sizeof snapshot_magic + 4 + checksum_bytes) throw damaged("not a dnnc binary snapshot (bad magic or too short)");
    m.unread = size - checksum_bytes;
    try {
        char magic[sizeof snapshot_magic];
        m.load(magic, sizeof magic);
        if (std::memcmp(magic, snapshot_magic, sizeof magic) != 0) throw damaged("not a dnnc binary snapshot (bad magic or too short)");
        auto head = read_snapshot_head(m, path, access);
        m.version = head.version;
        m.doc = std::move(head.doc);
        const auto tick = m.get<std::int64_t>();
        m.count = m.get<std::uint64_t>();
        check_state_count(m.count, m.left(), m.version, symbol_table(*m.doc.net).neuron_count());
        m.doc.state = snapshot_state{tick, {}, {path, 0, 0}};
    } catch (const protocol_error& e) {
        throw damaged(e.what());
    }
}

snapshot_reader::~snapshot_reader() = default;

const document& snapshot_reader::doc() const { return impl_->doc; }

std::uint64_t snapshot_reader::count() const { return impl_->count; }

bool snapshot_reader::next(indexed_state& s) {
    auto& m = *impl_;
    try {
        if (m.read < m.count) {
            s = get_state(m, m.version);
            ++m.read;
            return true;
        }
        if (m.left() != 0) throw protocol_error("trailing bytes");
        std::string sum;
        m.refill(sum, checksum_bytes);
        if (m.hash.digest() != sum) throw protocol_error("checksum mismatch (the file is truncated or altered)");
        return false;
    } catch (const protocol_error& e) {
        throw config_error({m.path, 0, 0}, std::string("damaged snapshot: ") + e.what());
    }
}

document check_snapshot_file(const std::string& path, const file_access& access) {
    snapshot_reader reader(path, access);
    document doc = reader.doc();
    check_document(doc);
    const auto net = expand_neurons(*doc.net);
    state_check check(doc, net);
    std::vector<diagnostic> problems;
    indexed_state s;
    while (reader.next(s)) {
        neuron_state n;
        try {
            n = named_state(std::move(s), net, path);
        } catch (const protocol_error& e) {
            throw config_error({path, 0, 0}, std::string("damaged snapshot: ") + e.what());
        }
        if (problems.size() < 20) check_state_values(n, doc.state->tick, problems);
        check.add(n);
    }
    if (!problems.empty()) throw config_error(std::move(problems));
    check.finish(*doc.state);
    return doc;
}

}  // namespace dnnc::protocol
