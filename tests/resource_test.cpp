// The OpenSandbox client against servers that attack it: a stream that never ends, a
// header that never ends, a 1 GiB body, replies at and one past every limit. Each ends in
// a clean, classified failure with memory bounded (measured with getrusage: each test runs
// in a process of its own under ctest).
#include <ngfail/opensandbox/client.hpp>

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

// Under a sanitizer the process's memory is mostly the sanitizer's (shadow memory, ASan's
// quarantine of freed blocks), so the bound is checked in the uninstrumented builds only.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool instrumented = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool instrumented = true;
#else
constexpr bool instrumented = false;
#endif
#else
constexpr bool instrumented = false;
#endif

long peak_rss_kib() {
    if (instrumented) return 0;
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

std::string reply(std::string_view status, std::string_view body, std::string_view extra_headers = "") {
    return "HTTP/1.1 " + std::string(status) + "\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n" + std::string(extra_headers) + "\r\n" + std::string(body);
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
    client c({.port = port, .timeout = 2s, .max_body_bytes = 4 << 20});
    const auto r = c.try_exec("x", {.command = "yes"});
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
