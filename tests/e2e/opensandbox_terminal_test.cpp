// The client's interactive terminals against `ngfail serve`, over real sockets, on every
// transport (HTTP and HTTPS, the server proxy and direct endpoints): create, attach, type,
// read, resize, detach, re-attach with replay, a takeover, delete; and each fault the
// emulator injects, classified by its row of the evidence table.
#include "support/emulator_calls.hpp"
#include "support/peak_memory.hpp"
#include "support/raw_server.hpp"
#include "support/terminal_reads.hpp"
#include "support/transports.hpp"

#include <ngfail/opensandbox/client.hpp>
#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/websocket.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using namespace std::chrono_literals;
using ngfail::delivery;
using ngfail::kind;
using ngfail::opensandbox::attach_options;
using ngfail::opensandbox::client;
using ngfail::opensandbox::embedded_server;
using ngfail::opensandbox::fault;
using ngfail::opensandbox::terminal_event;
using ngfail::opensandbox::terminal_exit;
using ngfail::opensandbox::terminal_output;
using ngfail::opensandbox::terminal_session;
using ngfail::opensandbox::terminal_stream;
using testing::HasSubstr;

constexpr std::string_view secret = "sk-terminal-SECRET-99";

using ngfail_test::transport;

class terminals : public testing::TestWithParam<transport> {
protected:
    static ngfail::opensandbox::server_options server_options() {
        return ngfail_test::serving(GetParam(), {.api_key = std::string(secret)});
    }
    [[nodiscard]] ngfail::opensandbox::client_options options() const {
        return ngfail_test::reaching(GetParam(), server.port(), {.api_key = std::string(secret), .timeout = 5s});
    }

    embedded_server server{server_options()};
    client sandboxes{options()};
    std::string box = sandboxes.create({}).id;
};

const ngfail::sandbox_details& details_of(const ngfail::failure& f) { return std::get<ngfail::sandbox_details>(f.details()); }

using ngfail_test::read_until;

// The next event that is not output.
ngfail::result<terminal_event> next_not_output(terminal_session& t) {
    for (;;) {
        auto event = t.try_read();
        if (!event || !std::holds_alternative<terminal_output>(event.value())) return event;
    }
}

TEST_P(terminals, create_attach_type_resize_detach_and_reattach_with_replay) {
    const std::string id = sandboxes.create_terminal(box, {.cwd = "/work"});
    EXPECT_FALSE(sandboxes.terminal_status(box, id).running);
    std::int64_t seen_up_to = 0;
    {
        terminal_session t = sandboxes.attach_terminal(box, id);
        EXPECT_EQ(t.terminal_id(), id);
        EXPECT_EQ(t.mode(), "pty");
        EXPECT_EQ(read_until(t, "$ "), "$ ");
        t.write("echo hello\r");
        EXPECT_EQ(read_until(t, "hello\r\n$ "), "echo hello\r\nhello\r\n$ ");
        t.resize(100, 30);
        t.write("stty size\r");
        EXPECT_THAT(read_until(t, "30 100\r\n$ "), HasSubstr("30 100"));
        seen_up_to = t.offset();
        t.detach();
        EXPECT_EQ(t.try_read().error().code(), kind::cancelled) << "a detached session reads nothing more";
    }
    const auto status = sandboxes.terminal_status(box, id);
    EXPECT_TRUE(status.running) << "the shell outlives its holder";
    EXPECT_EQ(status.output_offset, seen_up_to);
    terminal_session again = sandboxes.attach_terminal(box, id, {.since = 2});
    const terminal_event first = again.read();
    const auto& replay = std::get<terminal_output>(first);
    EXPECT_EQ(replay.stream, terminal_stream::replay);
    EXPECT_EQ(replay.offset, 2);
    EXPECT_THAT(replay.bytes, testing::StartsWith("echo hello"));
    EXPECT_EQ(again.offset(), seen_up_to);
    again.write("exit 5\r");
    const auto exit = next_not_output(again);
    ASSERT_TRUE(exit) << exit.error().what();
    EXPECT_EQ(std::get<terminal_exit>(exit.value()).exit_code, 5);
    EXPECT_EQ(std::get<terminal_exit>(again.read()).exit_code, 5) << "the exit, again";
    sandboxes.delete_terminal(box, id);
    const auto gone = sandboxes.try_terminal_status(box, id);
    ASSERT_FALSE(gone);
    EXPECT_EQ(gone.error().code(), kind::session_lost);
    EXPECT_EQ(details_of(gone.error()).delivery, delivery::not_sent);
}

