// The client's reading of HTTP replies: Beast's parser with the client's limits, then the
// error envelope or the sandbox document.
#include "opensandbox/client/reply.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    namespace http = boost::beast::http;
    http::response_parser<http::string_body> parser;
    parser.header_limit(64 << 10);
    parser.body_limit(1 << 20);
    parser.eager(true);
    boost::beast::error_code ec;
    parser.put(boost::asio::buffer(data, size), ec);
    if (ec || !parser.is_done()) return 0;
    const auto& res = parser.get();
    ngfail::opensandbox::detail::redactor secrets;
    secrets.add("sk-fuzz");
    // Each reader either reads the value or says it is malformed, never anything else.
    const auto reads_or_refuses = [](auto read) {
        try {
            read();
        } catch (const std::system_error& e) {
            if (e.code() != ngfail::opensandbox::errc::malformed_response) std::abort();
        }
    };
    namespace detail = ngfail::opensandbox::detail;
    if (res.result_int() >= 300) {
        reads_or_refuses([&] {
            const auto e = detail::api_error_of(res.base(), res.body(), secrets);
            if (e.status() != static_cast<int>(res.result_int())) std::abort();
            if (std::string_view(e.what()).find("sk-fuzz") != std::string_view::npos) std::abort();  // scrubbed
        });
        return 0;
    }
    boost::json::error_code jec;
    const auto v = boost::json::parse(res.body(), jec);
    if (jec) return 0;
    reads_or_refuses([&] { (void)detail::sandbox_of(v); });
    reads_or_refuses([&] { (void)detail::endpoint_of(v); });
    reads_or_refuses([&] { (void)detail::entry_of(v); });
    return 0;
}
