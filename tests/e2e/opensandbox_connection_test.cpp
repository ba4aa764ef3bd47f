// The client's connections against `embedded_server` over real loopback sockets: HTTPS with a
// CA made at test time, keep-alive reuse, the endpoint cache, stream timeouts and output
// callbacks, and the asynchronous face (many execs from one thread, cancellation).
#include "support/test_ca.hpp"

#include <ngfail/opensandbox/client.hpp>
#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using ngfail::delivery;
using ngfail::kind;
using ngfail::opensandbox::client;
using ngfail::opensandbox::client_options;
using ngfail::opensandbox::command;
using ngfail::opensandbox::embedded_server;
using ngfail::opensandbox::fault;
using ngfail::opensandbox::server_options;
using testing::HasSubstr;

using ngfail::delivery_of;

using ngfail_test::ca;

server_options https_server(const std::string& cert = "server") {
    return {.tls_certificate_file = ca().file((cert + ".pem").c_str()),
            .tls_key_file = ca().file((cert + ".key").c_str())};
}

std::string https_url(const embedded_server& s) { return "https://127.0.0.1:" + std::to_string(s.port()); }

// Every operation, end to end, through the endpoint the options ask for.
void every_operation(client& c) {
    const auto box = c.create({});
    EXPECT_EQ(c.get(box.id).state, "Running");
    EXPECT_FALSE(c.list().empty());
    c.ping(box.id);
    EXPECT_EQ(c.exec(box.id, {.command = "echo hi"}).stdout_text, "hi\n");
    const auto started = c.exec(box.id, {.command = "sleep 50", .background = true});
    (void)c.exec_status(box.id, started.execution_id);
    (void)c.exec_logs(box.id, started.execution_id);
    c.interrupt(box.id, started.execution_id);
    c.upload(box.id, "/tmp/a.txt", "bytes");
    EXPECT_EQ(c.download(box.id, "/tmp/a.txt"), "bytes");
    EXPECT_FALSE(c.renew(box.id, "2030-01-01T00:00:00Z").empty());
    EXPECT_FALSE(c.endpoint(box.id).endpoint.empty());
    c.pause(box.id);
    c.resume(box.id);
    c.kill(box.id);
}

TEST(https, every_operation_through_the_proxy_and_direct_endpoints) {
    embedded_server server(https_server());
    for (const bool proxy : {true, false}) {
        client c({.base_url = https_url(server), .use_server_proxy = proxy, .tls = {.ca_file = ca().file("ca.pem")}});
        every_operation(c);
    }
}

TEST(https, a_server_the_system_store_does_not_trust_is_refused_before_anything_is_sent) {
    embedded_server server(https_server());
    client c({.base_url = https_url(server)});
    const auto r = c.try_create({});
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::transport_unreachable) << r.error().what();
    EXPECT_EQ(delivery_of(r.error()), delivery::not_sent);
    EXPECT_EQ(server.requests(), 0u);
}

TEST(https, a_certificate_for_another_name_is_refused) {
    embedded_server server(https_server("other"));
    client c({.base_url = https_url(server), .tls = {.ca_file = ca().file("ca.pem")}});
    const auto r = c.try_list();
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::transport_unreachable) << r.error().what();
    EXPECT_EQ(server.requests(), 0u);
}

TEST(https, verification_is_off_only_when_asked) {
    embedded_server server(https_server("other"));
    client c({.base_url = https_url(server), .tls = {.verify_peer = false}});
    EXPECT_TRUE(c.try_list().has_value());
}

TEST(https, a_plain_client_to_a_tls_server_fails_classified) {
    embedded_server server(https_server());
    client c({.port = server.port(), .timeout = 2s});
    const auto r = c.try_list();
    ASSERT_TRUE(r.has_error());
    EXPECT_NE(r.error().code(), kind::undetermined) << r.error().what();
}

