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
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>  // operator<< for a head

#include <boost/beast/core/string.hpp>

#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <tuple>
#include <cerrno>
#include <charconv>
#include <sstream>
#include <cstdint>
#include <optional>

namespace ngfail::opensandbox::testing::detail {
namespace {

namespace asio = boost::asio;
constexpr auto as_result = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t max_request_body = 64 << 20;  // files are uploaded in one request
constexpr auto wait_step = std::chrono::milliseconds(50);
constexpr auto stop_grace = std::chrono::seconds(5);

}  // namespace

// ---- exchange ---------------------------------------------------------------------------------

bool safe_header_values(const http::fields& fields) noexcept {
    for (const auto& field : fields) {
        if (field.value().find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos) return false;
    }
    return true;
}

namespace {

// What is sent instead of a reply whose header would carry CR, LF or NUL.
response refused_header(unsigned version) {
    response res(http::status::internal_server_error, version);
    res.set(http::field::content_type, "text/plain");
    res.body() = "a header value held CR, LF or NUL and was not sent";
    return res;
}

}  // namespace

namespace {

// A message's head as it goes on the wire: start line, fields, and the empty line.
template <class Fields>
std::string head_text(const http::header<false, Fields>& head) {
    std::ostringstream text;
    text << head;
    return std::move(text).str();
}

// RFC 9112 §7.1: a chunk is its size in hex, CRLF, the data, CRLF.
std::string chunk_size_line(std::size_t size) {
    char digits[2 * sizeof(std::size_t) + 2];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, size, 16);
    return std::string(digits, end) + "\r\n";
}

}  // namespace

asio::awaitable<void> exchange::wait_for_cut() {
    const auto left = *cut_at_ - std::chrono::steady_clock::now();
    if (left > std::chrono::steady_clock::duration::zero()) {
        (void)co_await wait(std::chrono::ceil<std::chrono::milliseconds>(left));
    }
}

void exchange::cut(std::optional<std::size_t> bytes, std::optional<std::chrono::milliseconds> after) noexcept {
    cut_bytes_ = bytes;
    if (after) cut_at_ = std::chrono::steady_clock::now() + *after;
}

std::size_t exchange::before_cut(std::size_t total) const noexcept {
    std::size_t keep = total;
    if (cut_bytes_) {
        const std::size_t limit = body_from_ + *cut_bytes_;
        keep = limit > written_ ? std::min(total, limit - written_) : 0;
    }
    if (cut_at_ && std::chrono::steady_clock::now() >= *cut_at_) {
        const std::size_t head_left = body_from_ > written_ ? std::min(total, body_from_ - written_) : 0;
        keep = std::min(keep, head_left + (total - head_left) / 2);
    }
    return keep;
}

asio::awaitable<bool> exchange::write(std::string_view a, std::string_view b, std::string_view c) {
    if (cut_done_) co_return false;
    if (lost_) co_return true;
    const std::size_t total = a.size() + b.size() + c.size();
    const std::size_t keep = before_cut(total);
    std::string prefix;
    if (keep < total) {  // the cut: what goes before it, then the connection closes
        prefix.append(a).append(b).append(c).resize(keep);
        a = prefix;
        b = c = {};
    }
    const std::array pieces{asio::buffer(a), asio::buffer(b), asio::buffer(c)};
    stream_.expires_after(write_timeout_);
    auto [ec, n] = co_await stream_.with([&](auto& s) { return asio::async_write(s, pieces, as_result); });
    written_ += n;
    if (ec || keep < total) {
        close_ = true;
        cut_done_ = keep < total;
        co_return false;
    }
    co_return true;
}

asio::awaitable<void> exchange::reply(response res) {
    if (!safe_header_values(res.base())) res = refused_header(req_.version());
    status_ = res.result_int();
    res.version(req_.version());
    res.keep_alive(req_.keep_alive() && !close_);
    res.prepare_payload();
    const std::string head = head_text(res.base());
    // HEAD: the length of the body a GET would get, and no body.
    const std::string_view body = req_.method() == http::verb::head ? std::string_view() : res.body();
    body_from_ = written_ + head.size();
    if (cut_at_) co_await wait_for_cut();
    co_await write(head, body);
    if (on_answered_) on_answered_();
}

