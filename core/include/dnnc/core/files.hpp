#pragma once
// Reading and writing whole files, the way every part of dnnc does it.
#include <string>
#include <string_view>

namespace dnnc {

// The bytes of a file; config_error (located at the file) when it cannot be opened.
std::string read_file(const std::string& path);

// Writes atomically: a temporary file beside `path`, fsync, rename, fsync of the folder; a
// crash leaves either the old file or the new one, never a part. Throws io_error.
void write_atomically(const std::string& path, std::string_view bytes);

}  // namespace dnnc