TEST(base_url, takes_the_forms_the_sdks_take) {
    embedded_server server;
    const std::string port = std::to_string(server.port());
    for (const std::string& url : {"http://127.0.0.1:" + port, "127.0.0.1:" + port, "http://127.0.0.1:" + port + "/v1",
                                   "http://127.0.0.1:" + port + "/"}) {
        client c({.base_url = url});
        EXPECT_TRUE(c.try_list().has_value()) << url;
    }
    client broken({.base_url = "ftp://127.0.0.1:" + port});
    const std::size_t before = server.requests();
    const auto r = broken.try_list();
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::provider_request_rejected);
    EXPECT_EQ(delivery_of(r.error()), delivery::not_sent);
    EXPECT_EQ(server.requests(), before);
}

TEST(keep_alive, execs_reuse_two_connections_and_the_endpoint_readiness_found) {
    embedded_server server;
    client c({.port = server.port()});
    const auto box = c.create({});
    const std::size_t before = server.requests();
    for (int i = 0; i < 20; ++i) EXPECT_EQ(c.exec(box.id, {.command = "echo x"}).exit_code, 0);
    EXPECT_EQ(server.requests() - before, 20u);  // no endpoint lookup: create's readiness check made one
    EXPECT_EQ(server.open_connections(), 2u);  // the lifecycle API and the direct endpoint
    EXPECT_EQ(c.idle_connections(), 2u);
}

TEST(keep_alive, a_connection_the_server_closed_while_idle_is_not_used) {
    client c({.port = 1, .timeout = 2s});
    {
        embedded_server server;
        client first({.port = server.port()});
        (void)first.list();
        EXPECT_EQ(first.idle_connections(), 1u);
        server.stop();
        const auto r = first.try_list();  // the kept connection is closed: a new one is refused
        ASSERT_TRUE(r.has_error());
        EXPECT_EQ(r.error().code(), kind::transport_unreachable) << r.error().what();
        EXPECT_EQ(delivery_of(r.error()), delivery::not_sent);
    }
}

// Every origin's idle connections go once past max_idle_time, not only when their own origin
// is used again (each sandbox's direct endpoint is an origin of its own, used perhaps once).
TEST(keep_alive, idle_connections_of_every_origin_close_past_the_idle_time) {
    embedded_server server;
    client c({.port = server.port(), .max_idle_time = 200ms});
    const auto box = c.create({});
    EXPECT_EQ(c.exec(box.id, {.command = "echo x"}).exit_code, 0);
    EXPECT_EQ(c.idle_connections(), 2u);  // the lifecycle API and the direct endpoint
    std::this_thread::sleep_for(400ms);
    (void)c.list();  // the lifecycle origin only
    EXPECT_EQ(c.idle_connections(), 1u) << "the direct endpoint's idle connection is closed";
    for (int i = 0; i < 200 && server.open_connections() > 1; ++i) std::this_thread::sleep_for(10ms);
    EXPECT_EQ(server.open_connections(), 1u);
}

TEST(keep_alive, the_connections_kept_are_bounded_in_total) {
    embedded_server server;
    client c({.port = server.port(), .max_kept_connections = 1});
    const auto box = c.create({});
    EXPECT_EQ(c.exec(box.id, {.command = "echo x"}).exit_code, 0);
    EXPECT_EQ(c.idle_connections(), 1u);
    EXPECT_EQ(c.exec(box.id, {.command = "echo y"}).stdout_text, "y\n");
}

// ---- the blocking faces: each call on its caller's thread -----------------------------------

TEST(blocking_face, runs_the_call_on_the_calling_thread) {
    embedded_server server;
    client c({.port = server.port()});
    const auto box = c.create({});
    std::thread::id called_on;
    EXPECT_EQ(c.exec(box.id, {.command = "echo x", .on_stdout = [&](std::string_view) {
                                  called_on = std::this_thread::get_id();
                              }}).exit_code, 0);
    EXPECT_EQ(called_on, std::this_thread::get_id());
    std::thread other([&] {
        EXPECT_EQ(c.exec(box.id, {.command = "echo y", .on_stdout = [&](std::string_view) {
                                      called_on = std::this_thread::get_id();
                                  }}).exit_code, 0);
        EXPECT_EQ(called_on, std::this_thread::get_id());
    });
    other.join();
}

