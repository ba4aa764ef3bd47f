// `ngfail serve`'s interactive terminals, over real sockets: the PTY routes and execd's
// WebSocket protocol (binary frames whose first byte is the channel, JSON text frames),
// driven by a WebSocket client that is Beast's, not the ngfail client's.
#include "support/emulator_calls.hpp"
#include "support/latency_probe.hpp"
#include "support/peak_memory.hpp"
#include "support/raw_client.hpp"
#include "support/test_ca.hpp"

#include <boost/asio/ssl.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/time.h>

#include <memory>
#include <optional>
#include <variant>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace websocket = boost::beast::websocket;
using namespace std::chrono_literals;
using ngfail::opensandbox::testing::fault;
using ngfail::opensandbox::testing::server_options;
using ngfail_test::call;
using ngfail_test::create;
using ngfail_test::embedded_server;
using ngfail_test::reply;
using testing::HasSubstr;
namespace http = boost::beast::http;
namespace json = boost::json;

using plain_socket = websocket::stream<asio::ip::tcp::socket>;
using tls_socket = websocket::stream<asio::ssl::stream<asio::ip::tcp::socket>>;

// What a peer reads: a binary frame (its channel byte, its bytes), a text frame, or the
// close (its code and reason; code 1006 when the connection ended without one).
struct frame {
    bool binary = false;
    std::string data{};
    bool closed = false;
    unsigned close_code = 0;
    std::string close_reason{};
    [[nodiscard]] char channel() const { return data.empty() ? '\xff' : data[0]; }
    [[nodiscard]] std::string bytes() const { return data.substr(data[0] == '\x03' ? 9 : 1); }
    [[nodiscard]] json::object object() const { return json::parse(data).as_object(); }
};

// One attached peer, synchronous, with a receive deadline so that no test can hang.
class peer {
    asio::io_context io_;
    std::variant<std::monostate, plain_socket, tls_socket> ws_;
    template <class Op>
    auto with(Op op) {
        if (auto* tls = std::get_if<tls_socket>(&ws_)) return op(*tls);
        return op(std::get<plain_socket>(ws_));
    }

public:
    // Attaches; `refused` holds the HTTP status when the upgrade is declined.
    peer(unsigned short port, const std::string& target, const std::vector<std::pair<std::string, std::string>>& headers = {},
         asio::ssl::context* tls = nullptr) {
        asio::ip::tcp::socket socket(io_);
        socket.connect({asio::ip::make_address("127.0.0.1"), port});
        const timeval tv{.tv_sec = 5, .tv_usec = 0};
        ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        if (tls) {
            auto& s = ws_.emplace<tls_socket>(std::move(socket), *tls);
            s.next_layer().set_verify_mode(asio::ssl::verify_peer);
            s.next_layer().handshake(asio::ssl::stream_base::client);
        } else {
            ws_.emplace<plain_socket>(std::move(socket));
        }
        std::visit(
            [&](auto& ws) {
                if constexpr (!std::is_same_v<std::decay_t<decltype(ws)>, std::monostate>) {
                    ws.set_option(websocket::stream_base::decorator([headers](websocket::request_type& req) {
                        for (const auto& [name, value] : headers) req.set(name, value);
                    }));
                    websocket::response_type res;
                    boost::system::error_code ec;
                    ws.handshake(res, "127.0.0.1", target, ec);
                    if (ec) refused = res.result_int();
                }
            },
            ws_);
    }

    std::optional<unsigned> refused{};

