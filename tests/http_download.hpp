#pragma once
// A real HTTP/1.1 client for the tests of the live page's downloads: Boost.Beast parses the
// answer (chunked or not, of any size) and its body goes to a file a piece at a time.
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace dnnc::test {

struct http_download_result {
    unsigned status = 0;  // 0: no answer
    std::string content_type, disposition;
    std::uint64_t bytes = 0;          // of the body, all in the file
    boost::system::error_code error;  // what ended the read before the body's end, if anything
    bool complete() const { return status != 0 && !error; }
};

// GET `target` from 127.0.0.1:`port` (Authorization: Bearer `token`) into the file `path`;
// `progress`, when given, is called with the body's bytes so far after each read. A
// connection closed before a chunked body's last chunk ends it with http::error::partial_message.
inline http_download_result http_download(int port, const std::string& target, const std::string& token, const std::string& path,
                                          const std::function<void(std::uint64_t)>& progress = {}) {
    namespace asio = boost::asio;
    namespace http = boost::beast::http;
    asio::io_context io;
    asio::ip::tcp::socket s(io);
    s.connect({asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)});
    http::request<http::empty_body> request{http::verb::get, target, 11};
    request.set(http::field::host, "localhost");
    request.set(http::field::authorization, "Bearer " + token);
    request.set(http::field::connection, "close");
    http::write(s, request);

    http_download_result r;
    boost::beast::flat_buffer buffer;
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // not boost::none: Boost 1.74 then refuses any Content-Length
    http::read_header(s, buffer, parser, r.error);
    if (r.error) return r;
    r.status = parser.get().result_int();
    r.content_type = std::string(parser.get()[http::field::content_type]);
    r.disposition = std::string(parser.get()[http::field::content_disposition]);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    std::vector<char> piece(1u << 16);
    while (!parser.is_done()) {
        parser.get().body().data = piece.data();
        parser.get().body().size = piece.size();
        http::read(s, buffer, parser, r.error);
        if (r.error == http::error::need_buffer) r.error = {};
        const auto got = piece.size() - parser.get().body().size;
        out.write(piece.data(), static_cast<std::streamsize>(got));
        r.bytes += got;
        if (r.error) break;
        if (progress) progress(r.bytes);
    }
    return r;
}

}  // namespace dnnc::test
