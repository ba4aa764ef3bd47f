#include "text/printable.hpp"

#include <gtest/gtest.h>

namespace {

using ngfail::text::printable;

TEST(printable, keeps_printable_ascii) { EXPECT_EQ(printable("abc XYZ 0-9 :_", 100), "abc XYZ 0-9 :_"); }

TEST(printable, escapes_controls_quotes_backslashes_and_non_ascii) {
    EXPECT_EQ(printable(std::string_view("a\nb\0c", 5), 100), "a\\x0ab\\x00c");
    EXPECT_EQ(printable("\"q\\", 100), "\\x22q\\x5c");
    EXPECT_EQ(printable("\xc3\xa9\x7f", 100), "\\xc3\\xa9\\x7f");
}

TEST(printable, cuts_long_input_and_marks_the_cut) {
    EXPECT_EQ(printable("abcdef", 3), "abc...");
    EXPECT_EQ(printable("abc", 3), "abc");
}

}  // namespace
