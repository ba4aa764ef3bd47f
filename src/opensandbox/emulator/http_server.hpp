// The emulator's HTTP/1.1 server: listeners and connections on a few threads, each
// connection a coroutine that lives exactly as long as the connection. Knows nothing of
// OpenSandbox; the router (routes.hpp) decides what each request means.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace ngfail::opensandbox::testing::detail {

namespace http = boost::beast::http;
using request = http::request<http::string_body>;
using response = http::response<http::string_body>;
using tcp = boost::asio::ip::tcp;

// The bytes of one connection: plain TCP, or TLS over it. Every read and write runs under
// the TCP stream's deadline (Beast's tcp_stream), which the server arms before each.
class server_stream {
public:
    using tls_stream = boost::asio::ssl::stream<boost::beast::tcp_stream&>;
    explicit server_stream(boost::beast::tcp_stream& tcp, tls_stream* tls = nullptr) : tcp_(tcp), tls_(tls) {}

    // `op` applied to whichever stream the connection is.
    template <class Op>
    auto with(Op&& op) {
        if (tls_) return op(*tls_);
        return op(tcp_);
    }

    // The next reads and writes fail once `how_long` has passed (the connection then closes).
    void expires_after(std::chrono::steady_clock::duration how_long) { tcp_.expires_after(how_long); }
    void expires_never() { tcp_.expires_never(); }

    // True when the peer has closed or reset its side, seen without reading: what Go's
    // server (execd's) notices at once through its background read, and ends the request
    // for. A TLS peer's close_notify is data here, so a TLS peer's going is noticed at the
    // next write instead.
    [[nodiscard]] bool peer_left() noexcept;

private:
    boost::beast::tcp_stream& tcp_;
    tls_stream* tls_;
};

// What keeps one stranger from holding the server: deadlines and a cap on connections.
// At the cap a newcomer takes the place of a connection that waits on its peer, oldest first
// in this order: one waiting for a request's head, one whose body comes too slowly, an open
// WebSocket (a terminal); only when every connection is serving a request is it refused.
struct server_limits {
    // A request head, a TLS handshake, one write, and each read of a body (a body must keep
    // coming: every read brings bytes within this).
    std::chrono::milliseconds read_timeout{30000};
    std::chrono::milliseconds body_timeout{300000};  // a whole body
    std::size_t max_connections = 1024;
};

// What the server holds of one connection's unparsed bytes: a head, or the framing of a
// chunked body (chunk lines with their extensions, trailers). Past it the request is refused.
inline constexpr std::size_t max_read_buffer = 1 << 20;

// One request and the ways a handler may answer it: a whole reply, or a chunked stream.
class exchange {
public:
    exchange(server_stream& stream, const request& req, unsigned short local_port, const std::atomic<bool>& stopping,
             std::chrono::milliseconds write_timeout, std::function<void()> on_take_over = {},
             std::function<void()> on_answered = {})
        : stream_(stream),
          req_(req),
          local_port_(local_port),
          stopping_(stopping),
          write_timeout_(write_timeout),
          on_take_over_(std::move(on_take_over)),
          on_answered_(std::move(on_answered)) {}

    [[nodiscard]] const request& req() const noexcept { return req_; }
    // The listener the request came in on (the lifecycle API's, or a direct endpoint's).
    [[nodiscard]] unsigned short local_port() const noexcept { return local_port_; }

    boost::asio::awaitable<void> reply(response res);

    // A streamed reply: the head, then pieces of the body; false once the peer is gone.
    // A head with a Content-Length is followed by exactly that many bytes, unchunked (the
    // handler must write them all). Any other is chunked to HTTP/1.1 peers; to HTTP/1.0 peers
    // (which know no chunks) the body runs to the connection's close, as RFC 9112 §6.1 and
    // §6.3 require. What a stream writes
    // goes out in one write when it next waits, when it ends, when its handler returns or
    // past 64 KiB: events made in one burst share a system call (an exec's head and its
    // five events used to cost six), and the head goes with the first event, as execd's.
    boost::asio::awaitable<bool> begin_stream(http::response<http::empty_body> head);
    boost::asio::awaitable<bool> chunk(std::string_view text);
    boost::asio::awaitable<void> end_stream();
    // Sends what the stream has written so far; false once the peer is gone.
    boost::asio::awaitable<bool> flush();