TEST_P(terminals, a_second_attach_is_refused_and_a_takeover_ends_the_first) {
    const std::string id = sandboxes.create_terminal(box);
    terminal_session first = sandboxes.attach_terminal(box, id);
    first.write("echo mine\r");
    read_until(first, "mine\r\n$ ");
    const auto refused = sandboxes.try_attach_terminal(box, id);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), kind::provider_state_conflict);
    EXPECT_EQ(details_of(refused.error()).delivery, delivery::not_sent) << "refused before the upgrade";
    terminal_session second = sandboxes.attach_terminal(box, id, {.takeover = true, .since = 0});
    EXPECT_THAT(std::get<terminal_output>(second.read()).bytes, HasSubstr("mine")) << "the same shell";
    const auto lost = next_not_output(first);
    ASSERT_FALSE(lost);
    EXPECT_EQ(lost.error().code(), kind::provider_state_conflict);
    EXPECT_EQ(details_of(lost.error()).delivery, delivery::possibly_delivered) << "it had written input";
    EXPECT_THAT(std::string(lost.error().reason()),
                HasSubstr("closed with code 4001: another client took the terminal over (TAKEN_OVER)"))
        << "the first sees the close code, and what it means";
    EXPECT_THAT(std::string(lost.error().reason()), testing::Not(HasSubstr("mid-exchange")))
        << "a takeover is not a connection lost mid-exchange";
    EXPECT_EQ(first.try_write("more\r").error().code(), kind::provider_state_conflict) << "and says so again";
    second.write("echo yours\r");
    EXPECT_THAT(read_until(second, "yours\r\n$ "), HasSubstr("yours"));
}

TEST_P(terminals, a_deleted_terminal_ends_its_session_with_exit_minus_one) {
    const std::string id = sandboxes.create_terminal(box);
    terminal_session t = sandboxes.attach_terminal(box, id);
    sandboxes.delete_terminal(box, id);
    const auto exit = next_not_output(t);
    ASSERT_TRUE(exit) << exit.error().what();
    EXPECT_EQ(std::get<terminal_exit>(exit.value()).exit_code, -1);
    const auto gone = sandboxes.try_attach_terminal(box, id);
    EXPECT_EQ(gone.error().code(), kind::session_lost);
    EXPECT_EQ(details_of(gone.error()).delivery, delivery::not_sent);
}

TEST_P(terminals, a_read_pending_while_the_session_detaches_ends_as_cancelled) {
    const std::string id = sandboxes.create_terminal(box);
    terminal_session t = sandboxes.attach_terminal(box, id);
    read_until(t, "$ ");
    std::promise<ngfail::result<terminal_event>> pending;
    t.async_read([&](ngfail::result<terminal_event> r) { pending.set_value(std::move(r)); });
    t.detach();
    const auto r = pending.get_future().get();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), kind::cancelled) << r.error().what();
    EXPECT_TRUE(sandboxes.terminal_status(box, id).running);
}

TEST_P(terminals, pipe_mode_reads_stderr_apart) {
    const std::string id = sandboxes.create_terminal(box);
    terminal_session t = sandboxes.attach_terminal(box, id, {.pipe = true});
    EXPECT_EQ(t.mode(), "pipe");
    t.write("cat /missing\n");
    const auto err = std::get<terminal_output>(t.read());
    EXPECT_EQ(err.stream, terminal_stream::stderr_bytes);
    EXPECT_THAT(err.bytes, HasSubstr("/missing"));
}

