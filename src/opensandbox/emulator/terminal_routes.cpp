// execd's interactive terminals inside a simulated sandbox: create (POST /pty), status (GET
// /pty/{id}), delete (DELETE /pty/{id}) and the WebSocket that attaches to one (GET
// /pty/{id}/ws?takeover=1&since=N&pty=0), byte-compatible with execd's frames: binary
// messages whose first byte is the channel (0x00 stdin in, 0x01 stdout, 0x02 stderr in pipe
// mode, 0x03 replay with an 8-byte big-endian offset), JSON text frames for the rest
// (`connected`, `exit`, `pong`, `error` out; `stdin`, `signal`, `resize`, `ping` in).
// One holder at a time: a second attach is a 409 before the upgrade, unless it takes over,
// which closes the holder with 4001 TAKEN_OVER. The shell is terminal.hpp's.
#include "context.hpp"
#include "run_stream.hpp"
#include "terminal.hpp"
#include "opensandbox/emulator/process/process_terminal.hpp"

#include <ngfail/event_id.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <array>
#include <charconv>
#include <deque>
#include <memory>

namespace ngfail::opensandbox::testing::detail {
namespace {

namespace json = boost::json;
namespace asio = boost::asio;
namespace websocket = boost::beast::websocket;
using boost::asio::awaitable;
constexpr auto ws_done = asio::as_tuple(asio::use_awaitable);

// execd's deadlines: a ping every 30 s, a peer silent for 60 s is gone; a close handshake
// (and the upgrade) may take 10 s.
constexpr std::chrono::seconds idle_after{60};
constexpr std::chrono::seconds handshake_within{10};
constexpr std::size_t largest_input = 1 << 20;  // one message from the peer
constexpr std::size_t output_frame = 32 * 1024;  // execd's pump reads 32 KiB at a time
constexpr std::size_t queued_replies = 64;       // pongs and errors the peer has not read
constexpr auto writer_step = std::chrono::milliseconds(50);

response terminal_not_found(const context& c, const exchange& x, std::string_view id) {
    return c.error_reply(x, 404, "CONTEXT_NOT_FOUND", "pty session " + std::string(id) + " not found");
}

// ---- create, status, delete -------------------------------------------------------------------

// POST /pty {"cwd","command"}: a body is optional; its fields, when given, are strings.
awaitable<void> create_terminal(context& c, exchange& x, call& k) {
    std::string cwd;
    std::string command;
    if (!x.req().body().empty()) {
        json::error_code ec;
        const json::value body = json::parse(x.req().body(), ec);
        const json::object* o = ec ? nullptr : body.if_object();
        const auto text = [&](std::string_view name, std::string& into) {
            const json::value* v = o ? o->if_contains(name) : nullptr;
            if (v && v->is_string()) into = std::string(v->as_string());
            return !v || v->is_string() || v->is_null();
        };
        if (!o || !text("cwd", cwd) || !text("command", command)) {
            co_await x.reply(c.error_reply(x, 400, "INVALID_REQUEST_BODY", "error parsing request: malformed body"));
            co_return;
        }
    }
    const std::string id = to_string(event_id::generate());
    const std::shared_ptr<process_sandbox> box = c.processes ? c.sandboxes.box(k.sandbox_id) : nullptr;
    auto place = c.processes ? c.processes->take_terminal_place() : nullptr;
    const auto made = c.sandboxes.with_terminals(k.sandbox_id, [&](terminal_map& terminals, const file_tree&) {
        if (terminals.size() >= c.sandboxes.terminals_per_sandbox()) return false;
        if (c.processes) {
            if (!box || !place) return false;  // the server's terminals are all taken
            terminals.emplace(id, std::make_shared<process_terminal>(box, cwd, command, std::move(place)));
        } else {
            terminals.emplace(id, std::make_shared<simulated_terminal>(cwd, command));
        }
        return true;
    });
    json::object created;  // named: g++ 12 rejects a braced JSON object inside a co_await
    created["session_id"] = id;
    if (!made) {
        co_await x.reply(c.not_found(x, k.sandbox_id));
    } else if (!*made) {
        co_await x.reply(c.error_reply(x, 500, "RUNTIME_ERROR", "error creating pty session: too many sessions"));
    } else {
        co_await x.reply(c.json_reply(x, 201, created));
    }
}

awaitable<void> terminal_status(context& c, exchange& x, call& k) {
    // Off the connection threads: letting time pass may run the lines typed ahead.
    const auto found = co_await c.off_io([&] {
        return c.sandboxes.with_terminals(k.sandbox_id, [&](terminal_map& terminals, const file_tree& files) {
            const auto it = terminals.find(k.param);
            if (it == terminals.end()) return std::optional<json::object>();
            terminal_session& t = *it->second;
            t.advance(mono_clock::now(), files);
            return std::optional(json::object{
                {"session_id", k.param}, {"running", t.running()}, {"output_offset", t.output().end()}});
        });
    });
    if (!found) {
        co_await x.reply(c.not_found(x, k.sandbox_id));
    } else if (!*found) {
        co_await x.reply(terminal_not_found(c, x, k.param));
    } else {
        co_await x.reply(c.json_reply(x, 200, **found));
    }
}

// Kills its shell (a holder sees it exit, -1) and forgets it.
awaitable<void> delete_terminal(context& c, exchange& x, call& k) {
    const auto erased = c.sandboxes.with_terminals(k.sandbox_id, [&](terminal_map& terminals, const file_tree&) {
        return terminals.erase(k.param) == 1;
    });
    if (!erased) {
        co_await x.reply(c.not_found(x, k.sandbox_id));
    } else if (!*erased) {
        co_await x.reply(terminal_not_found(c, x, k.param));
    } else {
        co_await x.reply(c.empty_reply(x, 200));
    }
}

// ---- the WebSocket ----------------------------------------------------------------------------

std::string server_frame(json::object frame) { return json::serialize(frame); }
std::string connected_frame(std::string_view id, bool pipe) {
    return server_frame({{"type", "connected"}, {"session_id", id}, {"mode", pipe ? "pipe" : "pty"}});
}
std::string exit_frame(int code) { return server_frame({{"type", "exit"}, {"exit_code", code}}); }
std::string terminal_error_frame(std::string_view code, std::string_view message) {
    return server_frame({{"type", "error"}, {"error", message}, {"code", code}});
}
// execd's close for a holder evicted by a takeover: 4001 (RFC 6455 §7.4.2's private range).
websocket::close_reason taken_over_close() {
    return websocket::close_reason(static_cast<websocket::close_code>(4001), "TAKEN_OVER");
}
std::string pong_frame() { return server_frame({{"type", "pong"}}); }

// A binary frame: the channel byte, then (for a replay) the offset, then the bytes.
std::string binary_frame(terminal_channel channel, std::string_view bytes, std::optional<std::int64_t> offset = {}) {
    std::string out(1, static_cast<char>(channel));
    if (offset) {
        for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>((*offset >> shift) & 0xff);
    }
    out.append(bytes);
    return out;
}

std::int64_t since_query(const exchange& x) {
    const auto text = query_value(x.req().target(), "since");
    std::int64_t since = 0;
    if (text) {
        const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), since);
        if (ec != std::errc() || end != text->data() + text->size()) since = 0;  // execd's default
    }
    return since;
}

