// The client's connection: one HTTP/1.1 exchange over TCP, every step bounded by a
// deadline, interim replies skipped, errors that say in which phase they happened.
#pragma once

#include <ngfail/opensandbox/client.hpp>

#include "reply.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace ngfail::opensandbox::detail {

namespace beast = boost::beast;
namespace beast_http = beast::http;
using tcp = boost::asio::ip::tcp;
using clock = std::chrono::steady_clock;
using string_response = beast_http::response<beast_http::string_body>;

inline constexpr std::size_t max_header_bytes = 64 << 10;
inline constexpr int max_interim_replies = 16;

// `timeout` from now, saturating: a huge timeout (milliseconds::max()) means "no deadline",
// never an overflow into the past.
inline clock::time_point deadline_after(std::chrono::milliseconds timeout) noexcept {
    const clock::time_point now = clock::now();
    if (timeout <= std::chrono::milliseconds::zero()) return now;
    const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(clock::time_point::max() - now);
    return timeout >= room ? clock::time_point::max() : now + timeout;
}

inline bool is_interim(unsigned status) noexcept { return status >= 100 && status < 200 && status != 101; }

// One HTTP/1.1 exchange, every step bounded by the deadline. Errors are connection_errors
// that say in which phase they happened.
class exchange {
public:
    exchange(const target& t, clock::time_point deadline) : stream_(io_), target_(t), deadline_(deadline) {}

    void connect() {
        boost::system::error_code ec;
        const auto address = boost::asio::ip::make_address(target_.host, ec);
        std::vector<tcp::endpoint> endpoints;
        if (!ec) {
            endpoints.emplace_back(address, target_.port);
        } else {
            tcp::resolver resolver(io_);
            tcp::resolver::results_type found;
            run([&](auto handler) { resolver.async_resolve(target_.host, std::to_string(target_.port), handler); },
                phase::connect, &found);
            for (const auto& entry : found) endpoints.push_back(entry.endpoint());
        }
        run([&](auto handler) { stream_.async_connect(endpoints, handler); }, phase::connect);
    }

    template <class Body>
    void send(beast_http::request<Body>& request) {
        const bool v6 = target_.host.find(':') != std::string::npos;
        request.set(beast_http::field::host, (v6 ? "[" + target_.host + "]" : target_.host) + ':' +
                                                 std::to_string(target_.port));
        request.prepare_payload();
        run([&](auto handler) { beast_http::async_write(stream_, request, handler); }, phase::send);
    }

    // Interim 1xx replies (100 Continue, 103 Early Hints) are skipped, as HTTP requires; a
    // peer that sends nothing else is malformed.
    string_response receive(std::size_t max_body) {
        for (int interim = 0; interim <= max_interim_replies; ++interim) {
            beast_http::response_parser<beast_http::string_body> parser;
            parser.header_limit(max_header_bytes);
            parser.body_limit(max_body);
            run([&](auto handler) { beast_http::async_read(stream_, buffer_, parser, handler); }, phase::receive);
            if (!is_interim(parser.get().result_int())) return parser.release();
        }
        too_many_interim_replies();
    }

    // Reads a streamed reply: `on_head` sees the status and headers, then `on_bytes` each
    // piece of the body as it arrives.
    template <class OnHead, class OnBytes>
    void receive_stream(OnHead&& on_head, OnBytes&& on_bytes) {
        std::optional<beast_http::response_parser<beast_http::buffer_body>> parser_slot;
        for (int interim = 0;; ++interim) {
            if (interim > max_interim_replies) too_many_interim_replies();
            auto& p = parser_slot.emplace();
            p.header_limit(max_header_bytes);
            p.body_limit(boost::none);  // the reader bounds what it keeps
            run([&](auto handler) { beast_http::async_read_header(stream_, buffer_, p, handler); }, phase::receive);
            if (!is_interim(p.get().result_int())) break;
        }
        auto& parser = *parser_slot;
        on_head(parser.get().base());
        std::array<char, 8192> chunk{};
        while (!parser.is_done()) {
            parser.get().body().data = chunk.data();
            parser.get().body().size = chunk.size();
            boost::system::error_code ec;
            start([&](auto handler) { beast_http::async_read(stream_, buffer_, parser, handler); }, ec);
            if (ec == beast_http::error::need_buffer) ec = {};
            // What arrived before a failure is still evidence (an `init` names the execution).
            on_bytes(std::string_view(chunk.data(), chunk.size() - parser.get().body().size));
            if (ec) throw connection_error(as_transport_error(ec), phase::receive);
        }
    }

private:
    [[noreturn]] static void too_many_interim_replies() {
        throw connection_error(boost::system::error_code(make_error_code(errc::malformed_response)), phase::receive);
    }

    // Starts an operation and runs the io_context until it completes or the deadline passes.
    template <class Start, class Result = std::nullptr_t>
    void start(Start&& op, boost::system::error_code& ec, Result* result = nullptr) {
        stream_.expires_at(deadline_);
        bool done = false;
        op([&](boost::system::error_code e, auto&& value) {
            ec = e;
            done = true;
            if constexpr (!std::is_same_v<Result, std::nullptr_t>) {
                if (result) *result = std::forward<decltype(value)>(value);
            }
        });
        io_.restart();
        io_.run_until(deadline_);
        if (!done) {  // only a resolve outlives the stream's expiry
            stream_.socket().close();
            io_.restart();
            io_.run();
            ec = beast::error::timeout;
        }
    }

    template <class Start, class Result = std::nullptr_t>
    void run(Start&& op, phase at, Result* result = nullptr) {
        boost::system::error_code ec;
        start(std::forward<Start>(op), ec, result);
        if (ec) throw connection_error(as_transport_error(ec), at);
    }

    // A reply Beast cannot parse (over a limit, bad syntax) is malformed, not a dropped peer;
    // only a message cut short by the peer stays a transport error.
    static boost::system::error_code as_transport_error(const boost::system::error_code& ec) {
        const auto& http_errors = beast_http::make_error_code(beast_http::error::end_of_stream).category();
        const bool cut_short = ec == beast_http::error::end_of_stream || ec == beast_http::error::partial_message;
        if (ec.category() != http_errors || cut_short) return ec;
        return boost::system::error_code(make_error_code(errc::malformed_response));
    }

    boost::asio::io_context io_;
    beast::tcp_stream stream_;
    beast::flat_buffer buffer_;
    target target_;
    clock::time_point deadline_;
};

}  // namespace ngfail::opensandbox::detail
