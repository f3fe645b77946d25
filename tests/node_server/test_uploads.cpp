// A client's upload to a lead, frame by frame: at its end or anew from 0, named by hex
// digits only, a short frame refused.
#include "lead/uploads.hpp"

#include "dnnc/core/error.hpp"
#include "dnnc/core/files.hpp"

#include "temp_folder.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>

using namespace dnnc;
using namespace dnnc::node_server;

namespace {

using test::temp_folder;

std::string frame_of(const std::string& name, std::uint64_t offset, const std::string& bytes) {
    std::string payload(1, static_cast<char>(name.size()));
    payload += name;
    payload.append(reinterpret_cast<const char*>(&offset), sizeof offset);
    return payload + bytes;
}

}  // namespace

TEST_CASE("an upload grows at its end and starts anew from 0") {
    temp_folder state("uploads");
    const auto dir = state.path.string();
    receive_upload(dir, frame_of("ab12", 0, "hello "));
    receive_upload(dir, frame_of("ab12", 6, "world"));
    CHECK(read_file(upload_path(dir, "ab12")) == "hello world");
    CHECK_THROWS_AS(receive_upload(dir, frame_of("ab12", 3, "x")), usage_error);  // not at its end
    CHECK_THROWS_AS(receive_upload(dir, frame_of("cd", 4, "x")), usage_error);    // none of that name yet
    receive_upload(dir, frame_of("ab12", 0, "new"));
    CHECK(read_file(upload_path(dir, "ab12")) == "new");
}

TEST_CASE("an upload's name is hex digits, and a frame too short for its name and offset is refused") {
    temp_folder state("uploads");
    const auto dir = state.path.string();
    for (const std::string& name : std::vector<std::string>{"", "AB", "../x", std::string(65, 'a')}) CHECK_THROWS_AS(upload_path(dir, name), usage_error);
    CHECK(upload_path(dir, std::string(64, 'f')).find("uploads") != std::string::npos);
    CHECK_THROWS_AS(receive_upload(dir, ""), protocol_error);
    CHECK_THROWS_AS(receive_upload(dir, std::string(1, '\x04') + "ab12" + "1234567"), protocol_error);
}