// What the holder's two halves share (both run on the connection's strand).
struct holding {
    std::string sandbox_id;
    std::string terminal_id;
    std::uint64_t holder = 0;
    std::uint64_t run = 0;  // the shell run it attached to: a later one means this one exited
    std::deque<std::string> replies{};  // text frames the input asks for (pongs, errors)
    bool input_seen = false;
    bool reader_done = false;
};

// The peer's messages, until it closes or fails: input typed into the terminal, or JSON
// frames, as execd's read loop takes them. Wakes the writer after each.
template <class Socket>
awaitable<void> read_input(context& c, Socket& ws, holding& h, asio::steady_timer& wake) {
    boost::beast::flat_buffer buffer;
    for (;;) {
        auto [ec, n] = co_await ws.async_read(buffer, ws_done);
        if (ec) break;
        const std::string data = boost::beast::buffers_to_string(buffer.data());
        buffer.consume(buffer.size());
        const auto now = mono_clock::now();
        // Input may run lines: it goes to the terminal off the connection threads.
        const auto into_terminal = [&](const auto& act) {
            return c.off_io([&] {
                (void)c.sandboxes.with_terminals(h.sandbox_id, [&](terminal_map& terminals, const file_tree& files) {
                    const auto it = terminals.find(h.terminal_id);
                    if (it != terminals.end() && it->second->held_by(h.holder)) act(*it->second, files);
                    return true;
                });
            });
        };
        if (ws.got_binary()) {
            if (!data.empty() && data[0] == static_cast<char>(terminal_channel::stdin_bytes)) {
                const std::string_view typed = std::string_view(data).substr(1);
                co_await into_terminal([&](terminal_session& t, const file_tree& files) { t.type(typed, now, files); });
                h.input_seen = true;
            }
        } else {
            json::error_code parse_error;
            const json::value frame = json::parse(data, parse_error);
            const json::object* o = parse_error ? nullptr : frame.if_object();
            const auto field = [&](std::string_view name) -> const json::value* { return o ? o->if_contains(name) : nullptr; };
            const auto text = [&](std::string_view name) {
                const json::value* v = field(name);
                return v && v->is_string() ? std::string(v->as_string()) : std::string();
            };
            const auto number = [&](std::string_view name) {
                const json::value* v = field(name);
                return v && v->is_int64() ? v->as_int64() : std::int64_t{0};
            };
            const std::string type = text("type");
            if (!o) {
                // execd ignores a text frame that is not JSON
            } else if (type == "stdin") {
                const std::string typed = text("data");
                co_await into_terminal([&](terminal_session& t, const file_tree& files) { t.type(typed, now, files); });
                h.input_seen = true;
            } else if (type == "signal") {
                const std::string name = text("signal");
                co_await into_terminal([&](terminal_session& t, const file_tree& files) { t.signal(name, now, files); });
            } else if (type == "resize") {
                const auto cols = number("cols");
                const auto rows = number("rows");
                if (cols > 0 && rows > 0 && cols <= 0xffff && rows <= 0xffff) {
                    co_await into_terminal([&](terminal_session& t, const file_tree&) {
                        t.resize(static_cast<int>(cols), static_cast<int>(rows));
                    });
                }
            } else if (type == "ping") {
                h.replies.push_back(pong_frame());
            } else {
                h.replies.push_back(terminal_error_frame("INVALID_FRAME", "unknown frame type \"" + type + "\""));
            }
        }
        wake.cancel();
        if (h.replies.size() > queued_replies) break;  // it asks without reading the answers
    }
}

