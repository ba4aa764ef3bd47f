// execd's interactive terminals: create, status and delete (HTTP, as every execd call), and
// the attached session over the terminal's WebSocket (Boost.Beast), through the sandbox's
// execd endpoint with its headers, on a connection of its own.
#include "call.hpp"
#include "terminal_frames.hpp"

#include <boost/asio/strand.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <deque>
#include <variant>

namespace ngfail::opensandbox::detail {

namespace json = boost::json;
namespace websocket = beast::websocket;
using verb = beast_http::verb;

// What a close code tells a person; the classifier reads the number from the observation,
// never this text.
// RFC 6455 §7.4.1's codes a server or proxy sends, and execd's own (its WSCloseTakenOver).
constexpr std::array<std::pair<int, std::string_view>, 4> close_meanings{{
    {1001, "the server is going away"},
    {1008, "closed for a policy violation (a proxy's or the server's)"},
    {1011, "the server failed while serving it"},
    {4001, "another client took the terminal over (TAKEN_OVER)"},
}};

// A session's end by a close frame: its text says the code and what it means, and nothing
// of a connection lost mid-exchange, which it was not; its code stays the portable one.
class closed_by_peer : public std::system_error {
public:
    closed_by_peer(std::error_code portable, int close_code) : std::system_error(portable) {
        text_ = "the terminal's WebSocket closed with code " + std::to_string(close_code);
        const auto it = std::find_if(close_meanings.begin(), close_meanings.end(),
                                     [&](const auto& row) { return row.first == close_code; });
        if (it != close_meanings.end()) text_ += ": " + std::string(it->second);
    }
    [[nodiscard]] const char* what() const noexcept override { return text_.c_str(); }

private:
    std::string text_;
};

// The error a session ends with: a close's code, for people, or the portable error itself.
inline std::exception_ptr closed_with(std::error_code portable, std::optional<int> close_code) {
    if (!close_code) return std::make_exception_ptr(std::system_error(portable));
    return std::make_exception_ptr(closed_by_peer(portable, *close_code));
}

// What an attached session holds and has seen. Shared by its operations, so that one still
// running keeps the connection alive after the session object is gone.
struct terminal_link {
    terminal_link(client_state& s, std::string sandbox, std::string terminal)
        : shared(s), strand(asio::make_strand(s.executor)), sandbox_id(std::move(sandbox)),
          terminal_id(std::move(terminal)) {}

    // A WebSocket over the connection's own stream, without permessage-deflate (execd offers
    // none): half the code to compile.
    template <class Next>
    using socket_over = websocket::stream<Next&, false>;
    using plain_socket = socket_over<beast::tcp_stream>;
    using tls_socket = socket_over<beast::ssl_stream<beast::tcp_stream>>;

    client_state& shared;
    // Every operation on the WebSocket runs here, whoever awaits it: one at a time, and the
    // socket's own timers (its pings, its idle deadline) stay on the client's executor
    // instead of keeping a caller's io_context busy.
    asio::strand<asio::any_io_executor> strand;
    redactor secrets;
    std::string sandbox_id;
    std::string terminal_id;
    std::string mode;
    std::unique_ptr<connection> conn;
    std::variant<std::monostate, plain_socket, tls_socket> socket;
    beast::flat_buffer buffer;
    std::deque<terminal_output> replayed;  // replay frames read before `connected`, bounded
    std::size_t replayed_bytes = 0;        // ... and their bytes
    std::int64_t offset = 0;
    bool input_written = false;
    std::optional<int> exit_code;
    std::optional<failure> ended;  // given again to every later call
    bool detaching = false;

    // `op` applied to whichever WebSocket this is; its awaitable is awaited as a named value
    // (g++ 12 mishandles a lambda call inside a co_await).
    template <class Op>
    auto with_socket(Op&& op) {
        if (auto* tls = std::get_if<tls_socket>(&socket)) return op(*tls);
        return op(std::get<plain_socket>(socket));
    }

    // What a failed read or write says, as the classifier reads it: a close frame is the
    // connection's end with its close code; a frame the protocol forbids is malformed.
    std::error_code said(boost::system::error_code ec, std::optional<int>& close_code) {
        if (ec == websocket::error::closed) {
            close_code = with_socket([](auto& ws) { return static_cast<int>(ws.reason().code); });
            return make_error_code(errc::connection_closed);
        }
        if (ec.category() == make_error_code(websocket::error::closed).category()) {
            return make_error_code(errc::malformed_response);
        }
        return portable_transport_error(ec);
    }

