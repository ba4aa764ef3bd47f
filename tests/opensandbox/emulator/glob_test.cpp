#include "opensandbox/emulator/glob.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace {

using ngfail::opensandbox::testing::detail::glob;
using ngfail::opensandbox::testing::detail::glob_error;
using ngfail::opensandbox::testing::detail::glob_match;

std::string repeated(std::string_view piece, int times) {
    std::string out;
    for (int i = 0; i < times; ++i) out += piece;
    return out;
}

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
    std::uint64_t steps = glob::max_steps;
    for (const char* name : {"a.py", "b.txt", "c.pyc", "d", ".py"}) {
        EXPECT_EQ(g->matches(name, steps), glob_match("*.{py,txt}", name).value()) << name;
    }
    EXPECT_FALSE(glob::compile("{a,b"));
}

TEST(glob, a_pattern_past_a_bound_is_refused_with_the_bound_it_passed) {
    const std::vector<std::pair<std::string, glob_error>> refused{
        {std::string(4097, 'a'), glob_error::too_long},
        {repeated("{a,b}", 9), glob_error::too_branching},
        {repeated("{a,b}", 8) + std::string(1100, 'a'), glob_error::too_large},  // 256 alternatives of 1,108 bytes
        {"{a,b", glob_error::malformed},
    };
    for (const auto& [pattern, bound] : refused) {
        glob_error why{};
        EXPECT_FALSE(glob::compile(pattern, why)) << pattern.substr(0, 40);
        EXPECT_EQ(why, bound) << pattern.substr(0, 40);
    }
    EXPECT_TRUE(glob::compile(std::string(4096, 'a')));
    EXPECT_TRUE(glob::compile(repeated("{a,b}", 8) + std::string(1000, 'a'))) << "256 alternatives of 1,008 bytes";
}

// A search spends one budget over every name it tries: one failing late at every start costs
// about the product of the lengths, which is what the budget bounds.
TEST(glob, matching_spends_its_steps_and_stops_when_they_run_out) {
    const auto g = glob::compile("*" + std::string(127, 'a') + "b");
    ASSERT_TRUE(g);
    const std::string name(255, 'a');
    std::uint64_t plenty = glob::max_steps;
    EXPECT_EQ(g->matches(name, plenty), false);
    const std::uint64_t spent = glob::max_steps - plenty;
    EXPECT_GT(spent, 127u * 128u) << "each of 128 starts tries 128 characters";
    std::uint64_t too_few = spent - 1;
    EXPECT_EQ(g->matches(name, too_few), std::nullopt);
}

}  // namespace
