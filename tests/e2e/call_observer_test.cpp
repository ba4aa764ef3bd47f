// What a client tells its `call_observer` (client_options::observer), against the embedded
// server on loopback: the order of a call's beginning, attempts and end; the program an exec
// names; and that an observer can change nothing of a call, whatever it does.
#include "support/emulator_calls.hpp"
#include "support/recorded_heads.hpp"

#include <ngfail/opensandbox.hpp>
#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
using ngfail::opensandbox::call_observer;
using ngfail::opensandbox::client;
using ngfail::opensandbox::observed_call;
using ngfail::opensandbox::operation;
using ngfail::opensandbox::trace_label;
using ngfail::opensandbox::testing::embedded_server;
using ngfail::opensandbox::testing::fault;
using testing::ElementsAre;

constexpr std::string_view key = "sk-observer-secret";

struct observer_options {
    bool throw_everywhere = false;  // every notification throws after it is written down
    std::string traceparent{};      // what each attempt asks its requests to carry
};

// Writes down every notification as one line.
class recording_observer final : public call_observer {
public:
    using options = observer_options;
    explicit recording_observer(options o = {}) : options_(std::move(o)) {}

    std::unique_ptr<observed_call> begin(operation op, std::string_view sandbox_id,
                                         std::span<const trace_label> labels) override {
        std::string line = "begin " + std::string(name(op)) + " [" + std::string(sandbox_id) + "]";
        for (const auto& l : labels) line += " " + std::string(l.key) + "=" + std::string(l.value);
        write(std::move(line));
        if (options_.throw_everywhere) throw std::runtime_error("observer down");
        return std::make_unique<call>(*this);
    }

    std::vector<std::string> lines() {
        std::lock_guard lock(mutex_);
        return lines_;
    }

private:
    class call final : public observed_call {
    public:
        explicit call(recording_observer& o) : o_(o) {}
        std::string_view attempt_began(int attempt) override {
            o_.write("attempt " + std::to_string(attempt));
            if (o_.options_.throw_everywhere) throw std::runtime_error("observer down");
            return o_.options_.traceparent;
        }
        void attempt_failed(const ngfail::failure& f) override {
            o_.write("retried after " + std::string(f.kind_name()));
            if (o_.options_.throw_everywhere) throw std::runtime_error("observer down");
        }
        void command_program(std::string_view program) override {
            o_.write("program " + std::string(program));
            if (o_.options_.throw_everywhere) throw std::runtime_error("observer down");
        }
        void ended(const ngfail::failure& f, std::string_view sandbox_id) override {
            o_.write("ended " + std::string(f ? f.kind_name() : "ok") + " [" + std::string(sandbox_id) + "]");
            if (o_.options_.throw_everywhere) throw std::runtime_error("observer down");
        }

    private:
        recording_observer& o_;
    };

    void write(std::string line) {
        std::lock_guard lock(mutex_);
        lines_.push_back(std::move(line));
    }

    options options_;
    std::mutex mutex_;
    std::vector<std::string> lines_;
};

class call_observer_test : public testing::Test {
protected:
    embedded_server server{{.api_key = std::string(key)}};
    std::shared_ptr<recording_observer> observer = std::make_shared<recording_observer>();
    client sandboxes{{.port = server.port(),
                      .api_key = std::string(key),
                      .timeout = 5s,
                      .retries = {.max_attempts = 3, .backoff = 1ms},
                      .observer = observer}};
};

TEST_F(call_observer_test, a_call_begins_attempts_is_retried_and_ends_in_that_order) {
    const std::string id = sandboxes.create({}).id;
    server.inject(fault::http_error("get", 503, "UNAVAILABLE", "busy"));
    const std::vector<trace_label> labels{{"trajectory_id", "t-1"}};

    ASSERT_TRUE(sandboxes.try_get(id, {.trace_labels = labels}));

    EXPECT_THAT(observer->lines(),
                ElementsAre("begin create []", "attempt 1", "ended ok [" + id + "]",  // the new sandbox's id
                            "begin get [" + id + "] trajectory_id=t-1", "attempt 1",
                            "retried after provider_unavailable", "attempt 2", "ended ok [" + id + "]"));
}

