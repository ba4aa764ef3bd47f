// The client's reading and making of execd's terminal frames (pty_ws.go's format).
#include "opensandbox/client/terminal_frames.hpp"

#include <gtest/gtest.h>

namespace {

using namespace ngfail::opensandbox;
using detail::parse_terminal_frame;

TEST(terminal_frames, output_carries_its_channel_and_the_offset_it_starts_at) {
    const auto out = std::get<terminal_output>(parse_terminal_frame(true, std::string("\x01hi", 3), 40));
    EXPECT_EQ(out.stream, terminal_stream::stdout_bytes);
    EXPECT_EQ(out.offset, 40);
    EXPECT_EQ(out.bytes, "hi");
    const auto err = std::get<terminal_output>(parse_terminal_frame(true, std::string("\x02!", 2), 0));
    EXPECT_EQ(err.stream, terminal_stream::stderr_bytes);
}

TEST(terminal_frames, a_replay_reads_its_big_endian_offset) {
    const std::string frame("\x03\x00\x00\x00\x00\x00\x00\x01\x02old", 12);
    const auto replay = std::get<terminal_output>(parse_terminal_frame(true, frame, 0));
    EXPECT_EQ(replay.stream, terminal_stream::replay);
    EXPECT_EQ(replay.offset, 258);
    EXPECT_EQ(replay.bytes, "old");
}

TEST(terminal_frames, what_execd_never_sends_is_malformed) {
    for (const std::string& frame : {std::string(), std::string("\x00in", 3), std::string("\x09x", 2),
                                    std::string("\x03\x00\x01", 3), std::string("\x03\xff\xff\xff\xff\xff\xff\xff\xff", 9)}) {
        EXPECT_TRUE(std::holds_alternative<detail::malformed_frame>(parse_terminal_frame(true, frame, 0)))
            << frame.size();
    }
    for (const char* text : {"not json", "[1]", R"({"no":"type"})", R"({"type":"exit"})",
                             R"({"type":"exit","exit_code":"3"})", R"({"type":"exit","exit_code":9999999999})"}) {
        EXPECT_TRUE(std::holds_alternative<detail::malformed_frame>(parse_terminal_frame(false, text, 0))) << text;
    }
}

// An offset is `offset + size` after the frame: one that would pass 2^63 - 1 is a hostile
// server's, never wrapped into a negative offset.
TEST(terminal_frames, output_that_would_end_past_the_largest_offset_is_malformed) {
    const std::string last_byte("\x03\x7f\xff\xff\xff\xff\xff\xff\xfe!", 10);  // 2^63 - 2, one byte
    const auto fits = std::get<terminal_output>(parse_terminal_frame(true, last_byte, 0));
    EXPECT_EQ(fits.offset, INT64_MAX - 1) << "ends exactly at the largest offset";
    const std::string past("\x03\x7f\xff\xff\xff\xff\xff\xff\xfe" "ab", 11);
    EXPECT_TRUE(std::holds_alternative<detail::malformed_frame>(parse_terminal_frame(true, past, 0)));
    EXPECT_TRUE(std::holds_alternative<detail::malformed_frame>(
        parse_terminal_frame(true, std::string("\x01hi", 3), INT64_MAX - 1)))
        << "live output after a replay that ended near the largest offset";
    EXPECT_TRUE(std::holds_alternative<detail::malformed_frame>(parse_terminal_frame(true, std::string("\x01hi", 3), -1)))
        << "a negative offset is never one to start at";
}

TEST(terminal_frames, json_frames_connected_exit_error_and_what_is_ignored) {
    EXPECT_EQ(std::get<detail::connected_frame>(
                  parse_terminal_frame(false, R"({"type":"connected","session_id":"s","mode":"pipe"})", 0))
                  .mode,
              "pipe");
    EXPECT_EQ(std::get<terminal_exit>(parse_terminal_frame(false, R"({"type":"exit","exit_code":-1})", 0)).exit_code, -1);
    EXPECT_EQ(std::get<detail::error_frame>(
                  parse_terminal_frame(false, R"({"type":"error","error":"taken","code":"ALREADY_CONNECTED"})", 0))
                  .code,
              "ALREADY_CONNECTED");
    EXPECT_TRUE(std::holds_alternative<detail::ignored_frame>(parse_terminal_frame(false, R"({"type":"pong"})", 0)));
    EXPECT_TRUE(std::holds_alternative<detail::ignored_frame>(parse_terminal_frame(false, R"({"type":"news"})", 0)));
}

TEST(terminal_frames, what_the_client_sends) {
    EXPECT_EQ(detail::stdin_frame("ls\r"), std::string("\x00ls\r", 4));
    EXPECT_EQ(detail::resize_frame(120, 40), R"({"type":"resize","cols":120,"rows":40})");
    EXPECT_EQ(detail::signal_frame("SIGINT"), R"({"type":"signal","signal":"SIGINT"})");
}

}  // namespace