    frame read() {
        return with([&](auto& ws) {
            boost::beast::flat_buffer buffer;
            boost::system::error_code ec;
            ws.read(buffer, ec);
            frame f;
            if (ec) {
                f.closed = true;
                f.close_code = ec == websocket::error::closed ? ws.reason().code : 1006;
                f.close_reason = std::string(ws.reason().reason.c_str());
                return f;
            }
            f.binary = ws.got_binary();
            f.data = boost::beast::buffers_to_string(buffer.data());
            return f;
        });
    }
    // Output (stdout and stderr frames) until it contains `wanted`; the close if it comes first.
    std::string read_until(std::string_view wanted) {
        std::string seen;
        while (seen.find(wanted) == std::string::npos) {
            const frame f = read();
            if (f.closed) return seen + "<closed " + std::to_string(f.close_code) + ">";
            if (f.binary && (f.channel() == '\x01' || f.channel() == '\x02')) seen += f.bytes();
        }
        return seen;
    }
    // The next frame that is not output.
    frame read_not_output() {
        for (;;) {
            frame f = read();
            if (f.closed || !f.binary) return f;
        }
    }
    void type(std::string_view text) { send(true, std::string(1, '\0') + std::string(text)); }
    void send_text(std::string_view text) { send(false, std::string(text)); }
    void close() {
        with([](auto& ws) {
            boost::system::error_code ec;
            ws.close(websocket::close_code::normal, ec);
            return 0;
        });
    }

private:
    void send(bool binary, const std::string& data) {
        with([&](auto& ws) {
            ws.binary(binary);
            boost::system::error_code ec;
            ws.write(asio::buffer(data), ec);
            return 0;
        });
    }
};

struct fixture {
    explicit fixture(server_options o = {}) : server(std::move(o)), sandbox(create(server)) {}
    embedded_server server;
    std::string sandbox;
    [[nodiscard]] std::string execd() const { return "/sandboxes/" + sandbox + "/proxy/44772"; }
    std::string new_terminal(const std::string& body = "") {
        const auto r = call(server.port(), http::verb::post, execd() + "/pty", body);
        EXPECT_EQ(r.status, 201u) << r.body;
        return std::string(r.object().at("session_id").as_string());
    }
    [[nodiscard]] std::string ws(const std::string& terminal, const std::string& query = "") const {
        return execd() + "/pty/" + terminal + "/ws" + (query.empty() ? "" : "?" + query);
    }
    reply status(const std::string& terminal) {
        return call(server.port(), http::verb::get, execd() + "/pty/" + terminal);
    }
};

// The first frames of an attach: the replay (when there is output to catch up on), then
// `connected`.
std::optional<frame> connect(peer& p, std::string_view mode = "pty") {
    std::optional<frame> replay;
    frame f = p.read();
    if (f.binary && f.channel() == '\x03') {
        replay = f;
        f = p.read();
    }
    EXPECT_FALSE(f.binary);
    EXPECT_EQ(f.object().at("type"), "connected");
    EXPECT_EQ(f.object().at("mode"), json::value(mode));
    return replay;
}

TEST(terminal_routes, create_type_read_resize_detach_and_replay_from_an_offset) {
    fixture f;
    const std::string id = f.new_terminal(R"({"cwd":"/work"})");
    auto before = f.status(id).object();
    EXPECT_EQ(before.at("running"), false) << "the shell starts with the first attach";
    EXPECT_EQ(before.at("output_offset"), 0);
    {
        peer p(f.server.port(), f.ws(id));
        ASSERT_FALSE(p.refused);
        EXPECT_FALSE(connect(p)) << "nothing to replay yet";
        EXPECT_EQ(p.read_until("$ "), "$ ");
        p.type("echo hi\r");
        EXPECT_EQ(p.read_until("hi\r\n$ "), "echo hi\r\nhi\r\n$ ");
        p.send_text(R"({"type":"resize","cols":120,"rows":40})");
        p.type("stty size\rpwd\r");
        EXPECT_THAT(p.read_until("/work\r\n$ "), HasSubstr("40 120\r\n"));
        p.close();
    }
    const auto after = f.status(id).object();
    EXPECT_EQ(after.at("running"), true) << "the shell outlives its holder";
    const std::int64_t offset = after.at("output_offset").as_int64();
    EXPECT_GT(offset, 20);
    peer again(f.server.port(), f.ws(id, "since=2"));
    const auto replay = connect(again);
    ASSERT_TRUE(replay);
    const std::string& r = replay->data;
    std::int64_t from = 0;
    for (int i = 1; i <= 8; ++i) from = from << 8 | static_cast<unsigned char>(r[static_cast<std::size_t>(i)]);
    EXPECT_EQ(from, 2) << "the 8-byte big-endian offset of its first byte";
    EXPECT_EQ(replay->bytes().size(), static_cast<std::size_t>(offset - 2));
    EXPECT_THAT(replay->bytes(), testing::StartsWith("echo hi"));
    again.type("echo back\r");
    EXPECT_THAT(again.read_until("back\r\n$ "), HasSubstr("back"));
}