// What the writer does next, decided under the sandbox's lock (off the connection threads:
// letting time pass may run lines).
struct next_step {
    enum { send_output, wait, exited, taken_over, sandbox_gone } what = wait;
    output_history::piece piece{};
    int exit_code = -1;
};

next_step decide(context& c, holding& h, std::int64_t sent) {
    const auto now = mono_clock::now();
    const auto decided = c.sandboxes.with_terminals(h.sandbox_id, [&](terminal_map& terminals, const file_tree& files) {
        const auto it = terminals.find(h.terminal_id);
        if (it == terminals.end()) return next_step{.what = next_step::exited, .exit_code = -1};  // deleted: killed
        terminal_session& t = *it->second;
        t.advance(now, files);
        if (!t.held_by(h.holder)) return next_step{.what = next_step::taken_over};
        auto piece = t.output().next(sent, output_frame);
        if (!piece.bytes.empty()) return next_step{.what = next_step::send_output, .piece = std::move(piece)};
        if (!t.running() || t.run_number() != h.run) return next_step{.what = next_step::exited, .exit_code = t.exit_code()};
        return next_step{};
    });
    return decided ? *decided : next_step{.what = next_step::sandbox_gone};
}

void let_go(context& c, const holding& h) {
    (void)c.sandboxes.with_terminals(h.sandbox_id, [&](terminal_map& terminals, const file_tree&) {
        if (const auto it = terminals.find(h.terminal_id); it != terminals.end()) it->second->release(h.holder);
        return true;
    });
}

// A fault's misbehaviour, once the peer's first input is taken and the output so far sent: a
// close with the code a takeover or a proxy's policy sends, or half a frame and the connection's end.
template <class Socket>
awaitable<void> misbehave(Socket& ws, fault::action what) {
    if (what == fault::action::drop_mid_frame) {
        // A final binary frame announcing 256 bytes (0x82, 126, 0x0100), of which 4 arrive.
        static constexpr std::array<char, 9> half{'\x82', '\x7e', '\x01', '\x00', '\x01', 'h', 'a', 'l', 'f'};
        co_await asio::async_write(ws.next_layer(), asio::buffer(half), ws_done);
        co_return;
    }
    if (what == fault::action::oom_kill) {  // its sandbox died under it (the caller failed it)
        co_await ws.async_close(websocket::close_reason(websocket::close_code::internal_error, "internal error"), ws_done);
        co_return;
    }
    const bool takeover = what == fault::action::taken_over;
    co_await ws.async_close(takeover ? taken_over_close() : websocket::close_reason(websocket::close_code::policy_error,
                                                                                     "policy violation"),
                            ws_done);
}

