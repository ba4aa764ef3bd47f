// The client's connections: HTTP/1.1 over TCP or TLS, every step bounded by a deadline,
// interim replies skipped, errors that say in which phase they happened; and the pool that
// keeps them alive between calls.
#pragma once

#include <ngfail/opensandbox/client.hpp>

#include "deadline_watch.hpp"
#include "reply.hpp"
#include "request.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ngfail::opensandbox::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace beast_http = beast::http;
using tcp = asio::ip::tcp;
using clock = std::chrono::steady_clock;
using string_response = beast_http::response<beast_http::string_body>;
template <class T>
using awaitable = asio::awaitable<T>;

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

// How long a streamed body may go quiet, and when it must have ended.
struct stream_limits {
    std::chrono::milliseconds idle;
    clock::time_point end = clock::time_point::max();

    [[nodiscard]] clock::time_point next_read_deadline() const noexcept { return std::min(deadline_after(idle), end); }
};

// The Host field for `to`: the port always, an IPv6 address bracketed.
[[nodiscard]] std::string host_field(const origin& to);

// One kept-alive connection to one origin, on one I/O context. Used by one call at a time.
class connection {
    using stream_parser = beast_http::response_parser<beast_http::buffer_body>;

public:
    // `tls` is the client's TLS context when the origin is https, else null.
    connection(const asio::any_io_executor& executor, asio::ssl::context* tls);
    ~connection();
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    // Resolves, connects and (for https) shakes hands with peer verification and SNI.
    // Failures are connection_errors in phase::connect: nothing was sent.
    awaitable<void> open(const origin& to, clock::time_point deadline);

    // Sends the request, its Host field and the payload's length set: one write.
    awaitable<void> send(request& r, clock::time_point deadline);

    // The whole reply; interim 1xx replies (100 Continue, 103 Early Hints) are skipped, as
    // HTTP requires, and a peer that sends nothing else is malformed.
    awaitable<string_response> receive(std::size_t max_body, clock::time_point deadline);

    // A streamed reply: `on_head` sees the status and headers (read by `deadline`), then
    // `on_bytes` each piece of the body as it arrives, within `limits`. What is buffered is
    // parsed at once; the socket is read only when the parser needs more (one wake-up per
    // read, as a blocking reader has, instead of one per parser step).
    using head_callback = std::function<void(const beast_http::response_header<>&)>;
    using bytes_callback = std::function<void(std::string_view)>;
    awaitable<void> receive_stream(clock::time_point deadline, stream_limits limits, const head_callback& on_head,
                                   const bytes_callback& on_bytes);

    // The last reply was read whole and the server keeps the connection open.
    [[nodiscard]] bool reusable() const noexcept { return reusable_; }
    // The server sent at least one byte of a reply to the last request sent.
    [[nodiscard]] bool answered() const noexcept { return answered_; }

    // An idle connection the server has not closed and sent nothing on: safe to send on.
    [[nodiscard]] bool still_open() noexcept;

    // The I/O context whose reactor the connection's socket is registered with: only a call
    // running there can use it.
    [[nodiscard]] const asio::execution_context& context() noexcept {
        return asio::query(plain().get_executor(), asio::execution::context);
    }

    // Hands the connection's stream (TLS or plain TCP) to `op`, for a protocol that takes the
    // connection over (a WebSocket): it is never reused for HTTP after, and only the new
    // protocol's own deadlines apply to it.
    template <class Op>
    void take_over(Op&& op) {
        reusable_ = false;
        plain().expires_never();
        if (tls_) {
            op(*tls_);
        } else {
            op(plain());
        }
    }
    // Ends the connection at once: what is pending on it fails.
    void shut() noexcept;

private:
    // `op` applied to what an HTTP exchange reads and writes: the TLS stream, or the plain
    // connection's socket itself. Not the socket's `tcp_stream`: its deadlines are not used
    // (the deadline_watch bounds every exchange), and its operations wrap every buffer
    // sequence for a rate policy, a third of the client's own instructions per exec. The
    // awaitable is awaited as a named value (g++ 12 mishandles a lambda call inside a co_await).
    template <class Op>
    auto on_stream(Op&& op) {
        if (tls_) return op(*tls_);
        return op(plain().socket());
    }

    beast::tcp_stream& plain() noexcept { return tls_ ? beast::get_lowest_layer(*tls_) : *plain_; }