TEST(terminal_routes, one_holder_a_second_attach_is_a_409_and_a_takeover_closes_the_first_with_4001) {
    fixture f;
    const std::string id = f.new_terminal();
    peer first(f.server.port(), f.ws(id));
    connect(first);
    first.type("echo one\r");
    first.read_until("one\r\n$ ");
    peer second(f.server.port(), f.ws(id));
    EXPECT_EQ(second.refused, 409u) << "refused before the upgrade";
    const auto conflict = call(f.server.port(), http::verb::get, f.ws(id));
    EXPECT_EQ(conflict.status, 409u);
    EXPECT_EQ(conflict.object().at("code"), "ALREADY_CONNECTED");
    peer third(f.server.port(), f.ws(id, "takeover=1&since=0"));
    ASSERT_FALSE(third.refused);
    const auto replay = connect(third);
    ASSERT_TRUE(replay);
    EXPECT_THAT(replay->bytes(), HasSubstr("one")) << "the same shell, its history replayed";
    const frame evicted = first.read_not_output();
    EXPECT_TRUE(evicted.closed);
    EXPECT_EQ(evicted.close_code, 4001u);
    EXPECT_EQ(evicted.close_reason, "TAKEN_OVER");
    third.type("echo three\r");
    EXPECT_THAT(third.read_until("three\r\n$ "), HasSubstr("three"));
}

TEST(terminal_routes, the_shells_exit_is_an_exit_frame_then_a_normal_close) {
    fixture f;
    const std::string id = f.new_terminal();
    peer p(f.server.port(), f.ws(id));
    connect(p);
    p.type("exit 3\r");
    const frame exit = p.read_not_output();
    ASSERT_FALSE(exit.closed);
    EXPECT_EQ(exit.object().at("type"), "exit");
    EXPECT_EQ(exit.object().at("exit_code"), 3);
    const frame closed = p.read_not_output();
    EXPECT_TRUE(closed.closed);
    EXPECT_EQ(closed.close_code, 1000u);
    EXPECT_EQ(f.status(id).object().at("running"), false);
}

TEST(terminal_routes, a_deleted_terminal_exits_minus_one_for_its_holder_and_is_then_gone) {
    fixture f;
    const std::string id = f.new_terminal();
    peer p(f.server.port(), f.ws(id));
    connect(p);
    EXPECT_EQ(call(f.server.port(), http::verb::delete_, f.execd() + "/pty/" + id).status, 200u);
    const frame exit = p.read_not_output();
    ASSERT_FALSE(exit.closed);
    EXPECT_EQ(exit.object().at("exit_code"), -1);
    EXPECT_TRUE(p.read_not_output().closed);
    const auto gone = f.status(id);
    EXPECT_EQ(gone.status, 404u);
    EXPECT_EQ(gone.object().at("code"), "CONTEXT_NOT_FOUND");
    peer late(f.server.port(), f.ws(id));
    EXPECT_EQ(late.refused, 404u);
    EXPECT_EQ(call(f.server.port(), http::verb::delete_, f.execd() + "/pty/" + id).status, 404u);
}