    // The session's failure, classified from what the WebSocket said and what the session did
    // (input written); kept, so every later call gives it again.
    failure fail(std::error_code portable, phase at, std::optional<int> close_code = std::nullopt,
                 std::optional<std::string> provider_code = std::nullopt, const observation* status = nullptr) {
        if (detaching) {  // a read that meets the session's own close
            ended = failure(kind::cancelled, "the session was detached");
            return *ended;
        }
        observation seen{.operation = std::string(name(operation::attach_terminal)),
                         .sandbox_id = sandbox_id,
                         .execution_id = terminal_id};
        describe(seen, closed_with(portable, close_code));
        seen.transport_phase = at;
        seen.provider_code = std::move(provider_code);
        seen.close_code = close_code;
        seen.input_written = input_written;
        if (status) {
            seen.sandbox_state = status->sandbox_state;
            seen.provider_status_reason = status->provider_status_reason;
        }
        scrub(seen, secrets);
        ended = to_failure(seen);
        return *ended;
    }
    failure fail(boost::system::error_code ec, phase at) {
        std::optional<int> close_code;
        const std::error_code portable = said(ec, close_code);
        return fail(portable, at, close_code);
    }
};

namespace {

constexpr std::size_t largest_frame = 4 << 20;  // execd's: 32 KiB live, 1 MiB + 9 replayed

// Replay read before `connected` is kept as execd's own replay buffer clamps it: the newest
// 1 MiB, in at most 4096 frames. What is older is dropped; the offsets of what is kept say
// where it starts.
constexpr std::size_t kept_replay_bytes = 1 << 20;
constexpr std::size_t kept_replay_frames = 4096;

void keep_replayed(terminal_link& link, terminal_output replay) {
    link.replayed_bytes += replay.bytes.size();
    link.replayed.push_back(std::move(replay));
    while (link.replayed.size() > kept_replay_frames || link.replayed_bytes > kept_replay_bytes) {
        terminal_output& oldest = link.replayed.front();
        const std::size_t over = link.replayed_bytes - std::min(link.replayed_bytes, kept_replay_bytes);
        if (link.replayed.size() <= kept_replay_frames && over < oldest.bytes.size()) {
            oldest.bytes = oldest.bytes.substr(over);  // the newest mebibyte starts inside it
            oldest.offset += static_cast<std::int64_t>(over);
            link.replayed_bytes -= over;
            return;
        }
        link.replayed_bytes -= oldest.bytes.size();
        link.replayed.pop_front();
    }
}

std::string terminal_path(std::string_view terminal_id) { return "/pty/" + path_segment(terminal_id); }

// The WebSocket's target: the terminal's path, with what the attach asks for.
std::string attach_target(const target& where, std::string_view terminal_id, const attach_options& attach) {
    std::string query;
    const auto add = [&](std::string_view part) { query += (query.empty() ? "?" : "&") + std::string(part); };
    if (attach.takeover) add("takeover=1");
    if (attach.since) add("since=" + std::to_string(*attach.since));
    if (attach.pipe) add("pty=0");
    return where.base + terminal_path(terminal_id) + "/ws" + query;
}

// A deadline as a WebSocket timeout: none for a call without one.
websocket::stream_base::duration time_until(clock::time_point deadline) {
    if (deadline == clock::time_point::max()) return websocket::stream_base::none();
    return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()),
                    std::chrono::milliseconds(1));
}

terminal_info terminal_of(const json::value& v, std::string_view id) {
    const json::object& o = as_object(v);
    const json::value* running = o.if_contains("running");
    const json::value* offset = o.if_contains("output_offset");
    if (!running || !running->is_bool() || !offset || !offset->is_int64()) malformed("a terminal status without its fields");
    return {.id = std::string(id), .running = running->as_bool(), .output_offset = offset->as_int64()};
}

// Reads the next frame into the link; the error when the read failed.
awaitable<boost::system::error_code> read_frame(terminal_link& link) {
    boost::system::error_code ec;
    link.buffer.consume(link.buffer.size());
    auto read = link.with_socket([&](auto& ws) {
        return ws.async_read(link.buffer, asio::redirect_error(asio::use_awaitable, ec));
    });
    co_await std::move(read);
    co_return ec;
}

