// The client's reader of execd's event streams: a code run's parts, and what a server that
// sends without end can make it hold.
#include "opensandbox/client/execd_stream.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <system_error>

namespace {

using ngfail::opensandbox::detail::execd_stream;

TEST(execd_stream, a_code_run_gives_its_count_results_and_error) {
    execd_stream events(1 << 20);
    events.feed(R"({"type":"init","text":"ctx1"})" "\n\n"
                R"({"type":"stdout","text":"42\n"})" "\n\n"
                R"({"type":"execution_count","execution_count":3})" "\n\n"
                R"({"type":"result","results":{"text":"40","application/json":{"a":1}}})" "\n\n"
                R"({"type":"error","error":{"ename":"ValueError","evalue":"-1","traceback":["t1","t2"]}})" "\n\n");
    events.finish();
    EXPECT_TRUE(events.terminal());
    EXPECT_EQ(events.result().stdout_text, "42\n");
    const auto code = events.take_code();
    EXPECT_EQ(code.execution_count, 3);
    EXPECT_EQ(code.results.at("text"), "40");
    EXPECT_EQ(code.results.at("application/json"), R"({"a":1})") << "a value that is not text is kept as its JSON";
    EXPECT_EQ(code.error_name, "ValueError");
    EXPECT_EQ(code.traceback, (std::vector<std::string>{"t1", "t2"}));
}

TEST(execd_stream, result_types_sent_without_end_fill_the_output_limit_not_the_memory) {
    constexpr std::size_t limit = 64 * 1024;
    execd_stream events(limit);
    for (int i = 0; i < 10000; ++i) {
        events.feed(R"({"type":"result","results":{")" + std::string(100, 'k') + std::to_string(i) + R"(":""}})" "\n\n");
    }
    events.feed(R"({"type":"result","results":{"text":"the same type again replaces its value"}})" "\n\n");
    const bool truncated = events.result().output_truncated;
    const auto code = events.take_code();
    std::size_t held = 0;
    for (const auto& [type, value] : code.results) held += type.size() + value.size();
    EXPECT_LE(held, limit);
    EXPECT_TRUE(truncated);
}

}  // namespace

TEST(execd_stream, an_event_that_is_not_one_json_object_is_malformed) {
    for (const std::string event : {R"({"type":"stdout","text":"cut)", R"({"type":"stdout"} {"type":"stderr"})", "[1,2]",
                                    "not json"}) {
        execd_stream events(1 << 20);
        events.feed(R"({"type":"stdout","text":"before"})" "\n\n");
        try {
            events.feed("data: " + event + "\n\n");
            ADD_FAILURE() << event << ": accepted";
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), ngfail::opensandbox::errc::malformed_response) << event;
        }
        EXPECT_EQ(events.result().stdout_text, "before\n") << "what came before stays: " << event;
    }
}

// Events of every size, some past the room the reader parses them in on the stack.
TEST(execd_stream, every_event_of_a_long_stream_is_read_whole) {
    execd_stream events(1 << 20);
    std::string expected;
    for (int i = 0; i < 1000; ++i) {
        const std::string text = std::to_string(i) + std::string(i % 50 == 0 ? 5000 : static_cast<std::size_t>(i % 300), 'x') + "\n";
        expected += text;
        events.feed(R"({"type":"stdout","text":")" + text.substr(0, text.size() - 1) + R"(\n","timestamp":)" +
                    std::to_string(i) + "}\n\n");
    }
    events.feed(R"({"type":"execution_complete","execution_time":1})" "\n\n");
    EXPECT_TRUE(events.terminal());
    EXPECT_EQ(events.result().stdout_text, expected);
}

// Simple events are read without a DOM: these hold what the DOM reading gave.
TEST(execd_stream, a_simple_event_reads_as_its_json_says) {
    execd_stream events(1 << 20);
    events.feed(R"({"text":"first\n","type":"stdout"})" "\n\n");                          // text before type
    events.feed(R"({"type":"stdout","meta":{"type":"stderr","text":"no"},"text":"2\n"})" "\n\n");  // nested members
    events.feed(R"({"ty\u0070e":"stdout","text":"q\"\\\u00e9\n","list":[{"text":"no"}]})" "\n\n");  // escapes
    events.feed(R"({"type":"stdout","text":7})" "\n\n");                                    // text not a string: ""
    events.feed(R"({"type":7,"text":"ignored"})" "\n\n");                                   // type not a string
    events.feed(R"({"type":{"x":1},"text":"ignored"})" "\n\n");
    events.feed(R"({"type":"stderr","text":"e\n","timestamp":1,"more":[1,2,{"a":null}]})" "\n\n");
    events.feed(R"({"type":"init","text":"exec-1"})" "\n\n");
    EXPECT_EQ(events.result().stdout_text, "first\n2\nq\"\\\xc3\xa9\n");
    EXPECT_EQ(events.result().stderr_text, "e\n");
    EXPECT_EQ(events.result().execution_id, "exec-1");
    EXPECT_FALSE(events.terminal());
    events.feed(R"({"type":"execution_complete","execution_time":3})" "\n\n");
    EXPECT_TRUE(events.terminal());
    EXPECT_EQ(events.result().exit_code, 0);
}