// Each fault of the attach, met after the first input's output, by its row.
struct fault_case {
    fault::action what;
    kind k;
};

TEST_P(terminals, each_mid_session_fault_is_classified_by_its_row) {
    for (const fault_case c : {fault_case{fault::action::taken_over, kind::provider_state_conflict},
                               fault_case{fault::action::policy_close, kind::provider_request_rejected},
                               fault_case{fault::action::drop_mid_frame, kind::transport_peer_drop}}) {
        server.inject({.operation = "attach_terminal", .what = c.what});
        const std::string id = sandboxes.create_terminal(box);
        terminal_session t = sandboxes.attach_terminal(box, id);
        t.write("echo x\r");
        const auto failed = next_not_output(t);
        ASSERT_FALSE(failed) << ngfail::name(c.k);
        EXPECT_EQ(failed.error().code(), c.k) << failed.error().what();
        EXPECT_EQ(details_of(failed.error()).delivery, delivery::possibly_delivered) << "input was written";
        EXPECT_EQ(details_of(failed.error()).operation, "attach_terminal");
        EXPECT_THAT(failed.error().what(), testing::Not(HasSubstr(secret)));
    }
}

TEST_P(terminals, an_attach_refused_before_the_upgrade_is_not_sent) {
    server.inject(fault::http_error("attach_terminal", 503, "UNAVAILABLE", "not yet"));
    const std::string id = sandboxes.create_terminal(box);
    const auto refused = sandboxes.try_attach_terminal(box, id);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), kind::provider_unavailable);
    EXPECT_EQ(refused.error().http_status(), 503);
    EXPECT_TRUE(sandboxes.try_attach_terminal(box, id)) << "the fault was taken once";
}

TEST_P(terminals, the_async_face_with_a_callback_and_use_awaitable) {
    const std::string id = sandboxes.create_terminal(box);
    std::promise<ngfail::result<terminal_session>> attached;
    sandboxes.async_attach_terminal(box, id, {}, {}, [&](ngfail::result<terminal_session> r) {
        attached.set_value(std::move(r));
    });
    auto session = attached.get_future().get();
    ASSERT_TRUE(session) << session.error().what();
    terminal_session& t = session.value();
    boost::asio::io_context io;
    auto done = boost::asio::co_spawn(
        io,
        [&]() -> boost::asio::awaitable<std::string> {
            std::string seen;
            if (!co_await t.async_write("echo async\r")) co_return "write failed";
            while (seen.find("async\r\n$ ") == std::string::npos) {
                auto event = co_await t.async_read();
                if (!event) co_return "read failed";
                if (const auto* out = std::get_if<terminal_output>(&event.value())) seen += out->bytes;
            }
            co_return seen;
        },
        boost::asio::use_future);
    io.run_for(10s);
    EXPECT_TRUE(io.stopped()) << "the session's pings and deadlines keep no work on the caller's io_context";
    EXPECT_THAT(done.get(), HasSubstr("echo async\r\nasync\r\n"));
    auto detached = t.async_detach(boost::asio::use_future);
    EXPECT_TRUE(detached.get());
}

// A sandbox with secure access: its execd wants the endpoint's token on the WebSocket's
// upgrade too, through the server proxy and a direct endpoint alike.
TEST(terminal_token, the_websocket_carries_the_endpoints_token) {
    embedded_server server({.api_key = std::string(secret)});
    const auto made = ngfail_test::call(server.port(), boost::beast::http::verb::post, "/v1/sandboxes",
                                        R"({"image":{"uri":"p"},"entrypoint":["x"],"secureAccess":true})",
                                        {{"OPEN-SANDBOX-API-KEY", std::string(secret)}});
    ASSERT_EQ(made.status, 202u) << made.body;
    const std::string secure(made.object().at("id").as_string());
    for (const bool proxy : {true, false}) {
        client sandboxes({.port = server.port(), .api_key = std::string(secret), .use_server_proxy = proxy});
        const std::string id = sandboxes.create_terminal(secure);
        terminal_session t = sandboxes.attach_terminal(secure, id);  // a 401 without the token
        t.write("echo token\r");
        EXPECT_THAT(read_until(t, "token\r\n$ "), HasSubstr("token")) << proxy;
    }
}