    // Bounds the operations on the connection from its making to `end` (or its end) by a
    // deadline, through the process's deadline_watch: sending and receiving, which happen
    // on every call. Connecting, once per connection, uses Beast's own timer.
    class deadline_bound {
    public:
        deadline_bound(connection& c, clock::time_point deadline) : entry_(c.deadline_) {
            deadline_watch::shared().start(entry_, deadline);
        }
        ~deadline_bound() {
            if (!ended_) (void)deadline_watch::shared().finish(*entry_);
        }
        deadline_bound(const deadline_bound&) = delete;
        deadline_bound& operator=(const deadline_bound&) = delete;
        // Ends the bound: `ec` becomes a timeout when the deadline passed first, whatever the
        // operation's own outcome (its socket is being closed).
        void end(boost::system::error_code& ec) noexcept {
            ended_ = true;
            if (deadline_watch::shared().finish(*entry_)) ec = beast::error::timeout;
        }

    private:
        const std::shared_ptr<deadline_watch::entry>& entry_;
        bool ended_ = false;
    };

    // Reads headers until a final (non-1xx) one; the parser is re-made for each interim.
    // Defined for `stream_parser` and the string reply parser.
    template <class Parser>
    awaitable<void> read_final_header(std::optional<Parser>& slot, clock::time_point deadline,
                                      boost::optional<std::uint64_t> body_limit);
    // Reads what the socket has into the buffer; an end of stream ends the parser's message
    // (or fails it as cut short).
    awaitable<void> read_more(stream_parser& parser, clock::time_point deadline);

    // A reply Beast cannot parse is malformed, not a dropped peer; a cancelled operation is
    // errc::cancelled.
    [[noreturn]] static void fail(boost::system::error_code ec, phase at);

    std::optional<beast::tcp_stream> plain_;
    std::optional<beast::ssl_stream<beast::tcp_stream>> tls_;
    std::shared_ptr<deadline_watch::entry> deadline_;
    beast::flat_buffer buffer_;
    std::string host_field_;
    bool reusable_ = false;
    bool answered_ = false;
};

// Idle connections kept for reuse: at most `max_idle` per origin and I/O context and
// `max_kept` in all (the longest idle goes first), none older than `max_idle_time` whatever
// its origin (each sandbox's direct endpoint is an origin of its own, used perhaps once).
// Thread-safe.
class connection_pool {
public:
    connection_pool(std::size_t max_idle, std::size_t max_kept, std::chrono::milliseconds max_idle_time)
        : max_idle_(max_idle), max_kept_(max_kept), max_idle_time_(max_idle_time) {}

    // An idle connection to `to` on the I/O context `on` that is still open, or nothing.
    [[nodiscard]] std::unique_ptr<connection> take(const origin& to, const asio::execution_context& on);

    // Keeps `c` for the next call to `to` on its context when there is room; closes it
    // otherwise, out of memory too (a lease gives its connection back as it is destroyed).
    void give_back(const origin& to, std::unique_ptr<connection> c) noexcept;

    [[nodiscard]] std::size_t idle() const;

    // Closes every kept connection; from now on nothing given back is kept.
    void close();

private:
    struct idle_connection {
        std::unique_ptr<connection> c;
        clock::time_point since;
    };
    using closing = std::vector<std::unique_ptr<connection>>;
    using key = std::pair<const asio::execution_context*, origin>;

    // Under the lock: moves every connection idle too long, of any origin, into `out`
    // (closed once the lock is released), and the longest idle while more than `keep` are kept.
    // Out of memory, it stops with every connection either kept or in `out`.
    void sweep(clock::time_point now, std::size_t keep, closing& out);

    std::size_t max_idle_;
    std::size_t max_kept_;
    std::chrono::milliseconds max_idle_time_;
    mutable std::mutex mutex_;
    std::map<key, std::vector<idle_connection>> idle_;
    std::size_t kept_ = 0;
    bool closed_ = false;
};

// A connection borrowed for one exchange; returned to its pool when the exchange left it
// reusable, closed otherwise.
class lease {
public:
    // `reused`: the connection was kept alive from an earlier exchange.
    lease(connection_pool& pool, origin to, std::unique_ptr<connection> c, bool reused)
        : pool_(&pool), to_(std::move(to)), c_(std::move(c)), reused_(reused) {}
    lease(lease&&) noexcept = default;
    lease& operator=(lease&&) noexcept = default;
    ~lease() {
        if (c_ && c_->reusable()) pool_->give_back(to_, std::move(c_));
    }

    connection* operator->() const noexcept { return c_.get(); }
    // The connection itself, kept by the caller instead of the pool (a WebSocket's).
    [[nodiscard]] std::unique_ptr<connection> release() noexcept { return std::move(c_); }
    [[nodiscard]] bool reused() const noexcept { return reused_; }

private:
    connection_pool* pool_;
    origin to_;
    std::unique_ptr<connection> c_;
    bool reused_;
};

// The TLS settings a client's https connections share: the system CA store (or the given
// file) and peer verification unless turned off.
[[nodiscard]] std::unique_ptr<asio::ssl::context> make_tls_context(const tls_options& options);

}  // namespace ngfail::opensandbox::detail