// The holder's session, after the upgrade: replay, `connected`, then output as it comes
// (one write at a time, from this coroutine only) while `read_input` takes the peer's input.
template <class Socket>
awaitable<void> hold(context& c, exchange& x, Socket& ws, holding& h, bool pipe, std::optional<fault::action> fault) {
    auto executor = co_await asio::this_coro::executor;
    asio::steady_timer wake(executor);
    const std::int64_t since = since_query(x);
    // The replay and the start, or why there are none: a takeover may come between this
    // holder's upgrade and its start (its peer has seen the upgrade: it attaches at once).
    struct start {
        std::optional<output_history::slice> missed{};
        bool taken_over = false;
    };
    const auto attached = co_await c.off_io([&] {  // a start may run the terminal's command
        return c.sandboxes.with_terminals(h.sandbox_id, [&](terminal_map& terminals, const file_tree& files) {
            const auto it = terminals.find(h.terminal_id);
            if (it == terminals.end()) return start{};
            if (!it->second->held_by(h.holder)) return start{.taken_over = true};
            terminal_session& t = *it->second;
            // The snapshot first: a new shell's prompt comes live, after `connected`, as execd's.
            auto missed = t.output().since(since);
            t.start(pipe, mono_clock::now(), files);
            h.run = t.run_number();
            pipe = t.pipe_mode();
            return start{.missed = std::move(missed)};
        });
    });
    if (attached && attached->taken_over) {
        co_await ws.async_close(taken_over_close(), ws_done);  // as once started: the holder learns why
        co_return;
    }
    if (!attached || !attached->missed) co_return;
    const output_history::slice& missed = *attached->missed;
    std::int64_t sent = missed.offset + static_cast<std::int64_t>(missed.bytes.size());
    ws.binary(true);
    if (!missed.bytes.empty()) {
        auto [ec, n] = co_await ws.async_write(asio::buffer(binary_frame(terminal_channel::replay, missed.bytes, missed.offset)),
                                               ws_done);
        if (ec) co_return;
    }
    ws.text(true);
    if (auto [ec, n] = co_await ws.async_write(asio::buffer(connected_frame(h.terminal_id, pipe)), ws_done); ec) {
        co_return;
    }
    // Done however it ends (even by an exception): the writer waits for it below.
    asio::co_spawn(executor, read_input(c, ws, h, wake), [&h, &wake](const std::exception_ptr&) {
        h.reader_done = true;
        wake.cancel();
    });
    for (;;) {
        if (x.stopping()) break;
        if (!h.replies.empty()) {
            const std::string reply = std::move(h.replies.front());
            h.replies.pop_front();
            ws.text(true);
            if (auto [ec, n] = co_await ws.async_write(asio::buffer(reply), ws_done); ec) break;
            continue;
        }
        next_step next = co_await c.off_io([&] { return decide(c, h, sent); });
        if (next.what == next_step::send_output) {
            ws.binary(true);
            const std::string frame = binary_frame(next.piece.channel, next.piece.bytes);
            if (auto [ec, n] = co_await ws.async_write(asio::buffer(frame), ws_done); ec) break;
            sent = next.piece.offset + static_cast<std::int64_t>(next.piece.bytes.size());
            continue;
        }
        // Only once the output so far is sent: the input's echo may have been sent before the
        // reader marked the input seen (it types on a worker), and no more output may come.
        if (fault && h.input_seen) {
            if (*fault == testing::fault::action::oom_kill) fail_sandbox(c, h.sandbox_id, c.profile.oom_killed);
            co_await misbehave(ws, *fault);
            break;
        }
        if (next.what == next_step::exited) {
            ws.text(true);
            if (auto [ec, n] = co_await ws.async_write(asio::buffer(exit_frame(next.exit_code)), ws_done); !ec) {
                co_await ws.async_close(websocket::close_reason(websocket::close_code::normal, "process exited"),
                                        ws_done);
            }
            break;
        }
        if (next.what == next_step::taken_over) {
            co_await ws.async_close(taken_over_close(), ws_done);
            break;
        }
        if (next.what == next_step::sandbox_gone || h.reader_done) break;  // its pod went: no close frame
        wake.expires_after(writer_step);
        co_await wake.async_wait(ws_done);
    }
    // The reader holds `ws`: it must end before the session does.
    boost::system::error_code ignored;
    boost::beast::get_lowest_layer(ws).socket().shutdown(tcp::socket::shutdown_both, ignored);
    while (!h.reader_done) {
        wake.expires_after(std::chrono::milliseconds(1));
        co_await wake.async_wait(ws_done);
    }
}