// ---- a hostile terminal server ----------------------------------------------------------------

using hostile_socket = boost::beast::websocket::stream<boost::asio::ip::tcp::socket>;

// execd as a test makes it: sandbox sbx-1's endpoint, then on the terminal's WebSocket the
// frames `session` sends (Beast on the accepted connection); the connection stays until the
// client goes.
class hostile_terminal {
public:
    using session = std::function<void(hostile_socket&)>;

    explicit hostile_terminal(session s)
        : server_([this, s = std::move(s)](int fd, const std::string& head) {
              using ngfail_test::raw_server;
              if (head.starts_with("GET /v1/sandboxes/sbx-1/endpoints/")) {
                  raw_server::send_all(fd, raw_server::reply("200 OK", R"({"endpoint":"127.0.0.1:)" +
                                                                           std::to_string(server_.port()) + R"(/x"})"));
                  return;
              }
              boost::asio::io_context io;
              boost::beast::error_code ec;
              boost::asio::ip::tcp::socket socket(io, boost::asio::ip::tcp::v4(), ::dup(fd));
              boost::beast::http::request_parser<boost::beast::http::empty_body> upgrade;
              upgrade.put(boost::asio::buffer(head + "\r\n\r\n"), ec);
              hostile_socket ws(std::move(socket));
              ws.accept(upgrade.get(), ec);
              if (ec) return;
              s(ws);
              boost::beast::flat_buffer ignored;
              while (!ec) ws.read(ignored, ec);
          }) {}

    [[nodiscard]] unsigned short port() const { return server_.port(); }

    static std::string replay(std::uint64_t offset, std::string_view bytes) {
        std::string frame(1, '\x03');
        for (int shift = 56; shift >= 0; shift -= 8) frame += static_cast<char>(offset >> shift & 0xff);
        return frame.append(bytes);
    }
    static void send(hostile_socket& ws, std::string_view frame, bool binary = true) {
        boost::beast::error_code ec;
        ws.binary(binary);
        ws.write(boost::asio::buffer(frame), ec);
    }
    static void connected(hostile_socket& ws) { send(ws, R"({"type":"connected","mode":"pty"})", false); }
    static void exit(hostile_socket& ws) { send(ws, R"({"type":"exit","exit_code":0})", false); }

private:
    ngfail_test::raw_server server_;
};

// The replay frames read before the exit, in order.
std::vector<terminal_output> replayed(terminal_session& t) {
    std::vector<terminal_output> got;
    for (;;) {
        auto event = t.try_read();
        if (!event || !std::holds_alternative<terminal_output>(event.value())) return got;
        got.push_back(std::get<terminal_output>(std::move(event.value())));
    }
}

std::size_t bytes_in(const std::vector<terminal_output>& outputs) {
    std::size_t n = 0;
    for (const auto& o : outputs) n += o.bytes.size();
    return n;
}

