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

}  // namespace