// A client made on an executor: its blocking faces need nobody running that executor, and
// a connection kept by a call on one I/O context is never handed to a call on another (its
// socket is registered with the first one's reactor).
TEST(blocking_face, keeps_its_connections_apart_from_the_executors) {
    embedded_server server;
    asio::io_context io;
    client c(io.get_executor(), {.port = server.port()});
    std::optional<ngfail::result<std::vector<ngfail::opensandbox::sandbox_info>>> listed;
    asio::co_spawn(io, [&]() -> asio::awaitable<void> { listed = co_await c.async_list(); }, asio::detached);
    io.run();
    ASSERT_TRUE(listed && listed->has_value());
    EXPECT_EQ(c.idle_connections(), 1u);  // on `io`
    EXPECT_TRUE(c.try_list().has_value());  // `io` is not running: on a context of its own
    EXPECT_EQ(c.idle_connections(), 2u);
    EXPECT_TRUE(c.try_list().has_value());
    EXPECT_EQ(c.idle_connections(), 2u) << "the blocking call reused the connection its context kept";
    EXPECT_EQ(server.open_connections(), 2u);
    listed.reset();
    asio::co_spawn(io, [&]() -> asio::awaitable<void> { listed = co_await c.async_list(); }, asio::detached);
    io.restart();
    io.run();
    ASSERT_TRUE(listed && listed->has_value());
    EXPECT_EQ(server.open_connections(), 2u) << "the asynchronous call reused the one kept on `io`";
}

// An operation awaited in a coroutine on another context than the client's keeps its
// connection on the client's executor: the awaiting context may end before the client.
TEST(async_face, awaited_from_other_contexts_keeps_its_connections_on_the_clients_executor) {
    embedded_server server;
    client c({.port = server.port()});
    asio::io_context first, second;
    for (asio::io_context* io : {&first, &second}) {
        std::optional<ngfail::result<std::vector<ngfail::opensandbox::sandbox_info>>> listed;
        asio::co_spawn(*io, [&]() -> asio::awaitable<void> { listed = co_await c.async_list(); }, asio::detached);
        io->run();
        ASSERT_TRUE(listed && listed->has_value());
    }
    EXPECT_EQ(server.open_connections(), 1u) << "the second call reused the first one's connection";
    EXPECT_EQ(c.idle_connections(), 1u);
}

TEST(endpoint_cache, is_dropped_when_the_sandbox_is_killed) {
    embedded_server server;
    client c({.port = server.port()});
    const auto box = c.create({});
    (void)c.exec(box.id, {.command = "echo x"});
    c.kill(box.id);
    const auto r = c.try_exec(box.id, {.command = "echo x"});
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::provider_sandbox_lost) << r.error().what();
    EXPECT_EQ(delivery_of(r.error()), delivery::not_sent);
}

TEST(exec_stream, a_command_longer_than_the_request_timeout_succeeds_on_keep_alives) {
    embedded_server server({.ping_every = 100ms});
    client c({.port = server.port(), .timeout = 500ms});
    const auto box = c.create({});
    const auto ran = c.try_exec(box.id, {.command = "sleep 1.5", .idle_timeout = 400ms});
    ASSERT_TRUE(ran.has_value()) << ran.error().what();
    EXPECT_EQ(ran.value().exit_code, 0);
}

TEST(exec_stream, a_silent_stream_fails_within_its_idle_timeout) {
    embedded_server server({.ping_every = 60s});
    client c({.port = server.port()});
    const auto box = c.create({});
    const auto start = std::chrono::steady_clock::now();
    const auto r = c.try_exec(box.id, {.command = "sleep 30000", .idle_timeout = 300ms});
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::transport_timeout) << r.error().what();
    EXPECT_EQ(delivery_of(r.error()), delivery::delivered);  // `init` named the execution
    EXPECT_GE(took, 300ms);
    EXPECT_LT(took, 10s);  // the idle timeout, not the call's 30 s
}