// 256 replay frames of 1 MiB before `connected` once took 263 MiB of the client (64 here,
// 66 MiB); it keeps the newest 1 MiB, as execd's own replay buffer would have.
TEST(hostile_terminal_server, replay_before_connected_is_kept_to_its_newest_mebibyte) {
    constexpr std::size_t mebibyte = 1 << 20;
    constexpr std::uint64_t frames = 64;
    hostile_terminal server([](hostile_socket& ws) {
        const std::string chunk(mebibyte, 'r');
        for (std::uint64_t i = 0; i < frames; ++i) hostile_terminal::send(ws, hostile_terminal::replay(i * mebibyte, chunk));
        hostile_terminal::send(ws, hostile_terminal::replay(frames * mebibyte, "tail"));
        hostile_terminal::connected(ws);
        hostile_terminal::exit(ws);
    });
    client c({.port = server.port(), .timeout = 20s});
    const long before = ngfail_test::peak_rss_kib();
    auto attached = c.try_attach_terminal("sbx-1", "t-1");
    ASSERT_TRUE(attached) << attached.error().what();
    const long grown_kib = ngfail_test::peak_rss_kib() - before;
    const auto kept = replayed(attached.value());
    ASSERT_FALSE(kept.empty());
    EXPECT_LE(bytes_in(kept), mebibyte);
    EXPECT_EQ(kept.back().bytes, "tail") << "the newest is kept";
    EXPECT_EQ(kept.front().offset + static_cast<std::int64_t>(bytes_in(kept)),
              static_cast<std::int64_t>(frames * mebibyte + 4))
        << "what is kept is the newest mebibyte, its offsets as sent";
    EXPECT_EQ(attached.value().offset(), static_cast<std::int64_t>(frames * mebibyte + 4));
    EXPECT_LT(grown_kib, 24 << 10) << "the client kept what it was sent";
}

TEST(hostile_terminal_server, replay_before_connected_is_kept_to_its_newest_4096_frames) {
    constexpr std::uint64_t frames = 5000;
    hostile_terminal server([](hostile_socket& ws) {
        for (std::uint64_t i = 0; i < frames; ++i) hostile_terminal::send(ws, hostile_terminal::replay(i, "x"));
        hostile_terminal::connected(ws);
        hostile_terminal::exit(ws);
    });
    client c({.port = server.port(), .timeout = 20s});
    auto attached = c.try_attach_terminal("sbx-1", "t-1");
    ASSERT_TRUE(attached) << attached.error().what();
    const auto kept = replayed(attached.value());
    ASSERT_EQ(kept.size(), 4096u);
    EXPECT_EQ(kept.front().offset, static_cast<std::int64_t>(frames - 4096)) << "the oldest are dropped";
    EXPECT_EQ(kept.back().offset, static_cast<std::int64_t>(frames - 1));
}

// An offset is `offset + size`: a server whose output would pass 2^63 - 1 sends a malformed
// frame, never one that makes the offset negative.
TEST(hostile_terminal_server, output_past_the_largest_offset_is_a_protocol_violation) {
    hostile_terminal server([](hostile_socket& ws) {
        hostile_terminal::send(ws, hostile_terminal::replay(INT64_MAX - 2, "ok"));  // ends at 2^63 - 1
        hostile_terminal::connected(ws);
        hostile_terminal::send(ws, std::string("\x01more", 5));
    });
    client c({.port = server.port(), .timeout = 20s});
    auto attached = c.try_attach_terminal("sbx-1", "t-1");
    ASSERT_TRUE(attached) << attached.error().what();
    terminal_session& t = attached.value();
    EXPECT_EQ(std::get<terminal_output>(t.read()).bytes, "ok");
    EXPECT_EQ(t.offset(), INT64_MAX);
    const auto next = t.try_read();
    ASSERT_FALSE(next) << "live output past the largest offset";
    EXPECT_EQ(next.error().code(), kind::protocol_violation) << next.error().what();
    EXPECT_EQ(t.offset(), INT64_MAX) << "never wrapped";

    hostile_terminal before_connected([](hostile_socket& ws) {
        hostile_terminal::send(ws, hostile_terminal::replay(INT64_MAX - 1, "two"));
        hostile_terminal::connected(ws);
    });
    client d({.port = before_connected.port(), .timeout = 20s});
    const auto refused = d.try_attach_terminal("sbx-1", "t-1");
    ASSERT_FALSE(refused) << "a replay past the largest offset";
    EXPECT_EQ(refused.error().code(), kind::protocol_violation) << refused.error().what();
}

INSTANTIATE_TEST_SUITE_P(transports, terminals, ngfail_test::every_transport, ngfail_test::transport_name);

}  // namespace