    // Sends what the stream has written, then waits, or less if the server stops; false
    // when it stopped or the peer is gone.
    boost::asio::awaitable<bool> wait(std::chrono::milliseconds how_long);

    // The connection itself, for a handler that takes it over (a WebSocket), and whether the
    // server is stopping (such a handler must then end).
    [[nodiscard]] server_stream& stream() noexcept { return stream_; }
    // Says that the handler has taken the connection over for a long-lived protocol that
    // mostly waits on its peer (a WebSocket): at the connection cap it may then be closed to
    // make room for a newcomer.
    void take_over() {
        taken_over_ = true;
        if (on_take_over_) on_take_over_();
    }
    [[nodiscard]] bool taken_over() const noexcept { return taken_over_; }
    [[nodiscard]] bool stopping() const noexcept { return stopping_; }

    // The connection closes after this exchange instead of staying open for the next.
    void close_connection() noexcept { close_ = true; }

    // Cuts this reply as a proxy cuts a long one: its body ends after `bytes` (chunk lines
    // counted), or halfway through the first write after `after` (a reply that would end
    // sooner waits for it), whichever comes first; then
    // the connection closes, and every later write of the exchange fails as if the peer went.
    void cut(std::optional<std::size_t> bytes, std::optional<std::chrono::milliseconds> after) noexcept;
    // Loses this reply on the way: the handler runs to its end as if it were sent (a command
    // runs on), nothing of it is, and the connection closes after it.
    void lose_reply() noexcept { lost_ = close_ = true; }
    [[nodiscard]] bool closes() const noexcept { return close_; }
    // The status of the reply or stream begun (0: none yet).
    [[nodiscard]] int status() const noexcept { return status_; }
    // Whether the work the stream reported on succeeded, as its last event said (the
    // emulator's telemetry records it as execd's execution metric does); none when no event
    // said.
    void ended_work(bool succeeded) noexcept { work_succeeded_ = succeeded; }
    [[nodiscard]] std::optional<bool> work_succeeded() const noexcept { return work_succeeded_; }
    // The stream's last event (a run's `execution_complete` or `error`) is not sent, as a
    // no_terminal_event fault asks; the stream still ends cleanly.
    void withhold_last_event() noexcept { last_event_withheld_ = true; }
    [[nodiscard]] bool last_event_withheld() const noexcept { return last_event_withheld_; }

private:
    // Writes the pieces in turn under the write deadline; false (and the connection closes)
    // on error. Every reply goes out through this one write: Beast's serializers run
    // synchronously into text, so the asynchronous write exists once per stream type.
    boost::asio::awaitable<bool> write(std::string_view a, std::string_view b = {}, std::string_view c = {});

    server_stream& stream_;
    const request& req_;
    unsigned short local_port_;
    const std::atomic<bool>& stopping_;
    std::chrono::milliseconds write_timeout_;
    std::function<void()> on_take_over_;
    // Called once the whole answer is written (a reply, a stream's end), though the handler
    // may still be finishing: from then the connection is as good as idle.
    std::function<void()> on_answered_;
    static constexpr std::size_t max_pending = 64 * 1024;

    // A reply that would end before its cut's time waits for it (a short reply is cut too).
    boost::asio::awaitable<void> wait_for_cut();
    // How many of `total` bytes about to be written go out before the cut (all: no cut yet).
    [[nodiscard]] std::size_t before_cut(std::size_t total) const noexcept;

    bool close_ = false;
    int status_ = 0;
    std::optional<bool> work_succeeded_;
    bool last_event_withheld_ = false;
    bool taken_over_ = false;
    bool streaming_ = false;
    std::size_t written_ = 0;  // bytes of this reply sent, its head included
    std::size_t body_from_ = 0;  // where its body begins
    std::optional<std::size_t> cut_bytes_{};
    std::optional<std::chrono::steady_clock::time_point> cut_at_{};
    bool cut_done_ = false;
    bool lost_ = false;
    bool chunked_ = true;
    std::string pending_;
};