TEST(terminal_routes, pipe_mode_splits_stderr_into_its_own_frames) {
    fixture f;
    const std::string id = f.new_terminal();
    peer p(f.server.port(), f.ws(id, "pty=0"));
    connect(p, "pipe");
    p.type("cat /missing\n");
    const frame err = p.read();
    ASSERT_TRUE(err.binary);
    EXPECT_EQ(err.channel(), '\x02');
    EXPECT_THAT(err.bytes(), HasSubstr("/missing"));
    p.type("echo out\n");
    const frame out = p.read();
    EXPECT_EQ(out.channel(), '\x01');
    EXPECT_EQ(out.bytes(), "out\n") << "no echo, no prompt in a pipe";
}

TEST(terminal_routes, json_frames_ping_stdin_signal_and_an_unknown_type) {
    fixture f;
    const std::string id = f.new_terminal();
    peer p(f.server.port(), f.ws(id));
    connect(p);
    p.send_text(R"({"type":"ping"})");
    EXPECT_EQ(p.read_not_output().object().at("type"), "pong");
    p.send_text(R"({"type":"stdin","data":"sleep 30\r"})");
    p.read_until("sleep 30\r\n");
    p.send_text(R"({"type":"signal","signal":"SIGINT"})");
    p.read_until("$ ");
    p.send_text("not json");  // ignored, as execd ignores it
    p.send_text(R"({"type":"dance"})");
    const frame error = p.read_not_output();
    EXPECT_EQ(error.object().at("type"), "error");
    EXPECT_EQ(error.object().at("code"), "INVALID_FRAME");
}

TEST(terminal_routes, a_terminal_needs_its_sandboxs_token_and_is_reached_through_its_own_sandbox_only) {
    fixture f;
    const std::string secure = create(f.server, R"(,"secureAccess":true)");
    const auto endpoint =
        call(f.server.port(), http::verb::get, "/v1/sandboxes/" + secure + "/endpoints/44772?use_server_proxy=true");
    const std::string token(endpoint.object().at("headers").at("X-EXECD-ACCESS-TOKEN").as_string());
    const std::string execd = "/sandboxes/" + secure + "/proxy/44772";
    const auto made = call(f.server.port(), http::verb::post, execd + "/pty", "", {{"X-EXECD-ACCESS-TOKEN", token}});
    ASSERT_EQ(made.status, 201u);
    const std::string id(made.object().at("session_id").as_string());
    EXPECT_EQ(peer(f.server.port(), execd + "/pty/" + id + "/ws").refused, 401u);
    EXPECT_EQ(peer(f.server.port(), f.ws(id)).refused, 404u) << "another sandbox does not know it";
    peer p(f.server.port(), execd + "/pty/" + id + "/ws", {{"X-EXECD-ACCESS-TOKEN", token}});
    ASSERT_FALSE(p.refused);
    connect(p);
}

TEST(terminal_routes, a_direct_endpoint_carries_the_same_protocol) {
    fixture f;
    const std::string execd = "/sandboxes/" + f.sandbox + "/port/44772";
    const unsigned short port = f.server.direct_port();
    const auto made = call(port, http::verb::post, execd + "/pty");
    ASSERT_EQ(made.status, 201u) << made.body;
    peer p(port, execd + "/pty/" + std::string(made.object().at("session_id").as_string()) + "/ws");
    ASSERT_FALSE(p.refused);
    connect(p);
    p.type("echo direct\r");
    EXPECT_THAT(p.read_until("direct\r\n$ "), HasSubstr("direct"));
}

// One request over HTTPS, trusting the tests' own CA.
reply tls_call(unsigned short port, http::verb verb, const std::string& target, asio::ssl::context& tls) {
    asio::io_context io;
    asio::ssl::stream<asio::ip::tcp::socket> s(io, tls);
    s.next_layer().connect({asio::ip::make_address("127.0.0.1"), port});
    s.set_verify_mode(asio::ssl::verify_peer);
    s.handshake(asio::ssl::stream_base::client);
    http::request<http::string_body> req(verb, target, 11);
    req.set(http::field::host, "127.0.0.1");
    if (verb == http::verb::post) {
        req.set(http::field::content_type, "application/json");
        req.body() = target.ends_with("/v1/sandboxes") ? R"({"image":{"uri":"p"},"entrypoint":["x"]})" : "";
    }
    req.prepare_payload();
    http::write(s, req);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(s, buffer, res);
    return {res.result_int(), res.body(), res.base()};
}

