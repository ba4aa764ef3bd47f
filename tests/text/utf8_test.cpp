#include "text/utf8.hpp"

#include <gtest/gtest.h>

namespace {

using ngfail::text::is_valid_utf8;
using ngfail::text::valid_utf8;

TEST(valid_utf8, keeps_valid_text_as_it_is) {
    for (const std::string_view text : {"", "plain", "caf\xc3\xa9", "\xe2\x80\xa6", "\xf0\x9f\x99\x82"}) {
        EXPECT_TRUE(is_valid_utf8(text)) << text;
        EXPECT_EQ(valid_utf8(text), text);
    }
}

TEST(valid_utf8, replaces_each_byte_that_starts_no_strict_character) {
    // a stray continuation, a lead without its tail, an overlong '/', a surrogate, past U+10FFFF
    for (const std::string_view bad : {"\x80", "\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"}) {
        EXPECT_FALSE(is_valid_utf8(bad));
        const std::string fixed = valid_utf8(bad);
        EXPECT_TRUE(is_valid_utf8(fixed));
        EXPECT_EQ(fixed.size(), bad.size() * 3) << "one U+FFFD a byte";
    }
    EXPECT_EQ(valid_utf8("a\xff" "b"), "a\xef\xbf\xbd" "b");
}

TEST(complete_prefix, holds_back_only_a_character_the_piece_has_begun_and_not_ended) {
    using ngfail::text::complete_prefix;
    EXPECT_EQ(complete_prefix(""), 0u);
    EXPECT_EQ(complete_prefix("plain"), 5u);
    EXPECT_EQ(complete_prefix("caf\xc3\xa9"), 5u) << "an ended character goes out";
    EXPECT_EQ(complete_prefix("caf\xc3"), 3u);
    EXPECT_EQ(complete_prefix("a\xf0\x9f\x99"), 1u) << "three bytes of four";
    EXPECT_EQ(complete_prefix("a\xf0\x9f\x99\x82"), 5u);
    EXPECT_EQ(complete_prefix("\x80\x80\x80\x80\x80"), 5u) << "no lead in reach: nothing to wait for";
}

}  // namespace