TEST_F(call_observer_test, a_call_that_fails_for_good_ends_with_its_kind_after_its_retries) {
    auto busy = fault::http_error("get", 503, "UNAVAILABLE", "busy");
    busy.times = 3;
    server.inject(busy);
    ASSERT_FALSE(sandboxes.try_get("sbx-busy"));
    EXPECT_THAT(observer->lines(),
                ElementsAre("begin get [sbx-busy]", "attempt 1", "retried after provider_unavailable", "attempt 2",
                            "retried after provider_unavailable", "attempt 3", "ended provider_unavailable [sbx-busy]"));
}

TEST_F(call_observer_test, a_refusal_no_retry_can_change_ends_after_one_attempt) {
    ASSERT_FALSE(sandboxes.try_get("sbx-nowhere"));
    EXPECT_THAT(observer->lines(),
                ElementsAre("begin get [sbx-nowhere]", "attempt 1", "ended provider_sandbox_lost [sbx-nowhere]"));
}

TEST_F(call_observer_test, an_exec_names_its_program_never_its_assignments_arguments_or_the_key) {
    const std::string id = sandboxes.create({}).id;
    const std::vector<std::pair<std::string, std::string>> cases{
        {"echo hello", "program echo"},
        {"  A=1 B_2=two\t/usr/bin/env python3 -c 'print(1)'", "program /usr/bin/env"},
        {"LANG=C.UTF-8 ls -la", "program ls"},
        {std::string(key) + " --now", "program [redacted]"},
    };
    for (const auto& [command, expected] : cases) {
        (void)sandboxes.try_exec(id, {.command = command});
        EXPECT_THAT(observer->lines(), testing::Contains(expected)) << command;
    }
    // Anything but a plain command line names no program: quotes, escapes, groupings and
    // expansions can each carry a secret across what looks like a word's end.
    for (const std::string command : {"PASSWORD='hunter2 topsecret' echo hi", "TOKEN=hunter2\\ two cmd",
                                      "(TOKEN=hunter2 cmd)", "\"TOKEN=hunter3\" cmd", "=x echo", "caf\xc3\xa9 --x",
                                      "$(cat /secret) x", "A=1\necho two"}) {
        const std::size_t before = observer->lines().size();
        (void)sandboxes.try_exec(id, {.command = command});
        const auto lines = observer->lines();
        for (std::size_t i = before; i < lines.size(); ++i) {
            EXPECT_FALSE(lines[i].starts_with("program")) << command << " named " << lines[i];
        }
    }
    // A program name is bounded: 64 bytes of it at most.
    (void)sandboxes.try_exec(id, {.command = std::string(500, 'p')});
    EXPECT_THAT(observer->lines(), testing::Contains("program " + std::string(64, 'p') + "..."));
}

TEST_F(call_observer_test, the_endpoints_token_is_a_secret_before_the_program_is_named) {
    const auto made = ngfail_test::call(server.port(), boost::beast::http::verb::post, "/v1/sandboxes",
                                        R"({"image":{"uri":"p"},"entrypoint":["x"],"secureAccess":true})",
                                        {{"OPEN-SANDBOX-API-KEY", std::string(key)}});
    ASSERT_EQ(made.status, 202u) << made.body;
    const std::string secure(made.object().at("id").as_string());
    const auto endpoint = ngfail_test::call(server.port(), boost::beast::http::verb::get,
                                            "/v1/sandboxes/" + secure + "/endpoints/44772", "",
                                            {{"OPEN-SANDBOX-API-KEY", std::string(key)}});
    const std::string token(endpoint.object().at("headers").at("X-EXECD-ACCESS-TOKEN").as_string());
    ASSERT_FALSE(token.empty());

    (void)sandboxes.try_exec(secure, {.command = token + " --arg"});

    EXPECT_THAT(observer->lines(), testing::Contains("program [redacted]"));
    for (const auto& line : observer->lines()) EXPECT_EQ(line.find(token), std::string::npos) << line;
}

