// one_line: text from a stranger printed on a terminal shows its controls, never obeys them.
#include <ngfail/one_line.hpp>

#include <gtest/gtest.h>

namespace {

using ngfail::one_line;

TEST(one_line, c0_controls_and_del_are_escaped) {
    EXPECT_EQ(one_line("red\x1b[31m\x7f\x07"), "red\\x1b[31m\\x7f\\x07");
    EXPECT_EQ(one_line("a\nb\rc\td"), "a\\nb\\rc\\td");
    EXPECT_EQ(one_line(std::string_view("nul\0!", 5)), "nul\\x00!");
}

TEST(one_line, c1_controls_are_escaped_as_characters_and_as_lone_bytes) {
    EXPECT_EQ(one_line("csi\xc2\x9b" "2J"), "csi\\u009b2J");  // U+009B in UTF-8
    EXPECT_EQ(one_line("csi\x9b" "2J"), "csi\\x9b2J");        // the 8-bit terminal's CSI
    EXPECT_EQ(one_line("\x80\xbf"), "\\x80\\xbf");
}

TEST(one_line, bidirectional_formatting_is_escaped) {
    // "txt.exe" shown as it is, not reordered by U+202E into "exe.txt".
    EXPECT_EQ(ngfail::one_line("report\u202Etxt.exe"), "report\\u202etxt.exe");
    EXPECT_EQ(ngfail::one_line("\u2066a\u2069\u200f\u061c"), "\\u2066a\\u2069\\u200f\\u061c");
    EXPECT_EQ(ngfail::one_line("\u2010\u202f"), "\u2010\u202f") << "their neighbours are kept";
}

TEST(one_line, invalid_utf8_is_escaped_byte_by_byte) {
    EXPECT_EQ(one_line("\xff\xfe"), "\\xff\\xfe");
    EXPECT_EQ(one_line("\xc0\xaf"), "\\xc0\\xaf");          // an overlong '/'
    EXPECT_EQ(one_line("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
    EXPECT_EQ(one_line("cut \xe2\x82"), "cut \\xe2\\x82");
}

TEST(one_line, other_utf8_is_kept) {
    EXPECT_EQ(one_line("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82 \\x1b"), "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82 \\x1b");
}

TEST(one_line, is_cut_at_max_bytes_never_inside_a_character) {
    EXPECT_EQ(one_line("abcdef", 4), "abcd...");
    EXPECT_EQ(one_line("abcd", 4), "abcd");
    EXPECT_EQ(one_line("ab\xe2\x86\x92", 4), "ab...");  // the arrow's 3 bytes do not fit
    EXPECT_EQ(one_line(std::string(300, 'x')), std::string(200, 'x') + "...");
}

}  // namespace
