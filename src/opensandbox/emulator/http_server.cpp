#include "http_server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include <algorithm>
#include <optional>

namespace ngfail::opensandbox::emulator {
namespace {

namespace asio = boost::asio;
constexpr auto as_result = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t max_request_body = 64 << 20;  // files are uploaded in one request
constexpr auto wait_step = std::chrono::milliseconds(50);
constexpr auto stop_grace = std::chrono::seconds(5);

}  // namespace

// ---- exchange ---------------------------------------------------------------------------------

asio::awaitable<void> exchange::reply(response res) {
    res.version(req_.version());
    res.keep_alive(req_.keep_alive() && !close_);
    res.prepare_payload();
    auto write = stream_.with([&](auto& s) { return http::async_write(s, res, as_result); });
    auto [ec, n] = co_await std::move(write);
    if (ec) close_ = true;
}

asio::awaitable<bool> exchange::begin_stream(http::response<http::empty_body> head) {
    head.version(req_.version());
    head.keep_alive(req_.keep_alive() && !close_);
    head.chunked(true);
    http::response_serializer<http::empty_body> serializer(head);
    auto write = stream_.with([&](auto& s) { return http::async_write_header(s, serializer, as_result); });
    auto [ec, n] = co_await std::move(write);
    streaming_ = !ec;
    if (ec) close_ = true;
    co_return !ec;
}

asio::awaitable<bool> exchange::chunk(std::string_view text) {
    if (!streaming_) co_return false;
    const auto piece = http::make_chunk(asio::buffer(text.data(), text.size()));
    auto write = stream_.with([&](auto& s) { return asio::async_write(s, piece, as_result); });
    auto [ec, n] = co_await std::move(write);
    if (ec) {
        streaming_ = false;
        close_ = true;
    }
    co_return !ec;
}

asio::awaitable<void> exchange::end_stream() {
    if (!streaming_) co_return;
    const auto last = http::make_chunk_last();
    auto write = stream_.with([&](auto& s) { return asio::async_write(s, last, as_result); });
    auto [ec, n] = co_await std::move(write);
    streaming_ = false;
    if (ec) close_ = true;
}

asio::awaitable<bool> exchange::wait(std::chrono::milliseconds how_long) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    const auto end = std::chrono::steady_clock::now() + how_long;
    // In short steps, so that a stopping server is noticed without cancelling timers across threads.
    while (!stopping_) {
        const auto left = end - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero()) co_return true;
        timer.expires_after(std::min<std::chrono::steady_clock::duration>(left, wait_step));
        co_await timer.async_wait(as_result);
    }
    co_return false;
}

// ---- the server ------------------------------------------------------------------------------

http_server::http_server(handler h, unsigned threads) : handler_(std::move(h)), thread_count_(std::max(1u, threads)) {}

http_server::~http_server() { stop(); }

unsigned short http_server::listen(const std::string& host, unsigned short port) {
    auto l = std::make_unique<listener>(listener{asio::make_strand(io_), tcp::acceptor(io_)});
    const tcp::endpoint at(asio::ip::make_address(host), port);
    l->acceptor.open(at.protocol());
    l->acceptor.set_option(tcp::acceptor::reuse_address(true));
    l->acceptor.bind(at);
    l->acceptor.listen(asio::socket_base::max_listen_connections);
    const unsigned short bound = l->acceptor.local_endpoint().port();
    ++accept_loops_;
    asio::co_spawn(l->on, accept_loop(*l), asio::detached);
    listeners_.push_back(std::move(l));
    return bound;
}

void http_server::start() {
    for (unsigned i = 0; i < thread_count_; ++i) threads_.emplace_back([this] { io_.run(); });
}

