#include <ngfail/opensandbox/embedded_server.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <sys/socket.h>
#include <vector>

namespace ngfail::opensandbox {
namespace {

namespace beast_http = boost::beast::http;
namespace json = boost::json;
using tcp = boost::asio::ip::tcp;
using request = beast_http::request<beast_http::string_body>;
using response = beast_http::response<beast_http::string_body>;

constexpr std::string_view execd_port = "44772";
constexpr std::size_t max_request_body = 1 << 20;

struct sandbox {
    std::string image;
    std::string state = "Running";
    std::string reason = "RUNNING";
    std::string expires_at = "2030-01-01T00:00:00Z";
    json::object metadata;
    json::array entrypoint;
};

struct execution {
    std::optional<int> exit_code{};
    std::string error{};
    std::string output{};
};

// A parsed route: the operation name (as faults name it) and its path parameters.
struct route {
    std::string operation;
    std::string sandbox_id;
    std::string extra;  // the endpoint port or the execution id
};

std::vector<std::string_view> split_path(std::string_view target) {
    target = target.substr(0, target.find('?'));
    std::vector<std::string_view> parts;
    while (!target.empty()) {
        if (target.front() == '/') {
            target.remove_prefix(1);
            continue;
        }
        const auto slash = target.find('/');
        parts.push_back(target.substr(0, slash));
        target = slash == std::string_view::npos ? std::string_view{} : target.substr(slash);
    }
    return parts;
}

// The routes of the lifecycle API and of execd behind the server proxy.
std::optional<route> route_of(beast_http::verb method, std::string_view target) {
    const auto p = split_path(target);
    const auto is = [&](std::initializer_list<std::string_view> shape) {
        if (p.size() != shape.size()) return false;
        std::size_t i = 0;
        for (const std::string_view s : shape) {
            if (s != "*" && s != p[i]) return false;
            ++i;
        }
        return true;
    };
    using v = beast_http::verb;
    if (method == v::post && is({"v1", "sandboxes"})) return route{"create", "", ""};
    if (method == v::get && is({"v1", "sandboxes", "*"})) return route{"get", std::string(p[2]), ""};
    if (method == v::delete_ && is({"v1", "sandboxes", "*"})) return route{"kill", std::string(p[2]), ""};
    if (method == v::post && is({"v1", "sandboxes", "*", "renew-expiration"})) return route{"renew", std::string(p[2]), ""};
    if (method == v::get && is({"v1", "sandboxes", "*", "endpoints", "*"})) {
        return route{"endpoint", std::string(p[2]), std::string(p[4])};
    }
    if (method == v::post && is({"v1", "sandboxes", "*", "proxy", execd_port, "command"})) {
        return route{"exec", std::string(p[2]), ""};
    }
    if (method == v::get && is({"v1", "sandboxes", "*", "proxy", execd_port, "command", "status", "*"})) {
        return route{"exec_status", std::string(p[2]), std::string(p[7])};
    }
    if (method == v::get && is({"health"})) return route{"health", "", ""};
    return std::nullopt;
}

bool is_lifecycle(const route& r) { return r.operation != "exec" && r.operation != "exec_status" && r.operation != "health"; }

std::optional<int> to_int(std::string_view text) {
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

std::string frame(const json::object& event) { return json::serialize(event) + "\n\n"; }

}  // namespace

// ---- faults ---------------------------------------------------------------------------------

fault fault::http_error(std::string operation, int status, std::string code, std::string message,
                        std::optional<int> retry_after_s) {
    return {.operation = std::move(operation), .what = action::http_error, .status = status, .code = std::move(code),
            .message = std::move(message), .retry_after_s = retry_after_s};
}
fault fault::exec(action what) { return {.operation = "exec", .what = what}; }
fault fault::stall(std::string operation, std::chrono::milliseconds how_long) {
    return {.operation = std::move(operation), .what = action::stall, .stall_for = how_long};
}
fault fault::malformed(std::string operation) { return {.operation = std::move(operation), .what = action::malformed_json}; }
fault fault::sandbox_status(std::string operation, std::string state, std::string reason) {
    return {.operation = std::move(operation), .what = action::sandbox_status, .state = std::move(state),
            .reason = std::move(reason)};
}

// ---- the server ------------------------------------------------------------------------------

struct embedded_server::impl {
    explicit impl(server_options o)
        : options(std::move(o)), acceptor(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)),
          port(acceptor.local_endpoint().port()) {
        accept_thread = std::thread([this] { accept_loop(); });
    }

