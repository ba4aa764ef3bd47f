// What a client tells its `call_observer` (client_options::observer), against the embedded
// server on loopback: the order of a call's beginning, attempts and end; the program an exec
// names; and that an observer can change nothing of a call, whatever it does.
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
    ASSERT_FALSE(sandboxes.try_get("sbx-nowhere"));
    EXPECT_THAT(observer->lines(),
                ElementsAre("begin get [sbx-nowhere]", "attempt 1", "retried after provider_sandbox_lost", "attempt 2",
                            "retried after provider_sandbox_lost", "attempt 3",
                            "ended provider_sandbox_lost [sbx-nowhere]"));
}

TEST_F(call_observer_test, an_exec_names_its_program_never_its_assignments_arguments_or_the_key) {
    const std::string id = sandboxes.create({}).id;
    const std::vector<std::pair<std::string, std::string>> cases{
        {"echo hello", "program echo"},
        {"  A=1 B_2=two\t/usr/bin/env python3 -c 'print(1)'", "program /usr/bin/env"},
        {"LANG=C.UTF-8 ls -la", "program ls"},
        {std::string(key) + " --now", "program [redacted]"},
        {"caf\xc3\xa9 --x", "program caf\\xc3\\xa9"},
        {"=x echo", "program =x"},  // not an assignment: no name before '='
    };
    for (const auto& [command, expected] : cases) {
        (void)sandboxes.try_exec(id, {.command = command});
        EXPECT_THAT(observer->lines(), testing::Contains(expected)) << command;
    }
    // A program name is bounded: 64 bytes of it at most, printable.
    (void)sandboxes.try_exec(id, {.command = std::string(500, 'p')});
    const auto lines = observer->lines();
    EXPECT_THAT(lines, testing::Contains("program " + std::string(64, 'p') + "..."));
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

TEST_F(call_observer_test, a_traceparent_that_would_break_a_header_is_not_sent) {
    ngfail_test::recorded_heads lifecycle;
    for (const std::string traceparent : {"00-ab-cd-01\r\nX-Injected: yes", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}) {
        auto o = std::make_shared<recording_observer>(recording_observer::options{.traceparent = traceparent});
        client c({.port = lifecycle.port(), .api_key = std::string(key), .timeout = 5s, .observer = o});
        ASSERT_TRUE(c.try_get("sbx-1"));
    }
    const auto heads = lifecycle.heads();
    ASSERT_EQ(heads.size(), 2u);
    EXPECT_THAT(heads[0], testing::Not(testing::HasSubstr("traceparent")));
    EXPECT_THAT(heads[0], testing::Not(testing::HasSubstr("X-Injected")));
    EXPECT_THAT(heads[1], testing::HasSubstr("traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\r\n"));
}

}  // namespace
