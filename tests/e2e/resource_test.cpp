// The OpenSandbox client against servers that attack it: a stream that never ends, a
// header that never ends, a 1 GiB body, replies at and one past every limit. Each ends in
// a clean, classified failure with memory bounded (measured with getrusage: each test runs
// in a process of its own under ctest).
#include <ngfail/opensandbox/client.hpp>

#include "support/peak_memory.hpp"
#include "support/raw_server.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <string>

namespace {

using namespace std::chrono_literals;
using ngfail::kind;
using ngfail::opensandbox::client;
using ngfail_test::raw_server;

constexpr long max_rss_kib = 64 * 1024;

using ngfail_test::instrumented;
using ngfail_test::peak_rss_kib;

std::string reply(std::string_view status, std::string_view body, std::string_view extra_headers = "") {
    return raw_server::reply(status, body, extra_headers);
}

const std::string sandbox_json = R"({"id":"x","status":{"state":"Running","reason":"RUNNING"}})";

// Answers the lifecycle routes an exec needs, and hands POST .../command to `command`.
raw_server::handler execd(unsigned short& port, std::function<void(int)> command) {
    return [&port, command](int fd, const std::string& line) {
        if (line.starts_with("GET /v1/sandboxes/x/endpoints/")) {
            raw_server::send_all(fd, reply("200 OK", R"({"endpoint":"127.0.0.1:)" + std::to_string(port) +
                                                         R"(/x","headers":{}})"));
        } else if (line.starts_with("POST /x/command")) {
            command(fd);
        } else {
            raw_server::send_all(fd, reply("200 OK", sandbox_json));
        }
    };
}

TEST(resources, a_stream_that_never_ends_times_out_with_bounded_output) {
    unsigned short port = 0;
    raw_server server(execd(port, [](int fd) {
        if (!raw_server::send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")) return;
        const std::string init = R"({"type":"init","text":"exec-1"})" "\n\n";
        std::string frame = R"({"type":"stdout","text":")" + std::string(60000, 'o') + "\"}\n\n";
        const auto chunk = [](const std::string& s) {
            char size[32];
            std::snprintf(size, sizeof size, "%zx\r\n", s.size());
            return size + s + "\r\n";
        };
        if (!raw_server::send_all(fd, chunk(init))) return;
        while (raw_server::send_all(fd, chunk(frame))) {
        }
    }));
    port = server.port();
    // Never silent, so only the stream's total time can end it.
    client c({.port = port, .timeout = 2s, .max_body_bytes = 4 << 20});
    const auto r = c.try_exec("x", {.command = "yes", .total_timeout = 2s});
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::transport_timeout) << r.error().what();
    EXPECT_EQ(std::get<ngfail::sandbox_details>(r.error().details()).delivery, ngfail::delivery::delivered);
    EXPECT_LT(peak_rss_kib(), max_rss_kib);
}

TEST(resources, an_endless_header_is_a_malformed_reply) {
    raw_server server([](int fd, const std::string&) {
        if (!raw_server::send_all(fd, "HTTP/1.1 200 OK\r\nX-Endless: ")) return;
        const std::string more(65536, 'h');
        for (int i = 0; i < 16384 && raw_server::send_all(fd, more); ++i) {  // up to 1 GiB
        }
    });
    client c({.port = server.port(), .timeout = 10s});
    const auto r = c.try_get("x");
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::protocol_violation) << r.error().what();
    EXPECT_LT(peak_rss_kib(), max_rss_kib);
}

TEST(resources, a_1_gib_body_is_refused_before_it_is_read) {
    raw_server server([](int fd, const std::string&) {
        if (!raw_server::send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\n")) return;
        const std::string zeros(1 << 20, '0');
        for (int i = 0; i < 1024 && raw_server::send_all(fd, zeros); ++i) {
        }
    });
    client c({.port = server.port(), .timeout = 10s});
    const auto r = c.try_get("x");
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::protocol_violation) << r.error().what();
    EXPECT_LT(peak_rss_kib(), max_rss_kib);
}