    ~impl() { stop(); }

    server_options options;
    boost::asio::io_context io;
    tcp::acceptor acceptor;
    unsigned short port;
    std::thread accept_thread;

    mutable std::mutex mutex;
    std::condition_variable stopped;  // wakes stalls when the server stops
    bool stopping = false;
    // A thread per open connection, joined as soon as its connection ends (not at stop):
    // finished threads queue their ids for the accept loop to reap.
    std::map<std::uint64_t, std::thread> connections;
    std::vector<std::uint64_t> finished;
    std::uint64_t next_connection = 0;
    std::set<int> open_sockets;
    std::map<std::string, sandbox> sandboxes;
    std::map<std::string, execution> executions;
    std::deque<fault> faults;
    std::atomic<std::size_t> served{0};
    std::size_t next_id = 1;

    // ---- lifecycle of the server itself ----

    void accept_loop() {
        std::chrono::milliseconds backoff{0};
        for (;;) {
            tcp::socket socket(io);
            boost::system::error_code ec;
            acceptor.accept(socket, ec);
            if (ec) {
                // Out of descriptors (EMFILE) or another accept error: wait before trying
                // again, longer each time, rather than spin a core.
                backoff = std::clamp(backoff * 2, std::chrono::milliseconds(1), std::chrono::milliseconds(100));
                pause(backoff);
                const std::lock_guard lock(mutex);
                if (stopping) return;
                continue;
            }
            backoff = std::chrono::milliseconds(0);
            std::unique_lock lock(mutex);
            if (stopping) return;
            reap_finished(lock);
            open_sockets.insert(socket.native_handle());
            const std::uint64_t id = next_connection++;
            connections.emplace(id, std::thread([this, id, s = std::move(socket)]() mutable {
                                    serve_connection(std::move(s));
                                    std::unique_lock done(mutex);
                                    reap_finished(done);  // those that ended before this one
                                    finished.push_back(id);
                                }));
        }
    }

    // Joins the threads whose connections have ended; called with the lock held, and
    // releases it while joining (a finished thread only has to return). Each ending
    // connection reaps those before it, so at most one ended thread waits to be joined.
    void reap_finished(std::unique_lock<std::mutex>& lock) {
        std::vector<std::thread> done;
        for (const std::uint64_t id : finished) {
            if (const auto it = connections.find(id); it != connections.end()) {
                done.push_back(std::move(it->second));
                connections.erase(it);
            }
        }
        finished.clear();
        lock.unlock();
        for (auto& t : done) t.join();
        lock.lock();
    }