terminal_frame frame_read(terminal_link& link) {
    const bool binary = link.with_socket([](auto& ws) { return ws.got_binary(); });
    const auto data = link.buffer.cdata();
    return parse_terminal_frame(binary, std::string_view(static_cast<const char*>(data.data()), data.size()),
                                link.offset);
}

// The upgrade, then frames until `connected` (replayed output before it is kept for the first
// reads). Throws what `call` classifies: an api_error for a declined upgrade, a
// connection_error for the transport.
awaitable<void> open_session(terminal_link& link, const call_context& c, const execd_route& route,
                             const attach_options& attach, observation& seen) {
    lease on = co_await c.connect_to_execd(link.sandbox_id, route.where, true);
    link.conn = on.release();
    link.conn->take_over([&](auto& next) { link.socket.emplace<terminal_link::socket_over<std::decay_t<decltype(next)>>>(next); });
    const auto headers = route.endpoint.headers;
    link.with_socket([&](auto& ws) {
        ws.set_option(websocket::stream_base::timeout{.handshake_timeout = time_until(c.deadline),
                                                      .idle_timeout = attach.idle_timeout,
                                                      .keep_alive_pings = true});
        // The upgrade is the attempt's request: it carries the attempt's trace parent too.
        ws.set_option(websocket::stream_base::decorator([headers, trace_parent = std::string(c.trace_parent)](
                                                            websocket::request_type& req) {
            for (const auto& [name, value] : headers) {
                if (!frames_the_request(name)) req.set(name, value);
            }
            if (!trace_parent.empty()) req.set("traceparent", trace_parent);
        }));
        ws.read_message_max(largest_frame);
        return 0;
    });
    websocket::response_type declined;
    boost::system::error_code ec;
    const std::string host = host_field(route.where);  // as the connection sends it
    const std::string target = attach_target(route.where, link.terminal_id, attach);
    auto handshake = link.with_socket([&](auto& ws) {
        return ws.async_handshake(declined, host, target, asio::redirect_error(asio::use_awaitable, ec));
    });
    co_await std::move(handshake);
    if (ec && declined.result_int() >= 300) throw api_error_of(declined.base(), declined.body(), c.secrets);
    if (ec) throw connection_error(ec, phase::receive);
    seen.execution_id = link.terminal_id;  // established: the shell is (or was) started
    for (;;) {
        if (const auto failed = co_await read_frame(link)) {
            std::optional<int> close_code;
            const std::error_code portable = link.said(failed, close_code);
            seen.close_code = close_code;
            std::rethrow_exception(closed_with(portable, close_code));
        }
        terminal_frame frame = frame_read(link);
        if (auto* connected = std::get_if<connected_frame>(&frame)) {
            link.mode = std::move(connected->mode);
            co_return;
        }
        if (auto* replay = std::get_if<terminal_output>(&frame)) {
            link.offset = replay->offset + static_cast<std::int64_t>(replay->bytes.size());
            keep_replayed(link, std::move(*replay));
        } else if (const auto* error = std::get_if<error_frame>(&frame)) {
            seen.provider_code = error->code;  // a takeover that timed out: ALREADY_CONNECTED
            malformed("the terminal refused the attach after the upgrade");
        } else if (std::holds_alternative<malformed_frame>(frame)) {
            malformed("a terminal frame execd does not send");
        }
    }
}

}  // namespace

awaitable<result<std::string>> create_terminal_operation(client_state& s, std::string sandbox_id,
                                                         terminal_request request, call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}});
    co_return co_await call<std::string>(s, per_call, operation::create_terminal, sandbox_id, std::move(problem),
                                         [&](const call_context& c, observation&) -> attempt_result<std::string> {
        json::object body;
        if (request.cwd) body["cwd"] = *request.cwd;
        if (request.command) body["command"] = *request.command;
        const json::value reply = json_of(
            co_await c.execd_call(sandbox_id, verb::post, "/pty", json::serialize(body), "application/json"),
            "the terminal reply is not JSON");
        co_return required_string(as_object(reply), "session_id");
    });
}