TEST(resources, a_1_gib_chunked_body_stops_at_the_limit) {
    raw_server server([](int fd, const std::string&) {
        if (!raw_server::send_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")) return;
        const std::string chunk = "100000\r\n" + std::string(1 << 20, '0') + "\r\n";
        for (int i = 0; i < 1024 && raw_server::send_all(fd, chunk); ++i) {
        }
    });
    client c({.port = server.port(), .timeout = 10s});
    const auto r = c.try_get("x");
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::protocol_violation) << r.error().what();
    EXPECT_LT(peak_rss_kib(), max_rss_kib);
}

// ---- at the limit and one past it ----------------------------------------------------------------

std::string padded(std::size_t size) {
    std::string body = sandbox_json;
    body.append(size - body.size(), ' ');
    return body;
}

TEST(reply_limits, a_body_at_the_limit_is_read_and_one_byte_more_is_refused) {
    constexpr std::size_t limit = 1000;
    std::size_t body_size = limit;
    raw_server server([&](int fd, const std::string&) { raw_server::send_all(fd, reply("200 OK", padded(body_size))); });
    client c({.port = server.port(), .timeout = 5s, .max_body_bytes = limit});
    EXPECT_TRUE(c.try_get("x")) << "exactly at the limit";
    body_size = limit + 1;
    const auto r = c.try_get("x");
    ASSERT_TRUE(r.has_error());
    EXPECT_EQ(r.error().code(), kind::protocol_violation);
}

TEST(reply_limits, headers_up_to_64_kib_are_read) {
    std::size_t header_bytes = 60 << 10;
    raw_server server([&](int fd, const std::string&) {
        raw_server::send_all(fd, reply("200 OK", sandbox_json, "X-Pad: " + std::string(header_bytes, 'p') + "\r\n"));
    });
    client c({.port = server.port(), .timeout = 5s});
    EXPECT_TRUE(c.try_get("x")) << "under the limit";
    header_bytes = 65 << 10;
    EXPECT_EQ(c.try_get("x").error().code(), kind::protocol_violation) << "past it";
}

TEST(reply_limits, exec_output_is_cut_at_the_limit_and_says_so) {
    unsigned short port = 0;
    raw_server server(execd(port, [](int fd) {
        std::string events = R"({"type":"init","text":"e"})" "\n\n";
        events += R"({"type":"stdout","text":")" + std::string(3000, 'o') + "\"}\n\n";
        events += R"({"type":"execution_complete","execution_time":1})" "\n\n";
        raw_server::send_all(fd, reply("200 OK", events));
    }));
    port = server.port();
    client c({.port = port, .timeout = 5s, .max_body_bytes = 2000});
    const auto ran = c.try_exec("x", {.command = "cat big"});
    ASSERT_TRUE(ran) << ran.error().what();
    EXPECT_TRUE(ran.value().output_truncated);
    EXPECT_EQ(ran.value().stdout_text.size(), 2000u);
    EXPECT_EQ(ran.value().exit_code, 0);
}

}  // namespace

// ---- the embedded server under many connections --------------------------------------------------

#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <dirent.h>
#include <thread>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using ngfail::opensandbox::testing::embedded_server;

std::size_t thread_count() {
    std::size_t n = 0;
    if (DIR* tasks = ::opendir("/proc/self/task")) {
        while (const dirent* entry = ::readdir(tasks)) n += entry->d_name[0] != '.';
        ::closedir(tasks);
    }
    return n;
}

// One request on a fresh connection, answered and closed.
void one_request(boost::asio::io_context& io, unsigned short port) {
    namespace http = boost::beast::http;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    http::request<http::empty_body> req(http::verb::get, "/v1/sandboxes/none", 11);
    req.keep_alive(false);
    http::write(socket, req);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
}