TEST(terminal_routes, over_tls_the_websocket_is_wss) {
    embedded_server s({.tls_certificate_file = ngfail_test::ca().file("server.pem"),
                       .tls_key_file = ngfail_test::ca().file("server.key")});
    asio::ssl::context tls(asio::ssl::context::tls_client);
    tls.load_verify_file(ngfail_test::ca().file("ca.pem"));
    const auto sandbox = tls_call(s.port(), http::verb::post, "/v1/sandboxes", tls);
    ASSERT_EQ(sandbox.status, 202u) << sandbox.body;
    const std::string execd = "/sandboxes/" + std::string(sandbox.object().at("id").as_string()) + "/proxy/44772";
    const auto made = tls_call(s.port(), http::verb::post, execd + "/pty", tls);
    ASSERT_EQ(made.status, 201u) << made.body;
    peer p(s.port(), execd + "/pty/" + std::string(made.object().at("session_id").as_string()) + "/ws", {}, &tls);
    ASSERT_FALSE(p.refused);
    connect(p);
    p.type("echo secret-free\r");
    EXPECT_THAT(p.read_until("secret-free\r\n$ "), HasSubstr("secret-free"));
    p.type("exit\r");
    EXPECT_EQ(p.read_not_output().object().at("exit_code"), 0);
    EXPECT_EQ(p.read_not_output().close_code, 1000u);
}

// ---- faults --------------------------------------------------------------------------------------

// The peer's first input has its output; then the fault acts.
frame after_first_input(fixture& f, fault::action what) {
    f.server.inject({.operation = "attach_terminal", .what = what});
    const std::string id = f.new_terminal();
    peer p(f.server.port(), f.ws(id));
    connect(p);
    p.type("echo before\r");
    for (;;) {
        frame next = p.read();
        if (next.closed) return next;
    }
}

TEST(terminal_faults, taken_over_closes_with_4001_and_policy_close_with_1008) {
    fixture f;
    const frame taken = after_first_input(f, fault::action::taken_over);
    EXPECT_EQ(taken.close_code, 4001u);
    EXPECT_EQ(taken.close_reason, "TAKEN_OVER");
    const frame policy = after_first_input(f, fault::action::policy_close);
    EXPECT_EQ(policy.close_code, 1008u);
}

TEST(terminal_faults, drop_mid_frame_ends_the_connection_inside_a_frame) {
    fixture f;
    const frame dropped = after_first_input(f, fault::action::drop_mid_frame);
    EXPECT_EQ(dropped.close_code, 1006u) << "no close frame: the connection ended";
}

TEST(terminal_faults, an_attach_refused_with_an_http_error_before_the_upgrade) {
    fixture f;
    f.server.inject(fault::http_error("attach_terminal", 502, "BACKEND_CONNECTION_FAILED", "upstream reset"));
    const std::string id = f.new_terminal();
    EXPECT_EQ(peer(f.server.port(), f.ws(id)).refused, 502u);
    peer p(f.server.port(), f.ws(id));
    EXPECT_FALSE(p.refused) << "the fault was taken once";
}

// ---- bounds ---------------------------------------------------------------------------------------

TEST(terminal_bounds, a_sandbox_holds_a_bounded_number_of_terminals) {
    fixture f;
    for (int i = 0; i < 32; ++i) f.new_terminal();
    const auto one_more = call(f.server.port(), http::verb::post, f.execd() + "/pty");
    EXPECT_EQ(one_more.status, 500u);
    EXPECT_EQ(one_more.object().at("code"), "RUNTIME_ERROR");
}