// The upgrade and the session over whichever stream the connection is (TCP or TLS).
template <class Next>
awaitable<void> upgrade_and_hold(context& c, exchange& x, Next& next, holding& h, bool takeover, bool pipe,
                                 std::optional<fault::action> fault) {
    websocket::stream<Next&, false> ws(next);  // no permessage-deflate, as execd's gorilla upgrader
    ws.set_option(websocket::stream_base::timeout{
        .handshake_timeout = handshake_within, .idle_timeout = idle_after, .keep_alive_pings = true});
    ws.read_message_max(largest_input);
    auto [accept_error] = co_await ws.async_accept(x.req(), ws_done);
    if (!accept_error) x.take_over();  // mostly waiting on its peer: sheddable at the connection cap
    if (!accept_error && takeover) {
        // Only now that the handshake is accepted: a failed upgrade never evicts anyone.
        (void)c.sandboxes.with_terminals(h.sandbox_id, [&](terminal_map& terminals, const file_tree&) {
            if (const auto it = terminals.find(h.terminal_id); it != terminals.end()) h.holder = *it->second->attach(true);
            return true;
        });
    }
    // The terminal is free as soon as its holder's close arrives, before Beast answers it: a
    // client that re-attaches once its close is answered never meets its own old session.
    ws.control_callback([&](websocket::frame_type kind, boost::beast::string_view) {
        if (kind == websocket::frame_type::close) let_go(c, h);
    });
    if (!accept_error && h.holder != 0) co_await hold(c, x, ws, h, pipe, fault);
    let_go(c, h);
}

awaitable<void> attach_terminal(context& c, exchange& x, call& k) {
    const bool upgrade = websocket::is_upgrade(x.req());
    const bool takeover = query_value(x.req().target(), "takeover") == "1" && upgrade;
    holding h{.sandbox_id = k.sandbox_id, .terminal_id = k.param};
    enum class found { terminal, no_terminal, held };
    const auto tried = c.sandboxes.with_terminals(k.sandbox_id, [&](terminal_map& terminals, const file_tree&) {
        const auto it = terminals.find(k.param);
        if (it == terminals.end()) return found::no_terminal;
        if (const auto holder = it->second->attach(false)) {
            h.holder = *holder;
            return found::terminal;
        }
        return takeover ? found::terminal : found::held;
    });
    if (!tried) {
        co_await x.reply(c.not_found(x, k.sandbox_id));
        co_return;
    }
    if (*tried == found::no_terminal) {
        co_await x.reply(terminal_not_found(c, x, k.param));
        co_return;
    }
    if (*tried == found::held) {
        co_await x.reply(c.error_reply(x, 409, "ALREADY_CONNECTED",
                                       "another client is already connected to pty session " + k.param));
        co_return;
    }
    if (!upgrade) {  // what gorilla's Upgrade answers a plain GET
        let_go(c, h);
        co_await x.reply(c.text_reply(x, 400, "Bad Request\n", "text/plain; charset=utf-8"));
        co_return;
    }
    x.close_connection();
    x.stream().expires_never();  // the WebSocket keeps its own deadlines
    const bool pipe = query_value(x.req().target(), "pty") == "0";
    // The faults a held session acts out (an OOM kill only as a 1011 close: as its backend
    // shows it, the sandbox failed before the route ran).
    std::optional<fault::action> acted_out = k.active_fault ? std::optional(k.active_fault->what) : std::nullopt;
    if (acted_out == fault::action::oom_kill && k.active_fault->shown_as != fault::surface::ws_1011) acted_out.reset();
    co_await x.stream().with(
        [&](auto& next) { return upgrade_and_hold(c, x, next, h, !h.holder, pipe, acted_out); });
}

using v = http::verb;
constexpr std::array terminal_table{
    route{v::post, "/pty", "create_terminal", create_terminal},
    route{v::get, "/pty/{param}", "terminal_status", terminal_status, "/pty/:sessionId", ""},
    route{v::delete_, "/pty/{param}", "delete_terminal", delete_terminal, "/pty/:sessionId", ""},
    route{v::get, "/pty/{param}/ws", "attach_terminal", attach_terminal, "/pty/:sessionId/ws", ""},
};

}  // namespace

std::span<const route> terminal_routes() noexcept { return terminal_table; }

}  // namespace ngfail::opensandbox::testing::detail