TEST(exec_stream, output_reaches_the_callbacks_as_it_arrives_and_a_throwing_one_cancels) {
    embedded_server server;
    client c({.port = server.port()});
    const auto box = c.create({});
    std::string seen;
    const auto ran = c.exec(box.id, {.command = "echo streamed", .on_stdout = [&](std::string_view s) { seen += s; }});
    EXPECT_EQ(seen, "streamed\n");
    EXPECT_EQ(ran.stdout_text, "streamed\n");
    const auto r = c.try_exec(box.id, {.command = "echo x", .on_stdout = [](std::string_view) {
                                           throw std::runtime_error("enough");
                                       }});
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::cancelled) << r.error().what();
    EXPECT_EQ(delivery_of(r.error()), delivery::delivered);
}

// ---- the asynchronous face ----------------------------------------------------------------

std::size_t threads_now() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
        if (line.starts_with("Threads:")) return std::stoul(line.substr(8));
    }
    return 0;
}

// 256 execs at once from one thread, a fault queued for some of them: every outcome is a
// success with its own output or a failure of the injected kind, none lost, no thread made.
TEST(async_face, many_execs_at_once_on_one_thread_every_outcome_accounted_for) {
    constexpr int execs = 256, faulted = 13;  // 5%
    embedded_server server;
    const std::string id = client({.port = server.port()}).create({}).id;
    fault unavailable = fault::http_error("exec", 503, "UNAVAILABLE", "try later");
    unavailable.times = faulted;
    server.inject(unavailable);

    asio::io_context io(1);
    client c(io.get_executor(), {.port = server.port()});
    std::map<std::string, int> outcomes;
    std::size_t most_threads = 0;
    const std::size_t threads_before = threads_now();
    for (int i = 0; i < execs; ++i) {
        asio::co_spawn(io, [&, i]() -> asio::awaitable<void> {
            const auto r = co_await c.async_exec(id, {.command = "echo " + std::to_string(i)});
            most_threads = std::max(most_threads, threads_now());
            if (r && r.value().stdout_text == std::to_string(i) + "\n") {
                ++outcomes["ok"];
            } else if (!r && r.error().code() == kind::provider_unavailable &&
                       delivery_of(r.error()) == delivery::possibly_delivered) {
                ++outcomes["unavailable"];
            } else {
                ++outcomes["unexpected"];
            }
        }, asio::detached);
    }
    io.run();
    EXPECT_EQ(outcomes["ok"], execs - faulted);
    EXPECT_EQ(outcomes["unavailable"], faulted);
    EXPECT_EQ(outcomes["unexpected"], 0);
    EXPECT_EQ(most_threads, threads_before);  // no thread per exec, nor any other
}

// Runs `make`'s operation with a client on a fresh io_context and cancels it after `after`.
template <class Make>
auto cancelled_after(std::chrono::milliseconds after, const client_options& options, Make make) {
    asio::io_context io(1);
    client c(io.get_executor(), options);  // goes before the io_context it runs on
    auto operation = make(c);
    using value = typename decltype(operation)::value_type;
    std::optional<ngfail::result<value>> out;
    asio::cancellation_signal cancel;
    asio::co_spawn(io, [&]() -> asio::awaitable<void> { out.emplace(co_await std::move(operation)); },
                   asio::bind_cancellation_slot(cancel.slot(), asio::detached));
    asio::steady_timer later(io, after);
    later.async_wait([&](boost::system::error_code) { cancel.emit(asio::cancellation_type::terminal); });
    io.run();
    return out;
}

