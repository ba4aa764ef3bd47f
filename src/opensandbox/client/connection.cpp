#include "connection.hpp"

#include <algorithm>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/write.hpp>

#include <openssl/ssl.h>

namespace ngfail::opensandbox::detail {
namespace {

using boost::system::error_code;
auto with_code(error_code& ec) { return asio::redirect_error(asio::use_awaitable, ec); }

// A name is looked up within the deadline; an address needs no lookup.
awaitable<std::vector<tcp::endpoint>> endpoints_of(const origin& to, clock::time_point deadline) {
    using namespace asio::experimental::awaitable_operators;
    error_code ec;
    const auto address = asio::ip::make_address(to.host, ec);
    if (!ec) co_return std::vector<tcp::endpoint>{{address, to.port}};
    const auto executor = co_await asio::this_coro::executor;
    tcp::resolver resolver(executor);
    asio::steady_timer timer(executor, deadline);
    auto found = co_await (resolver.async_resolve(to.host, std::to_string(to.port), with_code(ec)) ||
                           timer.async_wait(asio::use_awaitable));
    if (found.index() == 1) ec = beast::error::timeout;
    if (ec) throw connection_error(ec, phase::connect);
    std::vector<tcp::endpoint> endpoints;
    for (const auto& entry : std::get<0>(found)) endpoints.push_back(entry.endpoint());
    co_return endpoints;
}

}  // namespace

connection::connection(const asio::any_io_executor& executor, asio::ssl::context* tls) {
    if (tls) {
        tls_.emplace(executor, *tls);
    } else {
        plain_.emplace(executor);
    }
    deadline_ = deadline_watch::shared().track(plain().socket());
}

connection::~connection() { deadline_watch::shared().forget(*deadline_); }

awaitable<void> connection::open(const origin& to, clock::time_point deadline) {
    host_field_ = host_field(to);
    const std::vector<tcp::endpoint> endpoints = co_await endpoints_of(to, deadline);
    error_code ec;
    plain().expires_at(deadline);
    co_await plain().async_connect(endpoints, with_code(ec));
    plain().expires_never();
    if (ec) fail(ec, phase::connect);
    plain().socket().set_option(tcp::no_delay(true), ec);
    if (!tls_) co_return;
    error_code not_an_address;
    (void)asio::ip::make_address(to.host, not_an_address);
    // SNI names a host, never an address (RFC 6066 §3).
    if (not_an_address && !SSL_set_tlsext_host_name(tls_->native_handle(), to.host.c_str())) {
        fail(error_code(static_cast<int>(::ERR_get_error()), asio::error::get_ssl_category()), phase::connect);
    }
    if (SSL_get_verify_mode(tls_->native_handle()) != SSL_VERIFY_NONE) {
        tls_->set_verify_callback(asio::ssl::host_name_verification(to.host));
    }
    plain().expires_at(deadline);
    co_await tls_->async_handshake(asio::ssl::stream_base::client, with_code(ec));
    plain().expires_never();
    if (ec) fail(ec, phase::connect);
}

template <class Parser>
awaitable<void> connection::read_final_header(std::optional<Parser>& slot, clock::time_point deadline,
                                              boost::optional<std::uint64_t> body_limit) {
    for (int interim = 0;; ++interim) {
        if (interim > max_interim_replies) fail(make_error_code(errc::malformed_response), phase::receive);
        Parser& parser = slot.emplace();
        parser.header_limit(max_header_bytes);
        parser.body_limit(body_limit);
        error_code ec;
        deadline_bound bound(*this, deadline);
        auto operation = on_stream([&](auto& s) {
            return beast_http::async_read_header(s, buffer_, parser, with_code(ec));
        });
        co_await std::move(operation);
        bound.end(ec);
        if (parser.got_some()) answered_ = true;
        if (ec) fail(ec, phase::receive);
        if (!is_interim(parser.get().result_int())) co_return;
    }
}
template awaitable<void> connection::read_final_header(std::optional<stream_parser>&, clock::time_point,
                                                       boost::optional<std::uint64_t>);

awaitable<void> connection::read_more(stream_parser& parser, clock::time_point deadline) {
    constexpr std::size_t read_size = 16 << 10;
    error_code ec;
    deadline_bound bound(*this, deadline);
    const auto space = buffer_.prepare(read_size);
    auto operation = on_stream([&](auto& s) { return s.async_read_some(space, with_code(ec)); });
    buffer_.commit(co_await std::move(operation));
    bound.end(ec);
    if (ec == asio::error::eof) parser.put_eof(ec);  // ends a message read to its close, or fails it
    if (ec) fail(ec, phase::receive);
}

awaitable<void> connection::send(request& r, clock::time_point deadline) {
    r.set(beast_http::field::host, host_field_);
    r.prepare_payload();
    reusable_ = false;
    answered_ = false;
    error_code ec;
    deadline_bound bound(*this, deadline);
    const std::array<asio::const_buffer, 3> message{asio::buffer(r.head()), asio::buffer("\r\n", 2),
                                                    asio::buffer(r.body())};
    auto operation = on_stream([&](auto& s) { return asio::async_write(s, message, with_code(ec)); });
    co_await std::move(operation);
    bound.end(ec);
    if (ec) fail(ec, phase::send);
}

awaitable<void> connection::receive_stream(clock::time_point deadline, stream_limits limits,
                                           const head_callback& on_head, const bytes_callback& on_bytes) {
    std::optional<stream_parser> slot;
    co_await read_final_header(slot, deadline, boost::none);  // the reader bounds what it keeps
    stream_parser& parser = *slot;
    on_head(parser.get().base());
    std::array<char, 8192> chunk;  // the parser writes what it gives; not zeroed on every stream
    while (!parser.is_done()) {
        // The stream's timer cannot end a stream that always has data ready: checked here.
        if (clock::now() >= limits.end) fail(beast::error::timeout, phase::receive);
        parser.get().body().data = chunk.data();
        parser.get().body().size = chunk.size();
        boost::system::error_code ec;
        const std::size_t used = buffer_.size() == 0 ? 0 : parser.put(buffer_.data(), ec);
        buffer_.consume(used);
        if (ec == beast_http::error::need_buffer || ec == beast_http::error::need_more) ec = {};
        const std::size_t got = chunk.size() - parser.get().body().size;
        // What arrived before a failure is still evidence (an `init` names the execution).
        if (got > 0) on_bytes(std::string_view(chunk.data(), got));
        if (ec) fail(ec, phase::receive);
        if (used == 0 && got == 0) co_await read_more(parser, limits.next_read_deadline());
    }
    reusable_ = parser.get().keep_alive();
}

awaitable<string_response> connection::receive(std::size_t max_body, clock::time_point deadline) {
    std::optional<beast_http::response_parser<beast_http::string_body>> slot;
    co_await read_final_header(slot, deadline, std::uint64_t{max_body});
    auto& parser = *slot;
    error_code ec;
    deadline_bound bound(*this, deadline);
    auto operation = on_stream([&](auto& s) { return beast_http::async_read(s, buffer_, parser, with_code(ec)); });
    co_await std::move(operation);
    bound.end(ec);
    if (ec) fail(ec, phase::receive);
    reusable_ = parser.get().keep_alive();
    co_return parser.release();
}

bool connection::still_open() noexcept {
    if (buffer_.size() != 0) return false;  // bytes nobody asked for
    auto& socket = plain().socket();
    error_code ec;
    if (!socket.non_blocking()) socket.non_blocking(true, ec);  // once: it is a system call
    if (ec) return false;
    char byte = 0;
    (void)socket.receive(asio::buffer(&byte, 1), tcp::socket::message_peek, ec);
    return ec == asio::error::would_block;  // neither data nor an end of stream waiting
}

std::string host_field(const origin& to) {
    const bool v6 = to.host.find(':') != std::string::npos;
    return (v6 ? "[" + to.host + "]" : to.host) + ':' + std::to_string(to.port);
}

void connection::shut() noexcept {
    error_code ignored;
    plain().socket().shutdown(tcp::socket::shutdown_both, ignored);
    plain().socket().close(ignored);
}

void connection::fail(error_code ec, phase at) {
    const auto& http_errors = beast_http::make_error_code(beast_http::error::end_of_stream).category();
    const bool cut_short = ec == beast_http::error::end_of_stream || ec == beast_http::error::partial_message;
    if (ec == asio::error::operation_aborted) {
        ec = make_error_code(errc::cancelled);
    } else if (ec.category() == http_errors && !cut_short) {
        ec = make_error_code(errc::malformed_response);
    }
    throw connection_error(ec, at);
}

void connection_pool::sweep(clock::time_point now, std::size_t keep, closing& out) {
    const auto oldest_allowed = now - max_idle_time_;
    for (auto it = idle_.begin(); it != idle_.end();) {
        auto& kept = it->second;  // oldest first
        const auto stale_end = std::find_if(kept.begin(), kept.end(),
                                            [&](const idle_connection& k) { return k.since >= oldest_allowed; });
        out.reserve(out.size() + static_cast<std::size_t>(stale_end - kept.begin()));  // moves nothing if it throws
        for (auto k = kept.begin(); k != stale_end; ++k) out.push_back(std::move(k->c));
        kept_ -= static_cast<std::size_t>(stale_end - kept.begin());
        kept.erase(kept.begin(), stale_end);
        // An origin's emptied place is kept for its next connection (an allocation and a
        // tree insertion each exec fewer), but only a few: every take and give-back walks
        // them all, and a client that runs in many sandboxes empties a place per sandbox.
        constexpr std::size_t spare_places = 8;
        it = kept.empty() && idle_.size() > kept_ + spare_places ? idle_.erase(it) : std::next(it);
    }
    while (kept_ > keep) {
        auto longest = idle_.end();
        for (auto it = idle_.begin(); it != idle_.end(); ++it) {
            if (!it->second.empty() &&
                (longest == idle_.end() || it->second.front().since < longest->second.front().since)) {
                longest = it;
            }
        }
        out.push_back(std::move(longest->second.front().c));
        longest->second.erase(longest->second.begin());
        --kept_;
    }
}

std::unique_ptr<connection> connection_pool::take(const origin& to, const asio::execution_context& on) {
    closing stale;  // closed after the lock is released
    const std::lock_guard lock(mutex_);
    sweep(clock::now(), max_kept_, stale);
    const auto found = idle_.find(key(&on, to));
    if (found == idle_.end()) return nullptr;
    auto& kept = found->second;
    std::unique_ptr<connection> usable;
    while (!kept.empty() && !usable) {
        idle_connection last = std::move(kept.back());
        kept.pop_back();
        --kept_;
        if (last.c->still_open()) {
            usable = std::move(last.c);
        } else {
            stale.push_back(std::move(last.c));
        }
    }
    return usable;
}

void connection_pool::give_back(const origin& to, std::unique_ptr<connection> c) noexcept {
    closing stale;
    try {
        const std::lock_guard lock(mutex_);
        if (closed_ || max_idle_ == 0 || max_kept_ == 0) return;
        sweep(clock::now(), max_kept_ - 1, stale);
        auto& kept = idle_[key(&c->context(), to)];
        if (kept.size() >= max_idle_) {
            stale.push_back(std::move(kept.front().c));
            kept.erase(kept.begin());
            --kept_;
        }
        kept.push_back({std::move(c), clock::now()});
        ++kept_;
    } catch (...) {  // no room to keep it (out of memory): it is closed, as one past the bounds is
    }
}

void connection_pool::close() {
    std::map<key, std::vector<idle_connection>> closing;
    {
        const std::lock_guard lock(mutex_);
        closed_ = true;
        closing.swap(idle_);
        kept_ = 0;
    }
}

std::size_t connection_pool::idle() const {
    const std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const auto& [to, kept] : idle_) n += kept.size();
    return n;
}

std::unique_ptr<asio::ssl::context> make_tls_context(const tls_options& options) {
    auto context = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
    context->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                         asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                         asio::ssl::context::no_tlsv1_1);
    if (options.ca_file.empty()) {
        context->set_default_verify_paths();
    } else {
        context->load_verify_file(options.ca_file);
    }
    context->set_verify_mode(options.verify_peer ? asio::ssl::verify_peer : asio::ssl::verify_none);
    return context;
}

}  // namespace ngfail::opensandbox::detail