TEST(server_resources, nothing_of_a_connection_outlives_it) {
    embedded_server server;
    boost::asio::io_context io;
    const std::size_t before = thread_count();
    one_request(io, server.port());
    const long rss_before = peak_rss_kib();
    // Under a sanitizer the memory bound is not checked (peak_memory.hpp) and a tenth of the
    // connections walks the same code.
    const int connections = ngfail_test::instrumented ? 2'000 : 20'000;
    for (int i = 0; i < connections; ++i) one_request(io, server.port());
    EXPECT_EQ(thread_count(), before) << "no thread per connection";
    EXPECT_LT(peak_rss_kib() - rss_before, 8 * 1024) << "KiB of resident memory after 20,000 connections";
    EXPECT_EQ(server.requests(), static_cast<std::size_t>(connections) + 1);
}

// Room for both ends of `n` loopback connections in this one process.
void allow_descriptors(rlim_t n) {
    rlimit lim{};
    ::getrlimit(RLIMIT_NOFILE, &lim);
    if (lim.rlim_max < n) {  // root may raise the hard limit too
        rlimit raised{n, n};
        if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) lim = raised;
    }
    lim.rlim_cur = std::max<rlim_t>(lim.rlim_cur, std::min(lim.rlim_max, n));
    ::setrlimit(RLIMIT_NOFILE, &lim);
    ASSERT_GE(lim.rlim_cur, n) << "the hard limit on open files is too low for this test";
}

TEST(server_resources, a_thousand_connections_at_once_on_two_threads) {
    allow_descriptors(2'200);
    embedded_server server;
    boost::asio::io_context io;
    const long rss_before = peak_rss_kib();
    std::vector<boost::asio::ip::tcp::socket> open;
    for (int i = 0; i < 1'000; ++i) {
        auto& socket = open.emplace_back(io);
        socket.connect({boost::asio::ip::make_address("127.0.0.1"), server.port()});
    }
    for (int i = 0; i < 200 && server.open_connections() < 1'000; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(server.open_connections(), 1'000u);
    EXPECT_EQ(server.threads(), 2u);
    EXPECT_LT(peak_rss_kib() - rss_before, 32 * 1024) << "KiB of resident memory for 1,000 open connections";
    one_request(io, server.port());  // and it still answers
    open.clear();
    for (int i = 0; i < 200 && server.open_connections() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(server.open_connections(), 0u) << "every closed connection ended its coroutine";
}

TEST(server_resources, accept_backs_off_when_descriptors_run_out) {
    if (instrumented) GTEST_SKIP() << "a forked child that starts threads is not supported under the sanitizers";
    std::array<int, 2> ready{};
    ASSERT_EQ(::pipe(ready.data()), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        embedded_server server;
        // No descriptor is left: every accept now fails with EMFILE while connections wait.
        const int lowest_free = ::dup(0);
        ::close(lowest_free);
        rlimit none{static_cast<rlim_t>(lowest_free), static_cast<rlim_t>(lowest_free)};
        ::getrlimit(RLIMIT_NOFILE, &none);
        none.rlim_cur = static_cast<rlim_t>(lowest_free);
        ::setrlimit(RLIMIT_NOFILE, &none);
        const unsigned short port = server.port();
        if (::write(ready[1], &port, sizeof port) != sizeof port) ::_exit(3);
        ::usleep(200'000);  // the parent connects
        rusage start{};
        ::getrusage(RUSAGE_SELF, &start);
        ::usleep(500'000);
        rusage end{};
        ::getrusage(RUSAGE_SELF, &end);
        const auto cpu_us = [](const rusage& u) {
            return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1'000'000L + u.ru_utime.tv_usec + u.ru_stime.tv_usec;
        };
        ::_exit(cpu_us(end) - cpu_us(start) < 150'000 ? 0 : 1);  // a spinning loop burns ~500 ms
    }
    unsigned short port = 0;
    ASSERT_EQ(::read(ready[0], &port, sizeof port), static_cast<ssize_t>(sizeof port));
    std::vector<int> clients;
    for (int i = 0; i < 3; ++i) {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(port);
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        (void)::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
        clients.push_back(fd);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    for (const int fd : clients) ::close(fd);
    ::close(ready[0]);
    ::close(ready[1]);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the accept loop spun a core while descriptors were exhausted";
}

}  // namespace