TEST(async_face, cancelled_mid_stream_is_a_cancelled_failure_that_was_delivered) {
    embedded_server server;
    const std::string id = client({.port = server.port()}).create({}).id;
    const command long_one{.command = "sleep 20000"};
    const auto start = std::chrono::steady_clock::now();
    const auto out = cancelled_after(300ms, {.port = server.port()}, [&](client& c) { return c.async_exec(id, long_one); });
    ASSERT_TRUE(out.has_value());
    ASSERT_TRUE(out->has_error());
    EXPECT_EQ(out->error().code(), kind::cancelled) << out->error().what();
    EXPECT_EQ(delivery_of(out->error()), delivery::delivered);  // `init` had named the execution
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST(async_face, cancelled_between_retries_is_cancelled_and_not_sent) {
    unsigned short closed_port = 0;
    {
        asio::io_context io;
        asio::ip::tcp::acceptor nothing(io, {asio::ip::make_address("127.0.0.1"), 0});
        closed_port = nothing.local_endpoint().port();
    }
    const auto start = std::chrono::steady_clock::now();
    const client_options options{.port = closed_port, .retries = {.max_attempts = 5, .backoff = 5s, .max_backoff = 5s}};
    const auto out = cancelled_after(300ms, options, [](client& c) { return c.async_list(); });
    ASSERT_TRUE(out && out->has_error());
    EXPECT_EQ(out->error().code(), kind::cancelled) << "not the last attempt's transport_unreachable: "
                                                    << out->error().what();
    EXPECT_EQ(delivery_of(out->error()), delivery::not_sent);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 4s) << "the wait was cut short";
}

TEST(async_face, cancelled_while_waiting_for_readiness_names_the_sandbox_it_created) {
    embedded_server server({.pending_for = 20s});
    const auto out = cancelled_after(300ms, {.port = server.port(), .timeout = 30s}, [](client& c) {
        return c.async_create({.ready_timeout = 25s, .ready_poll = 50ms});
    });
    ASSERT_TRUE(out && out->has_error());
    EXPECT_EQ(out->error().code(), kind::cancelled) << out->error().what();
    const auto& details = std::get<ngfail::sandbox_details>(out->error().details());
    ASSERT_TRUE(details.sandbox_id.has_value()) << "the running sandbox must be named";
    EXPECT_EQ(details.delivery, delivery::delivered) << "it exists";
    EXPECT_EQ(client({.port = server.port()}).get(*details.sandbox_id).id, *details.sandbox_id);
}

// ---- completion tokens: the same operations through a callback, deferred, use_future ---------

TEST(completion_tokens, a_callback_gets_the_result_once_on_its_executor) {
    embedded_server server;
    const std::string id = client({.port = server.port()}).create({}).id;
    asio::io_context io(1);
    client c(io.get_executor(), {.port = server.port()});
    int calls = 0;
    std::optional<ngfail::result<ngfail::opensandbox::exec_result>> got;
    const command echo{.command = "echo token"};
    c.async_exec(id, echo, {}, [&](ngfail::result<ngfail::opensandbox::exec_result> r) {
        ++calls;
        got.emplace(std::move(r));
    });
    io.run();
    EXPECT_EQ(calls, 1);
    ASSERT_TRUE(got && got->has_value());
    EXPECT_EQ(got->value().stdout_text, "token\n");
}

// The request written inline, as a braced aggregate: safe here (nothing is awaited in the
// caller's expression), which the ASan build checks; inside a co_await, g++ 12 destroys it twice.
// Written with `complete`, the adapter every token goes through, as code of before the token
// parameter did.
TEST(completion_tokens, an_inline_request_is_safe_with_a_token) {
    embedded_server server;
    const std::string id = client({.port = server.port()}).create({}).id;
    asio::io_context io(1);
    client c(io.get_executor(), {.port = server.port()});
    std::string out;
    c.complete(c.async_exec(id, {.command = "echo written inline, long enough to live on the heap"}),
               [&](ngfail::result<ngfail::opensandbox::exec_result> r) { out = r ? r.value().stdout_text : "failed"; });
    io.run();
    EXPECT_EQ(out, "written inline, long enough to live on the heap\n");
}