awaitable<result<terminal_info>> terminal_status_operation(client_state& s, std::string sandbox_id,
                                                           std::string terminal_id, call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"terminal id", terminal_id}});
    co_return co_await call<terminal_info>(s, per_call, operation::terminal_status, sandbox_id, std::move(problem),
                                           [&](const call_context& c, observation&) -> attempt_result<terminal_info> {
        const json::value reply =
            json_of(co_await c.execd_call(sandbox_id, verb::get, terminal_path(terminal_id)), "the status is not JSON");
        co_return terminal_of(reply, terminal_id);
    });
}

awaitable<result<void>> delete_terminal_operation(client_state& s, std::string sandbox_id, std::string terminal_id,
                                                  call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"terminal id", terminal_id}});
    co_return co_await done(call<bool>(s, per_call, operation::delete_terminal, sandbox_id, std::move(problem),
                                       [&](const call_context& c, observation&) -> attempt_result<bool> {
        (void)co_await c.execd_call(sandbox_id, verb::delete_, terminal_path(terminal_id));
        co_return true;
    }));
}

awaitable<result<terminal_session>> attach_terminal_operation(client_state& s, std::string sandbox_id,
                                                              std::string terminal_id, attach_options attach,
                                                              call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"terminal id", terminal_id}});
    if (!problem && attach.since && *attach.since < 0) problem = "a replay offset is never negative";
    co_return co_await call<terminal_session>(
        s, per_call, operation::attach_terminal, sandbox_id, std::move(problem),
        [&](const call_context& c, observation& seen) -> attempt_result<terminal_session> {
            const shared_route route = co_await c.execd_endpoint(sandbox_id);
            auto link = std::make_shared<terminal_link>(s, sandbox_id, terminal_id);
            link->secrets = c.secrets;
            co_await asio::co_spawn(link->strand, open_session(*link, c, *route, attach, seen), asio::use_awaitable);
            co_return terminal_session(std::move(link));
        });
}

// ---- the session's operations ------------------------------------------------------------------

namespace {

// (co_spawn's value must be default-constructible: a result is carried in an optional.)
template <class T>
awaitable<std::optional<result<T>>> carried(awaitable<result<T>> operation) {
    co_return co_await std::move(operation);
}
template <class T>
awaitable<result<T>> on_the_strand(std::shared_ptr<terminal_link> link, awaitable<result<T>> operation) {
    std::optional<result<T>> done =
        co_await asio::co_spawn(link->strand, carried(std::move(operation)), asio::use_awaitable);
    co_return std::move(*done);
}

// One message to the terminal; `input` marks what the shell may act on.
awaitable<result<void>> send_frame(std::shared_ptr<terminal_link> link, std::string frame, bool binary, bool input) {
    if (link->ended) co_return *link->ended;
    if (input) link->input_written = true;  // once on its way, it may reach the shell
    boost::system::error_code ec;
    auto write = link->with_socket([&](auto& ws) {
        ws.binary(binary);
        return ws.async_write(asio::buffer(frame), asio::redirect_error(asio::use_awaitable, ec));
    });
    co_await std::move(write);
    if (ec) co_return link->fail(ec, phase::send);
    co_return boost::outcome_v2::success();
}

awaitable<result<terminal_event>> read_event(std::shared_ptr<terminal_link> link) {
    if (!link->replayed.empty()) {
        terminal_output first = std::move(link->replayed.front());
        link->replayed.pop_front();
        link->replayed_bytes -= first.bytes.size();
        co_return terminal_event(std::move(first));
    }
    if (link->exit_code) co_return terminal_event(terminal_exit{*link->exit_code});
    if (link->ended) co_return *link->ended;
    for (;;) {
        if (const auto failed = co_await read_frame(*link)) {
            std::optional<int> close_code;
            const std::error_code portable = link->said(failed, close_code);
            // 1011 (an internal error) is what a sandbox that died under its terminal shows:
            // its status says why, where anything does.
            observation status{.sandbox_id = link->sandbox_id};
            if (close_code == 1011) {
                co_await add_sandbox_status(call_context{link->shared, link->shared.options,
                                                         deadline_after(status_probe_timeout), link->secrets},
                                            status);
            }
            co_return link->fail(portable, phase::receive, close_code, std::nullopt, &status);
        }
        terminal_frame frame = frame_read(*link);
        if (auto* output = std::get_if<terminal_output>(&frame)) {
            link->offset = output->offset + static_cast<std::int64_t>(output->bytes.size());
            co_return terminal_event(std::move(*output));
        }
        if (const auto* exit = std::get_if<terminal_exit>(&frame)) {
            link->exit_code = exit->exit_code;
            co_return terminal_event(*exit);
        }
        if (auto* error = std::get_if<error_frame>(&frame)) {  // execd's, with its code: the code is the evidence
            co_return link->fail(make_error_code(errc::connection_closed), phase::receive, std::nullopt,
                                 std::move(error->code));
        }
        if (std::holds_alternative<malformed_frame>(frame)) {
            co_return link->fail(make_error_code(errc::malformed_response), phase::receive);
        }
    }
}

awaitable<result<void>> detach_session(std::shared_ptr<terminal_link> link) {
    if (link->ended || link->exit_code) {
        link->conn->shut();
        co_return boost::outcome_v2::success();
    }
    link->detaching = true;
    boost::system::error_code ec;
    auto close = link->with_socket([&](auto& ws) {
        return ws.async_close(websocket::close_code::normal, asio::redirect_error(asio::use_awaitable, ec));
    });
    co_await std::move(close);
    link->conn->shut();
    link->ended = failure(kind::cancelled, "the session was detached");
    co_return boost::outcome_v2::success();
}

}  // namespace

}  // namespace ngfail::opensandbox::detail