asio::awaitable<bool> exchange::begin_stream(http::response<http::empty_body> head) {
    if (!safe_header_values(head.base())) {
        co_await reply(refused_header(req_.version()));
        co_return false;
    }
    status_ = head.result_int();
    head.version(req_.version());
    // A head that gives the body's length (a download) is followed by that many bytes as they
    // are; any other body is chunked, or, to HTTP/1.0 peers, ends where the connection does.
    const bool sized = head.has_content_length();
    chunked_ = !sized && req_.version() >= 11;
    if (!chunked_ && !sized) close_ = true;
    head.keep_alive(req_.keep_alive() && !close_);
    if (!sized) head.chunked(chunked_);
    pending_ = head_text(head.base());  // sent with the first event, as real execd sends it
    body_from_ = written_ + pending_.size();
    streaming_ = true;
    co_return true;
}

asio::awaitable<bool> exchange::chunk(std::string_view text) {
    if (!streaming_) co_return false;
    if (text.empty()) co_return true;  // an empty chunk would end the body
    if (chunked_) pending_ += chunk_size_line(text.size());
    pending_ += text;
    if (chunked_) pending_ += "\r\n";
    if (pending_.size() >= max_pending) co_return co_await flush();
    co_return true;
}

asio::awaitable<void> exchange::end_stream() {
    if (!streaming_) co_return;
    if (cut_at_) co_await wait_for_cut();
    if (chunked_) pending_ += "0\r\n\r\n";
    co_await flush();
    streaming_ = false;
    if (on_answered_) on_answered_();
}

asio::awaitable<bool> exchange::flush() {
    if (pending_.empty()) co_return streaming_;
    const bool sent = co_await write(pending_);
    pending_.clear();
    if (!sent) streaming_ = false;
    co_return sent;
}