TEST(completion_tokens, use_future_and_deferred) {
    embedded_server server;
    client c({.port = server.port()});  // runs its own I/O thread: a future may be waited on here
    const std::string id = c.create({}).id;
    auto future = c.async_get(id, {}, asio::use_future);
    const auto info = future.get();
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info.value().id, id);

    asio::io_context io(1);
    client on_io(io.get_executor(), {.port = server.port()});
    auto later = on_io.async_get(id, {}, asio::deferred);  // nothing runs yet
    const std::size_t before = server.requests();
    io.run_for(50ms);
    EXPECT_EQ(server.requests(), before) << "deferred: started only when invoked";
    io.restart();
    std::optional<ngfail::result<ngfail::opensandbox::sandbox_info>> got;
    std::move(later)([&](ngfail::result<ngfail::opensandbox::sandbox_info> r) { got.emplace(std::move(r)); });
    io.run();
    ASSERT_TRUE(got && got->has_value());
    EXPECT_EQ(got->value().id, id);
}

TEST(completion_tokens, use_awaitable_and_a_bound_cancellation_slot) {
    embedded_server server;
    const std::string id = client({.port = server.port()}).create({}).id;
    asio::io_context io(1);
    client c(io.get_executor(), {.port = server.port()});
    std::optional<bool> pinged;
    asio::co_spawn(io, [&]() -> asio::awaitable<void> {
        pinged = (co_await c.async_ping(id, {}, asio::use_awaitable)).has_value();
    }, asio::detached);
    asio::cancellation_signal cancel;
    std::optional<ngfail::result<ngfail::opensandbox::exec_result>> long_one;
    const command sleeper{.command = "sleep 20000"};
    c.async_exec(id, sleeper, {},
                 asio::bind_cancellation_slot(cancel.slot(), [&](ngfail::result<ngfail::opensandbox::exec_result> r) {
                     long_one.emplace(std::move(r));
                 }));
    asio::steady_timer later(io, 300ms);
    later.async_wait([&](boost::system::error_code) { cancel.emit(asio::cancellation_type::terminal); });
    const auto start = std::chrono::steady_clock::now();
    io.run();
    EXPECT_EQ(pinged, true);
    ASSERT_TRUE(long_one && long_one->has_error());
    EXPECT_EQ(long_one->error().code(), kind::cancelled) << long_one->error().what();
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST(async_face, an_awaitable_made_now_may_be_awaited_later) {
    embedded_server server;
    const std::string id = client({.port = server.port()}).create({}).id;
    asio::io_context io(1);
    client c(io.get_executor(), {.port = server.port()});
    std::string seen;
    asio::co_spawn(io, [&]() -> asio::awaitable<void> {
        auto later = c.async_exec(std::string(id), {.command = std::string("echo ") + "kept"});
        auto r = co_await std::move(later);  // its arguments were copied in when it was made
        if (r) seen = r.value().stdout_text;
    }, asio::detached);
    io.run();
    EXPECT_EQ(seen, "kept\n");
}

TEST(async_face, a_client_destroyed_with_an_operation_in_flight_ends_it_cleanly) {
    embedded_server server;
    const std::string id = client({.port = server.port()}).create({}).id;
    bool finished = false;
    const command long_one{.command = "sleep 20000"};
    {
        client c({.port = server.port()});  // its own I/O thread
        asio::co_spawn(c.get_executor(), [&]() -> asio::awaitable<void> {
            (void)co_await c.async_exec(id, long_one);
            finished = true;
        }, asio::detached);
        std::this_thread::sleep_for(200ms);  // the exec is streaming now
    }  // stops the thread; the operation's frame (and its pooled connection) go first
    EXPECT_FALSE(finished) << "an abandoned operation completes nothing";
}

}  // namespace