namespace {

struct outcome {
    std::string stdout_text, stderr_text, execution_id;
    std::optional<int> exit_code;
    bool terminal = false;
    bool operator==(const outcome&) const = default;
};

outcome read_event(const std::string& event) {
    execd_stream events(1 << 20);
    events.feed(event + "\n\n");
    return {events.result().stdout_text, events.result().stderr_text, events.result().execution_id,
            events.result().exit_code, events.terminal()};
}

// A JSON string body holding every printable ASCII byte, and the escapes execd's encoder uses.
std::string every_printable_escaped() {
    std::string out;
    for (char c = 0x20; c < 0x7f; ++c) out += c == '"' ? std::string(R"(\")") : c == '\\' ? std::string(R"(\\)") : std::string(1, c);
    return out + R"(\n\t\r\b\f\/)";
}

}  // namespace

// execd's simple events, as its encoder writes them, are read in one pass: each must read as
// the parser reads the same event written another way (a space after the brace, which the
// one-pass reader leaves to the parser).
TEST(execd_stream, an_event_as_execd_writes_it_reads_as_the_parser_reads_it) {
    for (const std::string type : {"init", "stdout", "stderr", "ping", "status", "execution_complete", "future_kind"}) {
        for (const std::string& text : {std::string(), std::string("1"), every_printable_escaped(), std::string(R"(\"\\)")}) {
            for (const bool with_text : {false, true}) {
                for (const std::string timestamp : {"", ",\"timestamp\":1733000000000", ",\"timestamp\":0",
                                                    ",\"execution_time\":12,\"timestamp\":1", ",\"execution_time\":0"}) {
                    const std::string members = R"("type":")" + type + '"' +
                                                (with_text ? R"(,"text":")" + text + '"' : std::string()) + timestamp;
                    const outcome one_pass = read_event("{" + members + "}");
                    const outcome parsed = read_event("{ " + members + "}");
                    EXPECT_EQ(one_pass, parsed) << members;
                }
            }
        }
    }
    EXPECT_EQ(read_event(R"({"type":"stdout","text":"a\n\"b\"\\"})").stdout_text, "a\n\"b\"\\\n");
    EXPECT_EQ(read_event(R"({"type":"init","text":"exec-1","timestamp":1})").execution_id, "exec-1");
}

// Real execd sends output a line per event, without its end (it tails the command's log by
// line; a blank line is "\n"): the result holds the lines as the command wrote them. Joined
// as they came, "a" and "b" would read "ab".
TEST(execd_stream, output_events_are_lines_as_execd_sends_them) {
    execd_stream events(1 << 20);
    for (const char* text : {"a", "b", "\\n", "c"}) {
        events.feed(std::string(R"({"type":"stdout","text":")") + text + R"("})" "\n\n");
    }
    events.feed(R"({"type":"stderr","text":"warning"})" "\n\n");
    events.feed(R"({"type":"stdout","text":"whole\nlines\n"})" "\n\n");  // a server that sends output whole
    EXPECT_EQ(events.result().stdout_text, "a\nb\n\nc\nwhole\nlines\n");
    EXPECT_EQ(events.result().stderr_text, "warning\n");
}

// What the one-pass reader leaves to the parser is still judged by it: not JSON is malformed.
TEST(execd_stream, an_event_near_execd_s_form_that_is_not_json_is_malformed) {
    for (const std::string& event : {std::string(R"({"type":"stdout","text":"a)") + '\x01' + R"("})",
                                    std::string(R"({"type":"stdout","text":"\q"})"),
                                    std::string(R"({"type":"stdout","text":"\)"),
                                    std::string(R"({"type":"stdout","timestamp":0123})"),
                                    std::string(R"({"type":"stdout","timestamp":})"),
                                    std::string(R"({"type":"stdout","execution_time":-})"),
                                    std::string(R"({"type":"stdout","execution_time":1,"timestamp":01})"),
                                    std::string(R"({"type":"stdout","text":"x"}})"),
                                    std::string(R"({"type":"stdout","text":"x")"),
                                    std::string(R"({"type":"stdout)")}) {
        try {
            (void)read_event(event);
            ADD_FAILURE() << event << ": accepted";
        } catch (const std::system_error& e) {
            EXPECT_EQ(e.code(), ngfail::opensandbox::errc::malformed_response) << event;
        }
    }
}

// Events as execd's own encoder writes them: these lines are what Go 1.23's encoding/json
// printed for execd's ServerStreamEvent fields (type, text, execution_count, execution_time,
// timestamp; omitempty), HTML characters as \u escapes and non-ASCII raw, as execd sends them.
TEST(execd_stream, events_as_go_s_encoder_writes_them_read_as_execd_meant) {
    execd_stream events(1 << 20);
    events.feed(R"({"type":"init","text":"0b9e1c2a-run","timestamp":1733000000000})" "\n\n"
                R"({"type":"stdout","text":"1\n","timestamp":1733000000001})" "\n\n"
                R"({"type":"stderr","text":"tab\there \"q\" back\\slash \u003ca\u0026b\u003e\r\n","timestamp":1733000000002})" "\n\n"
                "{\"type\":\"stdout\",\"text\":\"caf\xc3\xa9 \\u2028\\n\",\"timestamp\":1733000000003}\n\n"
                R"({"type":"execution_complete","execution_time":12,"timestamp":1733000000004})" "\n\n");
    EXPECT_EQ(events.result().execution_id, "0b9e1c2a-run");
    EXPECT_EQ(events.result().stdout_text, "1\ncaf\xc3\xa9 \xe2\x80\xa8\n");
    EXPECT_EQ(events.result().stderr_text, "tab\there \"q\" back\\slash <a&b>\r\n");
    EXPECT_TRUE(events.terminal());
    EXPECT_EQ(events.result().exit_code, 0);
}