TEST_F(call_observer_test, a_new_sandboxs_id_is_scrubbed_of_the_key_before_the_observer_sees_it) {
    // A server that names the sandbox after the key it was sent, then answers the client's
    // readiness checks (the sandbox, its endpoint: this server, execd's ping).
    unsigned short port = 0;
    std::string named;
    ngfail_test::raw_server echoing([&](int fd, const std::string& head) {
        using ngfail_test::raw_server;
        if (head.starts_with("POST")) named = raw_server::header(head, "OPEN-SANDBOX-API-KEY");
        const std::string sandbox =
            R"({"id":")" + named + R"(","status":{"state":"Running"},"expiresAt":"2030-01-01T00:00:00Z"})";
        if (head.find("/endpoints/") != std::string::npos) {
            raw_server::send_all(fd, raw_server::reply("200 OK", R"({"endpoint":"127.0.0.1:)" + std::to_string(port) + R"("})"));
        } else if (head.find("/ping") != std::string::npos) {
            raw_server::send_all(fd, raw_server::reply("200 OK", ""));
        } else {
            raw_server::send_all(fd, raw_server::reply(head.starts_with("POST") ? "202 Accepted" : "200 OK", sandbox));
        }
    });
    port = echoing.port();
    auto o = std::make_shared<recording_observer>();
    client c({.port = echoing.port(), .api_key = std::string(key), .timeout = 5s, .observer = o});
    const auto made = c.try_create({});
    ASSERT_TRUE(made) << made.error().what();
    EXPECT_THAT(o->lines(), testing::Contains("ended ok [[redacted]]"));
    for (const auto& line : o->lines()) EXPECT_EQ(line.find(key), std::string::npos) << line;
}

TEST_F(call_observer_test, an_observer_that_throws_changes_nothing_of_any_call) {
    auto thrower = std::make_shared<recording_observer>(recording_observer::options{.throw_everywhere = true});
    client c({.port = server.port(), .api_key = std::string(key), .timeout = 5s,
              .retries = {.max_attempts = 3, .backoff = 1ms}, .observer = thrower});
    const std::string id = c.create({}).id;
    server.inject(fault::http_error("get", 503, "UNAVAILABLE", "busy"));
    EXPECT_TRUE(c.try_get(id));
    const auto ran = c.try_exec(id, {.command = "echo still"});
    ASSERT_TRUE(ran) << ran.error().what();
    EXPECT_EQ(ran.value().stdout_text, "still\n");
    const auto gone = c.try_get("sbx-nowhere");
    const auto gone_unobserved = sandboxes.try_get("sbx-nowhere");
    ASSERT_FALSE(gone);
    ASSERT_FALSE(gone_unobserved);
    EXPECT_EQ(gone.error().kind_name(), gone_unobserved.error().kind_name());
    EXPECT_EQ(gone.error().cause().as_failure().kind_name(), gone_unobserved.error().cause().as_failure().kind_name());
}

TEST_F(call_observer_test, a_traceparent_not_of_the_w3c_form_is_not_sent) {
    ngfail_test::recorded_heads lifecycle;
    const std::string valid = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    for (const std::string& traceparent : {std::string("00-ab-cd-01\r\nX-Injected: yes"), std::string(200'000, 'a'),
                                          std::string("00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01"),
                                          valid + " ", valid}) {
        auto o = std::make_shared<recording_observer>(recording_observer::options{.traceparent = traceparent});
        client c({.port = lifecycle.port(), .api_key = std::string(key), .timeout = 5s, .observer = o});
        const auto got = c.try_get("sbx-1");
        ASSERT_TRUE(got) << "an observer changes no outcome: " << got.error().what();
    }
    const auto heads = lifecycle.heads();
    ASSERT_EQ(heads.size(), 5u);
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_THAT(heads[i], testing::Not(testing::HasSubstr("traceparent"))) << i;
        EXPECT_THAT(heads[i], testing::Not(testing::HasSubstr("X-Injected")));
    }
    EXPECT_THAT(heads[4], testing::HasSubstr("traceparent: " + valid + "\r\n"));
}

}  // namespace