TEST(terminal_bounds, a_holder_that_never_reads_holds_neither_memory_nor_a_thread) {
    fixture f({.threads = 1});
    const std::string id = f.new_terminal();
    peer p(f.server.port(), f.ws(id, "pty=0"));
    connect(p, "pipe");
    const long before = ngfail_test::peak_rss_kib();
    const std::string line = "echo " + std::string(60 * 1024, 'y') + "\n";
    // 96 lines of 60 KiB each: 5.6 MiB of output that the peer never reads.
    for (int i = 0; i < 96; ++i) p.type(line);
    const std::int64_t everything = 96 * 60 * 1024;
    std::int64_t run = 0;
    // The server takes the input in while its writes to the peer wait (slowly under a sanitizer).
    for (int i = 0; i < 500 && run < everything; ++i) {
        EXPECT_EQ(call(f.server.port(), http::verb::get, "/health").status, 200u) << "the one thread still serves";
        run = f.status(id).object().at("output_offset").as_int64();
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_GE(run, everything) << "all of it was run";
    if (!ngfail_test::instrumented) {
        EXPECT_LT(ngfail_test::peak_rss_kib() - before, 16 * 1024) << "KiB held for a peer that does not read";
    }
}

TEST(terminal_bounds, idle_terminals_make_room_for_newcomers_at_the_connection_cap) {
    fixture f({.max_connections = 4});
    std::vector<std::unique_ptr<peer>> holders;
    for (int i = 0; i < 4; ++i) {
        holders.push_back(std::make_unique<peer>(f.server.port(), f.ws(f.new_terminal())));
        ASSERT_FALSE(holders.back()->refused);
        connect(*holders.back());
    }
    // Four WebSockets that only ping held every place: /health was refused for as long as they stayed.
    const std::string answer =
        ngfail_test::exchange_raw(f.server.port(), "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5s);
    EXPECT_THAT(answer, testing::StartsWith("HTTP/1.1 200"));
    EXPECT_TRUE(holders.front()->read_until("<closed").ends_with("<closed 1006>")) << "the oldest was shed";
}

TEST(terminal_bounds, a_terminal_catting_a_large_file_never_delays_another_sandbox) {
    fixture f;
    const std::string other = create(f.server);
    const std::string file(16 << 20, 'c');
    const std::string form = "--b\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n{\"path\":\"/big\"}\r\n"
                             "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\n" +
                             file + "\r\n--b--\r\n";
    ASSERT_EQ(call(f.server.port(), http::verb::post, f.execd() + "/files/upload", form,
                   {{"Content-Type", "multipart/form-data; boundary=b"}})
                  .status,
              200u);
    const std::string id = f.new_terminal();
    peer p(f.server.port(), f.ws(id, "pty=0"));
    connect(p, "pipe");
    const auto quiet = ngfail_test::quiet_wait(
        f.server.port(), {"/v1/sandboxes/" + other, "/sandboxes/" + other + "/proxy/44772/ping"});
    ngfail_test::latency_probe lifecycle(f.server.port(), "/v1/sandboxes/" + other);
    ngfail_test::latency_probe its_execd(f.server.port(), "/sandboxes/" + other + "/proxy/44772/ping");
    // One 700-byte message: 100 lines, each printing 16 MiB (each line's output copied twice,
    // under the lock every sandbox shared, held another sandbox's GET 8-10 s). A quarter of
    // them under a sanitizer: ThreadSanitizer's copies of 1.6 GB outlasted the WebSocket's
    // 60 s of silence on a slow hour.
    std::string lines;
    for (std::size_t i = 0; i < ngfail_test::scaled(100); ++i) lines += "cat /big\n";
    p.type(lines + "echo finished\n");
    EXPECT_THAT(p.read_until("finished\n"), HasSubstr("finished\n"));
    const auto longest = std::max(lifecycle.stop(), its_execd.stop());
    EXPECT_EQ(lifecycle.failed() + its_execd.failed(), 0);
    EXPECT_LE(longest - quiet, ngfail_test::longest_allowed_wait) << "quiet, the probes waited " << quiet.count() << " ms";
}

}  // namespace