bool server_stream::peer_left() noexcept {
    char byte = 0;
    const auto n = ::recv(tcp_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

asio::awaitable<bool> exchange::wait(std::chrono::milliseconds how_long) {
    if (!pending_.empty() && !co_await flush()) co_return false;
    asio::steady_timer timer(co_await asio::this_coro::executor);
    const auto end = std::chrono::steady_clock::now() + how_long;
    // In short steps, so that a stopping server is noticed without cancelling timers across threads.
    while (!stopping_) {
        if (stream_.peer_left()) co_return false;
        const auto left = end - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero()) co_return true;
        timer.expires_after(std::min<std::chrono::steady_clock::duration>(left, wait_step));
        co_await timer.async_wait(as_result);
    }
    co_return false;
}

// ---- the server ------------------------------------------------------------------------------

namespace {

// The descriptors this process may open, less a reserve for listeners, files and clients in
// the same process: more connections than that would leave accept() failing for everyone.
std::size_t descriptor_budget() {
    constexpr std::size_t reserve = 32;
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
    const auto available = static_cast<std::size_t>(limit.rlim_cur);
    return available > 2 * reserve ? available - reserve : available / 2;
}

// A whole request head has arrived on `socket` and waits to be read (peeked, never taken, so
// from any thread). A head that stops halfway is no request: a stranger holding connections
// open with one is shed as an idle one is.
bool request_waiting(tcp::socket& socket) {
    std::array<char, 8192> pending{};
    const auto n = ::recv(socket.native_handle(), pending.data(), pending.size(), MSG_PEEK | MSG_DONTWAIT);
    return n > 0 && std::string_view(pending.data(), static_cast<std::size_t>(n)).find("\r\n\r\n") != std::string_view::npos;
}

}  // namespace

http_server::http_server(handler h, unsigned threads, server_limits limits)
    : handler_(std::move(h)),
      limits_(limits),
      connection_cap_(std::max<std::size_t>(1, std::min(limits.max_connections, descriptor_budget()))),
      thread_count_(std::max(1u, threads)) {
    for (unsigned i = 0; i < thread_count_; ++i) {
        contexts_.push_back(std::make_unique<asio::io_context>(1));
        keep_running_.emplace_back(contexts_.back()->get_executor());
    }
}

http_server::~http_server() { stop(); }

unsigned short http_server::listen(const std::string& host, unsigned short port) {
    asio::io_context& io = *contexts_.front();
    std::shared_ptr<listener> l(new listener{asio::make_strand(io), tcp::acceptor(io)});
    const tcp::endpoint at(asio::ip::make_address(host), port);
    l->acceptor.open(at.protocol());
    l->acceptor.set_option(tcp::acceptor::reuse_address(true));
    l->acceptor.bind(at);
    l->acceptor.listen(asio::socket_base::max_listen_connections);
    const unsigned short bound = l->acceptor.local_endpoint().port();
    {
        const std::lock_guard lock(listeners_mutex_);
        if (stopping_) throw std::system_error(make_error_code(std::errc::operation_canceled), "the server is stopping");
        listeners_[bound] = l;
        ++accept_loops_;
    }
    const strand on = l->on;  // named first: the arguments below are evaluated in any order
    asio::co_spawn(on, accept_loop(std::move(l)), asio::detached);
    return bound;
}

void http_server::close_listener(unsigned short port) {
    std::shared_ptr<listener> l;
    {
        const std::lock_guard lock(listeners_mutex_);
        const auto it = listeners_.find(port);
        if (it == listeners_.end()) return;
        l = std::move(it->second);
        listeners_.erase(it);
    }
    l->open = false;
    // shutdown(2) takes a listening socket out of the listening state at once (the kernel
    // then answers a SYN with a reset), from any thread; the acceptor itself is closed on
    // its strand, where its pending accept runs.
    ::shutdown(l->acceptor.native_handle(), SHUT_RDWR);
    asio::post(l->on, [l] {
        boost::system::error_code ec;
        l->acceptor.close(ec);
    });
    // The FIN goes out now, before whatever reply follows this call, so that a client never
    // finds a kept-alive connection to a closed address still open; the registry's lock keeps
    // each socket open (and its descriptor its own) meanwhile.
    const std::lock_guard lock(sockets_mutex_);
    for (const auto& [socket, c] : sockets_) {
        if (c.local_port != port || c.what != doing::waiting_for_head || c.shed) continue;
        ::shutdown(socket->native_handle(), SHUT_RDWR);
        close_on_its_strand(socket, c.on);
    }
}

void http_server::start() {
    for (const auto& io : contexts_) threads_.emplace_back([io = io.get()] { io->run(); });
}

asio::awaitable<void> http_server::accept_loop(std::shared_ptr<listener> listening) {
    listener& l = *listening;
    asio::steady_timer backoff_timer(l.on);
    std::chrono::milliseconds backoff{0};
    const unsigned short local_port = l.acceptor.local_endpoint().port();
    while (!stopping_ && l.open) {
        strand session_strand = asio::make_strand(*contexts_[next_context_++ % contexts_.size()]);
        tcp::socket socket(session_strand);
        auto [ec] = co_await l.acceptor.async_accept(socket, as_result);
        if (stopping_ || !l.open) break;
        if (ec) {
            // Out of descriptors (EMFILE), say: make room, and wait, longer each time, rather than spin a core.
            shed_one();
            backoff = std::clamp(backoff * 2, std::chrono::milliseconds(1), std::chrono::milliseconds(100));
            backoff_timer.expires_after(backoff);
            co_await backoff_timer.async_wait(as_result);
            continue;
        }
        backoff = std::chrono::milliseconds(0);
        if (connections_ >= connection_cap_ && !shed_one()) {
            boost::system::error_code ignored;
            socket.close(ignored);  // every connection is busy: the newest goes
            continue;
        }
        ++connections_;
        // Registered here, idle from its accept, rather than once its own thread starts it: a
        // burst of newcomers could otherwise find no connection idle yet to make room.
        auto stream = std::make_unique<boost::beast::tcp_stream>(std::move(socket));
        {
            const std::lock_guard lock(sockets_mutex_);
            sockets_.emplace(&stream->socket(), connection{.on = session_strand,
                                                           .local_port = local_port,
                                                           .what = doing::waiting_for_head,
                                                           .since = std::chrono::steady_clock::now()});
        }
        asio::co_spawn(session_strand, serve(std::move(stream), local_port), asio::detached);
    }
    --accept_loops_;
}

void http_server::set_doing(tcp::socket* socket, doing what) {
    const std::lock_guard lock(sockets_mutex_);
    if (const auto it = sockets_.find(socket); it != sockets_.end() && !it->second.shed) {
        it->second.what = what;
        it->second.since = std::chrono::steady_clock::now();
    }
}

void http_server::answered(tcp::socket* socket) {
    const std::lock_guard lock(sockets_mutex_);
    if (const auto it = sockets_.find(socket); it != sockets_.end() && !it->second.shed && it->second.what == doing::serving) {
        it->second.what = doing::waiting_for_head;
        it->second.since = std::chrono::steady_clock::now();
    }
}

bool http_server::shed_one() {
    const std::lock_guard lock(sockets_mutex_);
    // The first in `doing`'s order, then the oldest: a connection serving a request is never shed.
    const auto before = [](const connection& a, const connection& b) {
        return std::tie(a.what, a.since) < std::tie(b.what, b.since);
    };
    auto chosen = sockets_.end();
    for (auto it = sockets_.begin(); it != sockets_.end(); ++it) {
        if (it->second.shed || it->second.what == doing::serving) continue;
        // An idle connection whose next request has arrived is no longer idle: closing it
        // would lose a request its client has sent (a POST it may not send again).
        if (it->second.what == doing::waiting_for_head && request_waiting(*it->first)) continue;
        if (chosen == sockets_.end() || before(it->second, chosen->second)) chosen = it;
    }
    if (chosen == sockets_.end()) return false;
    chosen->second.shed = true;  // not chosen twice while its close is on its way
    close_on_its_strand(chosen->first, chosen->second.on);
    return true;
}

// A request read whole, or false when the connection should close. A head must come within
// the read deadline; framing that RFC 9112 refuses is answered 400 before the connection closes.
asio::awaitable<bool> http_server::read_request(server_stream& stream, boost::beast::flat_buffer& buffer,
                                                tcp::socket& socket, std::optional<request>& into) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(max_request_body);
    set_doing(&socket, doing::waiting_for_head);
    stream.expires_after(limits_.read_timeout);
    auto [head_error, head_n] =
        co_await stream.with([&](auto& s) { return http::async_read_header(s, buffer, parser, as_result); });
    set_doing(&socket, doing::reading_body);
    const auto refuse = [&](http::status status, std::string_view why) -> asio::awaitable<bool> {
        response res(status, 11);
        res.set(http::field::content_type, "text/plain");
        res.keep_alive(false);
        res.body() = why;
        res.prepare_payload();
        stream.expires_after(limits_.read_timeout);
        co_await stream.with([&](auto& s) { return http::async_write(s, res, as_result); });
        co_return false;
    };
    if (head_error == http::error::buffer_overflow) {
        co_return co_await refuse(http::status::request_header_fields_too_large, "request head too large");
    }
    if (head_error) {
        // A peer that left, or sent nothing in time, gets nothing; a malformed head, a 400.
        if (head_error.category() != http::make_error_code(http::error::end_of_stream).category() ||
            head_error == http::error::end_of_stream ||
            head_error == http::error::partial_message) {
            co_return false;
        }
        co_return co_await refuse(http::status::bad_request, "malformed request");
    }
    const auto& head = parser.get();
    // RFC 9112 §6.3: a request whose last transfer coding is not chunked has no knowable length.
    if (head.count(http::field::transfer_encoding) != 0 && !parser.chunked()) {
        co_return co_await refuse(http::status::bad_request, "a request's last transfer coding must be chunked");
    }
    if (boost::beast::iequals(head[http::field::expect], "100-continue") && head.version() >= 11 &&
        !parser.is_done()) {
        const http::response<http::empty_body> go_on(http::status::continue_, 11);
        stream.expires_after(limits_.read_timeout);
        auto [ec, n] = co_await stream.with([&](auto& s) { return http::async_write(s, go_on, as_result); });
        if (ec) co_return false;
    }
    // Read by pieces, each under the read deadline and all under the body's: a body that
    // stalls is given up after read_timeout, not body_timeout.
    const auto body_deadline = std::chrono::steady_clock::now() + limits_.body_timeout;
    while (!parser.is_done()) {
        const auto left = body_deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero()) co_return false;
        stream.expires_after(std::min<std::chrono::steady_clock::duration>(left, limits_.read_timeout));
        auto [body_error, body_n] =
            co_await stream.with([&](auto& s) { return http::async_read_some(s, buffer, parser, as_result); });
        if (body_error == http::error::body_limit) {
            co_return co_await refuse(http::status::payload_too_large, "request body too large");
        }
        if (body_error == http::error::buffer_overflow) {
            co_return co_await refuse(http::status::bad_request, "a chunk's line or the trailer is too long");
        }
        if (body_error) co_return false;
    }
    set_doing(&socket, doing::serving);
    stream.expires_never();  // the handler may wait as long as it likes between writes
    into.emplace(parser.release());
    co_return true;
}