// True when no header value holds CR, LF or NUL (RFC 9110 §5.5): such a value could end
// the header early and add lines of a stranger's choosing.
[[nodiscard]] bool safe_header_values(const http::fields& fields) noexcept;

using handler = std::function<boost::asio::awaitable<void>(exchange&)>;

class http_server {
public:
    http_server(handler h, unsigned threads, server_limits limits = {});
    ~http_server();
    http_server(const http_server&) = delete;
    http_server& operator=(const http_server&) = delete;

    // Listens on `host:port` (0: an ephemeral port) and returns the port bound. May be
    // called while the server runs (a sandbox's own address opens when it is first asked for).
    unsigned short listen(const std::string& host, unsigned short port);

    // Stops listening on `port` at once: from now on a connection to it is refused, as one to
    // an address nobody listens on, and the kept-alive connections it accepted that wait for
    // a request close (an exchange under way finishes). Safe from any thread.
    void close_listener(unsigned short port);

    // Serves every listener over TLS with this certificate chain and key (PEM files).
    void use_tls(const std::string& certificate_file, const std::string& key_file);

    // Starts the threads; call after the listeners are open.
    void start();

    // Closes every listener and connection and joins the threads. Idempotent.
    void stop();

    [[nodiscard]] std::size_t open_connections() const noexcept { return connections_.load(); }
    [[nodiscard]] std::size_t thread_count() const noexcept { return threads_.size(); }

private:
    using strand = boost::asio::strand<boost::asio::io_context::executor_type>;

    struct listener {
        strand on;
        tcp::acceptor acceptor;
        std::atomic<bool> open{true};
    };

    // What a connection is doing, in the order connections are shed to make room.
    enum class doing { waiting_for_head, reading_body, taken_over, serving };
    // A connection as the registry knows it: where it runs, what it does and since when.
    struct connection {
        strand on;
        unsigned short local_port = 0;
        doing what = doing::waiting_for_head;
        std::chrono::steady_clock::time_point since{};
        bool shed = false;  // closing to make room: never chosen again (its own thread may not have started it yet)
    };

    boost::asio::awaitable<void> accept_loop(std::shared_ptr<listener> l);
    // Serves a connection that accept_loop has registered (as idle: it has sent nothing yet).
    boost::asio::awaitable<void> serve(std::unique_ptr<boost::beast::tcp_stream> stream, unsigned short local_port);
    boost::asio::awaitable<bool> read_request(server_stream& stream, boost::beast::flat_buffer& buffer,
                                              tcp::socket& socket, std::optional<request>& into);
    void set_doing(tcp::socket* socket, doing what);
    // Its answer is out: a connection serving becomes one waiting for its next head (one taken
    // over stays so), which closing its address shuts down before anything else is said.
    void answered(tcp::socket* socket);
    // Makes room for one more connection: closes the one that has waited longest on its peer
    // (server_limits says in which order); false when every connection is serving a request.
    bool shed_one();
    void close_on_its_strand(tcp::socket* socket, const strand& on);
    void close_all();

    handler handler_;
    server_limits limits_;
    std::size_t connection_cap_;
    std::unique_ptr<boost::asio::ssl::context> tls_;
    unsigned thread_count_;
    // One io_context per thread, each connection on one of them in turn: a connection's
    // handlers then never hop to the other thread (on one shared io_context, each request
    // woke the idle thread to run a part of it).
    std::vector<std::unique_ptr<boost::asio::io_context>> contexts_;
    std::vector<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> keep_running_;
    std::atomic<std::size_t> next_context_{0};
    std::mutex listeners_mutex_;
    std::map<unsigned short, std::shared_ptr<listener>> listeners_;  // by port
    std::vector<std::thread> threads_;
    std::atomic<bool> stopping_{false};
    std::atomic<std::size_t> connections_{0};
    std::atomic<std::size_t> accept_loops_{0};
    std::mutex sockets_mutex_;
    // Every open connection with the strand it runs on: stop() closes each on its strand.
    std::map<tcp::socket*, connection> sockets_;
};

}  // namespace ngfail::opensandbox::testing::detail