namespace ngfail::opensandbox {

// ---- the client's faces ------------------------------------------------------------------------

client::awaitable<std::string> client::make_create_terminal(std::string_view sandbox_id,
                                                            const terminal_request_ref& request,
                                                            const call_options& options) {
    return detail::create_terminal_operation(*state_, std::string(sandbox_id), request.copy(), options);
}

client::awaitable<terminal_info> client::make_terminal_status(std::string_view sandbox_id,
                                                              std::string_view terminal_id,
                                                              const call_options& options) {
    return detail::terminal_status_operation(*state_, std::string(sandbox_id), std::string(terminal_id), options);
}

client::awaitable<void> client::make_delete_terminal(std::string_view sandbox_id, std::string_view terminal_id,
                                                     const call_options& options) {
    return detail::delete_terminal_operation(*state_, std::string(sandbox_id), std::string(terminal_id), options);
}

client::awaitable<terminal_session> client::make_attach_terminal(std::string_view sandbox_id,
                                                                 std::string_view terminal_id,
                                                                 const attach_options& attach,
                                                                 const call_options& options) {
    return detail::attach_terminal_operation(*state_, std::string(sandbox_id), std::string(terminal_id), attach,
                                             options);
}

// ---- the session's faces -----------------------------------------------------------------------

terminal_session::terminal_session(std::shared_ptr<detail::terminal_link> link) noexcept : link_(std::move(link)) {}
terminal_session::terminal_session(terminal_session&&) noexcept = default;
terminal_session& terminal_session::operator=(terminal_session&&) noexcept = default;
terminal_session::~terminal_session() {
    if (!link_) return;
    // On the executor its operations run on: one of them may still be using the connection.
    const auto on = link_->strand;  // before the link moves into the handler
    boost::asio::post(on, [link = std::move(link_)] { link->conn->shut(); });
}

const std::string& terminal_session::terminal_id() const noexcept { return link_->terminal_id; }
const std::string& terminal_session::mode() const noexcept { return link_->mode; }
std::int64_t terminal_session::offset() const noexcept { return link_->offset; }
boost::asio::any_io_executor terminal_session::executor() const noexcept { return link_->shared.executor; }
void terminal_session::drive(boost::asio::awaitable<void> work) {
    detail::drive_on_executor(link_->shared, std::move(work));
}

terminal_session::awaitable<void> terminal_session::make_write(std::string_view input) {
    return detail::on_the_strand(link_, detail::send_frame(link_, detail::stdin_frame(input), true, true));
}
terminal_session::awaitable<void> terminal_session::make_resize(int cols, int rows) {
    return detail::on_the_strand(link_, detail::send_frame(link_, detail::resize_frame(cols, rows), false, false));
}
terminal_session::awaitable<void> terminal_session::make_signal(std::string_view name) {
    return detail::on_the_strand(link_, detail::send_frame(link_, detail::signal_frame(name), false, true));
}
terminal_session::awaitable<terminal_event> terminal_session::make_read() {
    return detail::on_the_strand(link_, detail::read_event(link_));
}
terminal_session::awaitable<void> terminal_session::make_detach() {
    return detail::on_the_strand(link_, detail::detach_session(link_));
}

}  // namespace ngfail::opensandbox