asio::awaitable<void> http_server::accept_loop(listener& l) {
    asio::steady_timer backoff_timer(l.on);
    std::chrono::milliseconds backoff{0};
    const unsigned short local_port = l.acceptor.local_endpoint().port();
    while (!stopping_) {
        strand session_strand = asio::make_strand(io_);
        tcp::socket socket(session_strand);
        auto [ec] = co_await l.acceptor.async_accept(socket, as_result);
        if (stopping_) break;
        if (ec) {
            // Out of descriptors (EMFILE), say: wait, longer each time, rather than spin a core.
            backoff = std::clamp(backoff * 2, std::chrono::milliseconds(1), std::chrono::milliseconds(100));
            backoff_timer.expires_after(backoff);
            co_await backoff_timer.async_wait(as_result);
            continue;
        }
        backoff = std::chrono::milliseconds(0);
        ++connections_;
        asio::co_spawn(session_strand, serve(std::move(socket), session_strand, local_port), asio::detached);
    }
    --accept_loops_;
}

asio::awaitable<void> http_server::serve(tcp::socket socket, strand on, unsigned short local_port) {
    {
        const std::lock_guard lock(sockets_mutex_);
        sockets_.emplace(&socket, on);
    }
    boost::system::error_code ec;
    socket.set_option(tcp::no_delay(true), ec);  // as Go's HTTP servers: no Nagle delay on small replies
    bool stopping_connection = false;
    boost::beast::flat_buffer buffer;
    std::optional<server_stream::tls_stream> tls;
    if (tls_) {
        tls.emplace(socket, *tls_);
        auto [handshake_error] = co_await tls->async_handshake(asio::ssl::stream_base::server, as_result);
        if (handshake_error) stopping_connection = true;
    }
    server_stream stream(socket, tls ? &*tls : nullptr);
    while (!stopping_ && !stopping_connection) {
        http::request_parser<http::string_body> parser;
        parser.body_limit(max_request_body);
        auto read = stream.with([&](auto& s) { return http::async_read(s, buffer, parser, as_result); });
        auto [read_error, n] = co_await std::move(read);
        if (read_error) break;
        const request req = parser.release();
        exchange x(stream, req, local_port, stopping_);
        bool failed = false;
        try {
            co_await handler_(x);
        } catch (...) {
            failed = true;  // a handler that throws ends its connection; the server goes on
        }
        if (failed || x.closes() || !req.keep_alive()) break;
    }
    {
        const std::lock_guard lock(sockets_mutex_);
        sockets_.erase(&socket);
    }
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
    --connections_;
}

void http_server::use_tls(const std::string& certificate_file, const std::string& key_file) {
    auto context = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    context->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                         asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                         asio::ssl::context::no_tlsv1_1);
    context->use_certificate_chain_file(certificate_file);
    context->use_private_key_file(key_file, asio::ssl::context::pem);
    tls_ = std::move(context);
}

void http_server::close_all() {
    for (auto& l : listeners_) {
        asio::post(l->on, [&acceptor = l->acceptor] {
            boost::system::error_code ec;
            acceptor.close(ec);
        });
    }
    const std::lock_guard lock(sockets_mutex_);
    for (auto& [socket, on] : sockets_) {
        // On the connection's own strand, and only if it is still open: a connection that
        // ended meanwhile has left the registry (on that strand) and freed its socket.
        asio::post(on, [this, socket = socket] {
            const std::lock_guard still(sockets_mutex_);
            if (!sockets_.contains(socket)) return;
            boost::system::error_code ec;
            socket->shutdown(tcp::socket::shutdown_both, ec);
            socket->close(ec);
        });
    }
}

void http_server::stop() {
    if (stopping_.exchange(true)) return;
    if (threads_.empty()) {  // never started: run the loops to their end here
        close_all();
        io_.run_for(stop_grace);
        return;
    }
    close_all();
    const auto deadline = std::chrono::steady_clock::now() + stop_grace;
    while ((connections_ > 0 || accept_loops_ > 0) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        close_all();  // connections accepted meanwhile
    }
    io_.stop();
    for (auto& t : threads_) t.join();
    threads_.clear();
}

}  // namespace ngfail::opensandbox::emulator
