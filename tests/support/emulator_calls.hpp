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

#include <string>
#include <utility>
#include <vector>

namespace ngfail_test {

namespace http = boost::beast::http;
namespace json = boost::json;
using ngfail::opensandbox::embedded_server;

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

}  // namespace ngfail_test