    void stop() {
        std::vector<std::thread> to_join;
        {
            const std::lock_guard lock(mutex);
            if (stopping) return;
            stopping = true;
            for (const int fd : open_sockets) ::shutdown(fd, SHUT_RDWR);
        }
        stopped.notify_all();
        boost::system::error_code ec;
        {  // wake the blocked accept with a connection of our own
            tcp::socket wake(io);
            wake.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port), ec);
        }
        accept_thread.join();
        acceptor.close(ec);
        {
            const std::lock_guard lock(mutex);
            for (auto& [id, t] : connections) to_join.push_back(std::move(t));
            connections.clear();
            finished.clear();
        }
        for (auto& t : to_join) t.join();
    }

    // Waits `how_long` or until the server stops.
    void pause(std::chrono::milliseconds how_long) {
        std::unique_lock lock(mutex);
        stopped.wait_for(lock, how_long, [this] { return stopping; });
    }

    std::optional<fault> take_fault(const std::string& operation) {
        const std::lock_guard lock(mutex);
        for (auto it = faults.begin(); it != faults.end(); ++it) {
            if (it->operation != operation) continue;
            fault f = *it;
            if (--it->times <= 0) faults.erase(it);
            return f;
        }
        return std::nullopt;
    }

    std::string request_id() { return "req-" + std::to_string(served.load()); }

    // ---- one connection ----

    void serve_connection(tcp::socket socket) {
        boost::beast::flat_buffer buffer;
        for (;;) {
            beast_http::request_parser<beast_http::string_body> parser;
            parser.body_limit(max_request_body);
            boost::system::error_code ec;
            beast_http::read(socket, buffer, parser, ec);
            if (ec) break;
            ++served;
            const request& req = parser.get();
            if (!handle(socket, req) || !req.keep_alive()) break;
        }
        boost::system::error_code ec;
        const std::lock_guard lock(mutex);
        open_sockets.erase(socket.native_handle());
        socket.shutdown(tcp::socket::shutdown_both, ec);
        socket.close(ec);
    }

    // Answers one request; false when the connection must close.
    bool handle(tcp::socket& socket, const request& req) {
        const auto r = route_of(req.method(), req.target());
        if (!r) return send(socket, req, error_reply(req, 404, "SANDBOX::API_NOT_SUPPORTED", "no such route"));
        if (is_lifecycle(*r)) {
            if (auto denied = check_key(req)) return send(socket, req, std::move(*denied));
        }
        if (const auto f = take_fault(r->operation)) {
            if (const auto handled = apply_fault(socket, req, *r, *f)) return *handled;
        }
        if (r->operation == "exec") return exec(socket, req, *r, std::nullopt);
        return send(socket, req, answer(req, *r));
    }

    std::optional<response> check_key(const request& req) {
        if (options.api_key.empty()) return std::nullopt;
        const auto it = req.find("OPEN-SANDBOX-API-KEY");
        if (it == req.end()) return error_reply(req, 401, "MISSING_API_KEY", "Authentication credentials are missing");
        if (it->value() != options.api_key) return error_reply(req, 401, "INVALID_API_KEY", "Authentication credentials are invalid");
        return std::nullopt;
    }

    // Applies a fault; nothing when the request is then served normally (with the fault's data).
    std::optional<bool> apply_fault(tcp::socket& socket, const request& req, const route& r, const fault& f) {
        using action = fault::action;
        switch (f.what) {
            case action::http_error: {
                response res = error_reply(req, f.status, f.code, f.message);
                if (f.retry_after_s) res.set(beast_http::field::retry_after, std::to_string(*f.retry_after_s));
                return send(socket, req, std::move(res));
            }
            case action::stall:
                pause(f.stall_for);
                return false;  // the client has given up; close without answering
            case action::malformed_json: {
                response res(beast_http::status::ok, req.version());
                res.set(beast_http::field::content_type, "application/json");
                res.body() = "{\"id\": \"sbx-1\", \"status\": {\"state\": ";
                return send(socket, req, std::move(res));
            }
            case action::sandbox_status:
                // This reply only: the sandbox as the controller would report it.
                return send(socket, req, r.operation == "create" ? create(req, &f) : answer(req, r, &f));
            default:
                if (r.operation == "exec") return exec(socket, req, r, f.what);
                return std::nullopt;
        }
    }

    bool send(tcp::socket& socket, const request& req, response res) {
        res.version(req.version());
        res.set("X-Request-ID", request_id());
        res.keep_alive(req.keep_alive());
        res.prepare_payload();
        boost::system::error_code ec;
        beast_http::write(socket, res, ec);
        return !ec;
    }

    response json_reply(const request& req, int status, const json::value& body) {
        response res(static_cast<beast_http::status>(status), req.version());
        res.set(beast_http::field::content_type, "application/json");
        res.body() = json::serialize(body);
        return res;
    }

    response error_reply(const request& req, int status, std::string_view code, std::string_view message) {
        return json_reply(req, status, json::object{{"code", code}, {"message", message}});
    }

    response not_found(const request& req, const std::string& id) {
        return error_reply(req, 404, "KUBERNETES::SANDBOX_NOT_FOUND", "Sandbox '" + id + "' not found");
    }

    void set_status(const std::string& id, std::string state, std::string reason) {
        const std::lock_guard lock(mutex);
        if (const auto it = sandboxes.find(id); it != sandboxes.end()) {
            it->second.state = std::move(state);
            it->second.reason = std::move(reason);
        }
    }

    static json::object status_json(const sandbox& s) {
        return {{"state", s.state}, {"reason", s.reason}, {"message", "sandbox is " + s.state}};
    }

    static json::object sandbox_json(const std::string& id, const sandbox& s) {
        return {{"id", id},
                {"image", json::object{{"uri", s.image}}},
                {"status", status_json(s)},
                {"metadata", s.metadata},
                {"entrypoint", s.entrypoint},
                {"expiresAt", s.expires_at},
                {"createdAt", "2026-11-29T00:00:00Z"}};
    }

    // ---- the lifecycle routes ----

    response answer(const request& req, const route& r, const fault* status = nullptr) {
        if (r.operation == "health") return json_reply(req, 200, json::object{{"status", "ok"}});
        if (r.operation == "create") return create(req, nullptr);
        const std::lock_guard lock(mutex);
        const auto it = sandboxes.find(r.sandbox_id);
        if (it == sandboxes.end()) {
            if (r.operation == "exec_status") return error_reply(req, 404, "INVALID_REQUEST_BODY", "unknown command id");
            return not_found(req, r.sandbox_id);
        }
        if (r.operation == "get") {
            sandbox reported = it->second;
            if (status) {
                reported.state = status->state;
                reported.reason = status->reason;
            }
            return json_reply(req, 200, sandbox_json(r.sandbox_id, reported));
        }
        if (r.operation == "kill") {
            sandboxes.erase(it);
            return response(beast_http::status::no_content, req.version());
        }
        if (r.operation == "renew") return renew(req, it->second);
        if (r.operation == "endpoint") return endpoint(req, r);
        return command_status(req, r.extra);
    }

    response create(const request& req, const fault* status) {
        json::error_code ec;
        const json::value body = json::parse(req.body(), ec);
        const json::object* o = ec ? nullptr : body.if_object();
        const json::value* image = o ? o->if_contains("image") : nullptr;
        const json::value* uri = image && image->is_object() ? image->as_object().if_contains("uri") : nullptr;
        if (!uri || !uri->is_string()) return error_reply(req, 400, "SANDBOX::INVALID_PARAMETER", "image.uri is required");
        sandbox s;
        s.image = std::string(uri->as_string());
        if (const json::value* m = o->if_contains("metadata"); m && m->is_object()) s.metadata = m->as_object();
        if (const json::value* e = o->if_contains("entrypoint"); e && e->is_array()) s.entrypoint = e->as_array();
        if (status) {
            s.state = status->state;
            s.reason = status->reason;
        }
        const std::lock_guard lock(mutex);
        const std::string id = "sbx-" + std::to_string(next_id++);
        sandboxes.emplace(id, s);
        json::object reply = sandbox_json(id, s);
        reply.erase("image");
        return json_reply(req, 202, reply);
    }

    response renew(const request& req, sandbox& s) {
        json::error_code ec;
        const json::value body = json::parse(req.body(), ec);
        const json::value* at = !ec && body.is_object() ? body.as_object().if_contains("expiresAt") : nullptr;
        if (!at || !at->is_string()) return error_reply(req, 400, "SANDBOX::INVALID_PARAMETER", "expiresAt is required");
        s.expires_at = std::string(at->as_string());
        return json_reply(req, 200, json::object{{"expiresAt", s.expires_at}});
    }

    response endpoint(const request& req, const route& r) {
        const auto port_number = to_int(r.extra);
        if (!port_number || *port_number < 1 || *port_number > 65535) {
            return error_reply(req, 400, "SANDBOX::INVALID_PARAMETER", "port must be a number from 1 to 65535");
        }
        const std::string endpoint =
            "127.0.0.1:" + std::to_string(port) + "/v1/sandboxes/" + r.sandbox_id + "/proxy/" + r.extra;
        return json_reply(req, 200, json::object{{"endpoint", endpoint}, {"headers", json::object{}}});
    }

    response command_status(const request& req, const std::string& execution_id) {
        const auto it = executions.find(execution_id);
        if (it == executions.end()) return error_reply(req, 404, "INVALID_REQUEST_BODY", "unknown command id");
        const execution& x = it->second;
        json::object status{{"id", execution_id}, {"content", x.output}, {"running", false}};
        if (x.exit_code) status["exit_code"] = *x.exit_code;
        if (!x.error.empty()) status["error"] = x.error;
        return json_reply(req, 200, status);
    }

    // ---- execd: POST /command, streamed ----

    bool exec(tcp::socket& socket, const request& req, const route& r, std::optional<fault::action> misbehave) {
        json::error_code ec;
        const json::value body = json::parse(req.body(), ec);
        const json::value* command = !ec && body.is_object() ? body.as_object().if_contains("command") : nullptr;
        if (!command || !command->is_string()) {
            return send(socket, req, error_reply(req, 400, "INVALID_REQUEST_BODY", "command is required"));
        }
        std::string execution_id;
        {
            const std::lock_guard lock(mutex);
            if (!sandboxes.contains(r.sandbox_id)) return send(socket, req, not_found(req, r.sandbox_id));
            execution_id = "exec-" + std::to_string(next_id++);
        }
        beast_http::response<beast_http::empty_body> head(beast_http::status::ok, req.version());
        head.set(beast_http::field::content_type, "text/event-stream");
        head.set("X-Request-ID", request_id());
        head.chunked(true);
        beast_http::response_serializer<beast_http::empty_body> serializer(head);
        boost::system::error_code wec;
        beast_http::write_header(socket, serializer, wec);
        const auto emit = [&](const json::object& event) {
            const std::string text = frame(event);
            boost::asio::write(socket, beast_http::make_chunk(boost::asio::buffer(text)), wec);
        };
        using action = fault::action;
        if (misbehave == action::drop_before_init) return false;
        emit({{"type", "init"}, {"text", execution_id}});
        if (misbehave == action::drop_after_init) return false;
        // A killed command never finishes: it is not run.
        const auto [output, exit_code] = misbehave == action::signal_exit ? std::pair<std::string, int>{"", -1}
                                                                           : run(std::string(command->as_string()), emit);
        if (!output.empty()) emit({{"type", "stdout"}, {"text", output}});
        execution x{.output = output};
        if (misbehave == action::signal_exit) {
            x.exit_code = -1;
            x.error = "signal: killed";
            emit({{"type", "error"},
                  {"error", json::object{{"ename", "CommandExecError"}, {"evalue", "-1"},
                                         {"traceback", json::array{"signal: killed"}}}}});
        } else if (misbehave == action::no_terminal_event) {
            // the stream ends cleanly: no error, no execution_complete
        } else if (exit_code == 0) {
            x.exit_code = 0;
            emit({{"type", "execution_complete"}, {"execution_time", 1}});
        } else {
            x.exit_code = exit_code;
            x.error = "exit status " + std::to_string(exit_code);
            emit({{"type", "error"},
                  {"error", json::object{{"ename", "CommandExecError"}, {"evalue", std::to_string(exit_code)},
                                         {"traceback", json::array{x.error}}}}});
        }
        {
            const std::lock_guard lock(mutex);
            executions[execution_id] = x;
        }
        boost::asio::write(socket, beast_http::make_chunk_last(), wec);
        return !wec && req.keep_alive();
    }

    // The simulated shell: echo, exit, sleep; anything else reports what it would run.
    template <class Emit>
    std::pair<std::string, int> run(const std::string& command, const Emit& emit) {
        const std::string_view c = command;
        if (c.starts_with("echo ")) return {std::string(c.substr(5)) + "\n", 0};
        if (c.starts_with("exit ")) return {"", to_int(c.substr(5)).value_or(1)};
        if (c.starts_with("sleep ")) {
            const auto ms = std::chrono::milliseconds(std::min(to_int(c.substr(6)).value_or(0), 60000));
            const auto end = std::chrono::steady_clock::now() + ms;
            while (std::chrono::steady_clock::now() < end) {
                pause(std::min(std::chrono::milliseconds(200), ms));
                emit({{"type", "ping"}, {"text", "pong"}});
                const std::lock_guard lock(mutex);
                if (stopping) break;
            }
            return {"", 0};
        }
        return {"ran: " + command + "\n", 0};
    }
};

embedded_server::embedded_server(server_options options) : impl_(std::make_unique<impl>(std::move(options))) {}
embedded_server::~embedded_server() = default;

unsigned short embedded_server::port() const noexcept { return impl_->port; }

void embedded_server::inject(fault f) {
    const std::lock_guard lock(impl_->mutex);
    impl_->faults.push_back(std::move(f));
}

void embedded_server::set_sandbox_status(std::string_view sandbox_id, std::string state, std::string reason) {
    impl_->set_status(std::string(sandbox_id), std::move(state), std::move(reason));
}

std::size_t embedded_server::requests() const noexcept { return impl_->served.load(); }

void embedded_server::stop() { impl_->stop(); }

}  // namespace ngfail::opensandbox
