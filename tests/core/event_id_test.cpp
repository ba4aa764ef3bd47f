#include <ngfail/event_id.hpp>
#include <ngfail/failure.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <sstream>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>
#include <unordered_set>
#include <vector>

namespace {

using ngfail::event_id;

TEST(event_id, generated_ids_are_uuid_version_7_with_the_rfc_variant) {
    for (int i = 0; i < 1000; ++i) {
        const auto id = event_id::generate();
        EXPECT_EQ(id.bytes()[6] >> 4, 7);
        EXPECT_EQ(id.bytes()[8] & 0xc0, 0x80);
    }
}

TEST(event_id, timestamp_is_the_current_unix_millisecond) {
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    const auto ms = static_cast<long long>(event_id::generate().unix_ms());
    EXPECT_LT(std::llabs(ms - now), 5000);
}

TEST(event_id, text_form_is_canonical_lowercase_and_round_trips) {
    const auto id = event_id::generate();
    const std::string text = ngfail::to_string(id);
    ASSERT_EQ(text.size(), 36u);
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            EXPECT_EQ(text[i], '-');
        } else {
            EXPECT_TRUE((text[i] >= '0' && text[i] <= '9') || (text[i] >= 'a' && text[i] <= 'f')) << text;
        }
    }
    EXPECT_EQ(text[14], '7');
    EXPECT_EQ(ngfail::parse_event_id(text), id);
}

TEST(event_id, parse_reads_a_known_id_byte_for_byte) {
    const auto id = ngfail::parse_event_id("0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17");
    ASSERT_TRUE(id);
    EXPECT_EQ(id->bytes()[0], 0x01);
    EXPECT_EQ(id->bytes()[15], 0x17);
    EXPECT_EQ(id->unix_ms(), 0x0192f1c47d2aULL);
    EXPECT_EQ(ngfail::to_string(*id), "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17");
    EXPECT_EQ(ngfail::parse_event_id("0192F1C4-7D2A-7C3E-9A51-2B8F6C0D4E17"), id) << "upper case is read too";
}

TEST(event_id, parse_rejects_what_is_not_a_uuid) {
    for (const std::string_view bad : {"", "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e1", "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e177",
                                       "0192f1c47d2a-7c3e-9a51-2b8f6c0d4e17-", "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e1g",
                                       "0192f1c4+7d2a-7c3e-9a51-2b8f6c0d4e17", "{192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17"}) {
        EXPECT_EQ(ngfail::parse_event_id(bad), std::nullopt) << bad;
    }
}

// The parser reads eight digits at a time: every byte value at every position must be judged
// as a digit-by-digit reader would judge it, and every digit must land in its own byte.
TEST(event_id, parse_judges_every_byte_at_every_position_as_one_digit_at_a_time_would) {
    const std::string good = "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17";
    const auto digit_value = [](unsigned char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    for (std::size_t at = 0; at < good.size(); ++at) {
        const bool dash = at == 8 || at == 13 || at == 18 || at == 23;
        for (int c = 0; c < 256; ++c) {
            std::string text = good;
            text[at] = static_cast<char>(c);
            const auto parsed = ngfail::parse_event_id(text);
            const bool valid = dash ? c == '-' : digit_value(static_cast<unsigned char>(c)) >= 0;
            ASSERT_EQ(parsed.has_value(), valid) << "byte " << c << " at " << at;
            if (!valid || dash) continue;
            std::string lower = text;
            for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            ASSERT_EQ(ngfail::to_string(*parsed), lower) << "byte " << c << " at " << at;
        }
    }
}

// The text form is made four bytes at a time: every byte value at every position must come
// out as its own two lowercase digits, in place, with the dashes where they belong.
TEST(event_id, format_writes_every_byte_at_every_position_as_two_digits) {
    constexpr char digits[] = "0123456789abcdef";
    constexpr std::size_t digit_at[16] = {0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34};
    for (std::size_t at = 0; at < 16; ++at) {
        for (int value = 0; value < 256; ++value) {
            event_id::bytes_type bytes{};
            for (std::size_t i = 0; i < 16; ++i) bytes[i] = static_cast<std::uint8_t>(0x11 * (i % 16));
            bytes[at] = static_cast<std::uint8_t>(value);
            std::string expected;
            for (std::size_t i = 0; i < 16; ++i) {
                if (i == 4 || i == 6 || i == 8 || i == 10) expected += '-';
                expected += digits[bytes[i] >> 4];
                expected += digits[bytes[i] & 0xf];
            }
            ASSERT_EQ(ngfail::to_string(event_id{bytes}), expected) << "byte " << value << " at " << at;
            ASSERT_EQ(expected[digit_at[at]], digits[value >> 4]);
        }
    }
}

TEST(event_id, default_is_nil) {
    EXPECT_TRUE(event_id{}.is_nil());
    EXPECT_FALSE(event_id::generate().is_nil());
    EXPECT_EQ(ngfail::to_string(event_id{}), "00000000-0000-0000-0000-000000000000");
}

TEST(event_id, ids_strictly_increase_within_a_thread) {
    auto previous = event_id::generate();
    for (int i = 0; i < 200000; ++i) {
        const auto next = event_id::generate();
        ASSERT_LT(previous, next) << "at " << i << ": " << ngfail::to_string(previous) << " then "
                                  << ngfail::to_string(next);
        ASSERT_LT(ngfail::to_string(previous), ngfail::to_string(next)) << "text sorts the same way";
        previous = next;
    }
}

TEST(event_id, ids_are_unique_across_eight_threads) {
    constexpr int threads = 8;
    constexpr int per_thread = 100000;
    std::vector<std::vector<event_id>> made(threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&made, t] {
            made[t].reserve(per_thread);
            for (int i = 0; i < per_thread; ++i) made[t].push_back(event_id::generate());
        });
    }
    for (auto& w : workers) w.join();
    std::vector<event_id> all;
    for (const auto& v : made) all.insert(all.end(), v.begin(), v.end());
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a duplicate id";
    EXPECT_EQ(all.size(), std::size_t{threads * per_thread});
}

