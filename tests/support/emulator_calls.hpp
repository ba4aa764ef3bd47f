// Requests to `ngfail serve`'s emulator on loopback, one fresh connection each, for the
// end-to-end tests of its routes.
#pragma once

#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ngfail_test {

namespace http = boost::beast::http;
namespace json = boost::json;
using ngfail::opensandbox::testing::embedded_server;

struct reply {
    unsigned status = 0;
    std::string body;
    http::fields headers;
    [[nodiscard]] json::object object() const { return json::parse(body).as_object(); }
};

// One request on a fresh connection.
inline reply call(unsigned short port, http::verb verb, const std::string& target, const std::string& body = "",
                  const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    http::request<http::string_body> req(verb, target, 11);
    req.set(http::field::host, "127.0.0.1");
    if (!body.empty()) {
        req.set(http::field::content_type, "application/json");
        req.body() = body;
    }
    for (const auto& [name, value] : headers) req.set(name, value);
    req.prepare_payload();
    http::write(socket, req);
    boost::beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // a download may be a file of 64 MiB
    boost::beast::error_code ec;
    http::read(socket, buffer, parser, ec);  // a dropped stream keeps what arrived before the drop
    const auto& res = parser.get();
    return {res.result_int(), res.body(), res.base()};
}

inline std::string create(const embedded_server& s, const std::string& extra = "") {
    const auto r = call(s.port(), http::verb::post, "/v1/sandboxes",
                        R"({"image":{"uri":"python:3.11"},"entrypoint":["sleep","inf"])" + extra + "}");
    EXPECT_EQ(r.status, 202u) << r.body;
    return std::string(r.object().at("id").as_string());
}

// Every byte but letters and digits as %XX: a path or a pattern in a query, whatever it holds.
inline std::string url_encoded(std::string_view text) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string encoded;
    for (const unsigned char ch : text) {
        encoded += std::isalnum(ch) != 0 ? std::string(1, static_cast<char>(ch)) : std::string{'%', hex[ch >> 4], hex[ch & 0xf]};
    }
    return encoded;
}

// A multipart upload of each (path, content) in turn, in one request, as the SDKs send it.
inline reply upload(const embedded_server& s, const std::string& sandbox,
                    const std::vector<std::pair<std::string, std::string>>& files) {
    std::string form;
    for (const auto& [path, content] : files) {
        form += "--b\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n" +
                json::serialize(json::object{{"path", path}}) +
                "\r\n--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\n" + content + "\r\n";
    }
    return call(s.port(), http::verb::post, "/sandboxes/" + sandbox + "/proxy/44772/files/upload", form + "--b--\r\n",
                {{"Content-Type", "multipart/form-data; boundary=b"}});
}

}  // namespace ngfail_test
