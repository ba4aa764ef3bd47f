#include "opensandbox/emulator/glob.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using ngfail::opensandbox::emulator::glob_match;
using ngfail::opensandbox::emulator::glob;

struct glob_case {
    const char* pattern;
    const char* name;
    bool matches;
};

TEST(glob, matches_as_execds_search_does) {
    const glob_case cases[] = {
        {"**", "anything.txt", true},      {"*", "", true},                  {"*.txt", "a.txt", true},
        {"*.txt", "a.txt.bak", false},     {"a?c", "abc", true},             {"a?c", "ac", false},
        {"[ab]*", "bz", true},             {"[!ab]*", "bz", false},          {"[^ab]*", "cz", true},
        {"file[0-9].log", "file7.log", true}, {"file[0-9].log", "filex.log", false},
        {"*.{py,txt}", "a.py", true},      {"*.{py,txt}", "a.txt", true},    {"*.{py,txt}", "a.md", false},
        {"{a,b{c,d}}", "bd", true},        {"\\*", "*", true},               {"\\*", "a", false},
        {"[]]", "]", true},                {"*a*b*c", "xaybzc", true},       {"*a*b*c", "xaybz", false},
    };
    for (const auto& c : cases) {
        EXPECT_EQ(glob_match(c.pattern, c.name), c.matches) << c.pattern << " against " << c.name;
    }
}

TEST(glob, a_malformed_pattern_is_said_to_be_one) {
    for (const char* bad : {"[abc", "{a,b", "a\\", "*.{py,[x}"}) {
        EXPECT_EQ(glob_match(bad, "a"), std::nullopt) << bad;
    }
}

TEST(glob, a_strangers_pattern_costs_bounded_work) {
    const std::string name(10'000, 'a');
    EXPECT_EQ(glob_match("*a*a*a*a*a*a*a*a*a*a*a*a*b", name), false);  // no exponential backtracking
    EXPECT_EQ(glob_match("{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", "a"), std::nullopt) << "512 alternatives";
    EXPECT_EQ(glob_match(std::string(5000, '?'), "a"), std::nullopt) << "longer than any pattern needs";
}

TEST(glob, a_compiled_pattern_matches_many_names_as_one_call_each_would) {
    const auto g = glob::compile("*.{py,txt}");
    ASSERT_TRUE(g);
    for (const char* name : {"a.py", "b.txt", "c.pyc", "d", ".py"}) {
        EXPECT_EQ(g->matches(name), glob_match("*.{py,txt}", name).value()) << name;
    }
    EXPECT_FALSE(glob::compile("{a,b"));
}

}  // namespace