asio::awaitable<void> http_server::serve(std::unique_ptr<boost::beast::tcp_stream> owned, unsigned short local_port) {
    boost::beast::tcp_stream& tcp = *owned;
    tcp::socket& socket = tcp.socket();
    boost::system::error_code ec;
    socket.set_option(tcp::no_delay(true), ec);  // as Go's HTTP servers: no Nagle delay on small replies
    bool stopping_connection = false;
    boost::beast::flat_buffer buffer(max_read_buffer);
    std::optional<server_stream::tls_stream> tls;
    if (tls_) {
        tls.emplace(tcp, *tls_);
        set_doing(&socket, doing::waiting_for_head);
        tcp.expires_after(limits_.read_timeout);
        auto [handshake_error] = co_await tls->async_handshake(asio::ssl::stream_base::server, as_result);
        if (handshake_error) stopping_connection = true;
    }
    server_stream stream(tcp, tls ? &*tls : nullptr);
    while (!stopping_ && !stopping_connection) {
        std::optional<request> req;
        if (!co_await read_request(stream, buffer, socket, req)) break;
        exchange x(stream, *req, local_port, stopping_, limits_.read_timeout,
                   [this, &socket] { set_doing(&socket, doing::taken_over); }, [this, &socket] { answered(&socket); });
        bool failed = false;
        try {
            co_await handler_(x);
        } catch (...) {
            failed = true;  // a handler that throws ends its connection; the server goes on
        }
        co_await x.flush();  // what a stream wrote before it ended or dropped its connection
        if (failed || x.closes() || !req->keep_alive()) break;
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
    {
        const std::lock_guard lock(listeners_mutex_);
        for (const auto& entry : listeners_) {
            asio::post(entry.second->on, [l = entry.second] {
                boost::system::error_code ec;
                l->acceptor.close(ec);
            });
        }
    }
    const std::lock_guard lock(sockets_mutex_);
    for (auto& [socket, c] : sockets_) close_on_its_strand(socket, c.on);
}

// On the connection's own strand, and only if it is still open: a connection that ended
// meanwhile has left the registry (on that strand) and freed its socket.
void http_server::close_on_its_strand(tcp::socket* socket, const strand& on) {
    asio::post(on, [this, socket] {
        const std::lock_guard still(sockets_mutex_);
        if (!sockets_.contains(socket)) return;
        boost::system::error_code ec;
        socket->shutdown(tcp::socket::shutdown_both, ec);
        socket->close(ec);
    });
}

void http_server::stop() {
    {
        const std::lock_guard lock(listeners_mutex_);  // no listener opens after this
        if (stopping_.exchange(true)) return;
    }
    keep_running_.clear();  // each thread's run() returns once its connections have ended
    if (threads_.empty()) {  // never started: run the loops to their end here
        close_all();
        for (const auto& io : contexts_) io->run_for(stop_grace);
        return;
    }
    close_all();
    const auto deadline = std::chrono::steady_clock::now() + stop_grace;
    while ((connections_ > 0 || accept_loops_ > 0) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        close_all();  // connections accepted meanwhile
    }
    for (const auto& io : contexts_) io->stop();
    for (auto& t : threads_) t.join();
    threads_.clear();
}

}  // namespace ngfail::opensandbox::testing::detail