TEST(event_id, is_hashable) {
    std::unordered_set<event_id> ids;
    for (int i = 0; i < 1000; ++i) ids.insert(event_id::generate());
    EXPECT_EQ(ids.size(), 1000u);
}

TEST(event_id, forked_children_make_different_ids) {
    (void)event_id::generate();  // the parent's generator is seeded before the fork
    std::array<int, 2> pipes[2]{};
    std::array<pid_t, 2> children{};
    for (int c = 0; c < 2; ++c) {
        ASSERT_EQ(::pipe(pipes[c].data()), 0);
        children[c] = ::fork();
        ASSERT_GE(children[c], 0);
        if (children[c] == 0) {
            const auto id = event_id::generate();
            const bool written = ::write(pipes[c][1], id.bytes().data(), 16) == 16;
            ::_exit(written ? 0 : 1);
        }
        ::close(pipes[c][1]);
    }
    std::array<event_id::bytes_type, 2> ids{};
    for (int c = 0; c < 2; ++c) {
        ASSERT_EQ(::read(pipes[c][0], ids[c].data(), 16), 16);
        ::close(pipes[c][0]);
        int status = 0;
        ::waitpid(children[c], &status, 0);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    EXPECT_NE(ids[0], ids[1]) << "two children of one parent made the same id";
    EXPECT_NE(event_id(ids[0]), event_id::generate());
}

}  // namespace

namespace {

TEST(printing, an_id_prints_as_its_text_and_reads_back) {
    const auto id = ngfail::event_id::generate();
    std::ostringstream out;
    out << id;
    EXPECT_EQ(ngfail::parse_event_id(out.str()), id);
}

TEST(printing, kinds_and_facts_print_their_wire_names_and_read_back) {
    std::ostringstream out;
    out << ngfail::kind::provider_oom_killed << ' ' << ngfail::delivery::not_sent << ' ' << ngfail::stage::agent << ' '
        << ngfail::boundary::harness << ' ' << ngfail::domain::transport;
    EXPECT_EQ(out.str(), "provider_oom_killed not_sent agent harness transport");
    EXPECT_EQ(ngfail::parse_kind("provider_oom_killed"), ngfail::kind::provider_oom_killed);
}

TEST(printing, a_failure_prints_what_and_its_id) {
    std::ostringstream out;
    out << ngfail::failure(ngfail::event_info{.kind = ngfail::kind::agent_timeout, .reason = "took 60 s"});
    EXPECT_THAT(out.str(), testing::StartsWith("agent_timeout: took 60 s"));
    std::ostringstream none;
    none << ngfail::failure{};
    EXPECT_EQ(none.str(), "no failure");
}

}  // namespace
