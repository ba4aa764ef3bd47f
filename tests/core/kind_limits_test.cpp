// Interning is bounded: hostile input cannot grow the process-wide table forever. Its own
// binary, because filling the table changes what every later unknown name maps to.
#include <ngfail/kind.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

constexpr std::string_view overflow_name = "ngfail:unknown_kind_overflow";

// Each test fills the table, so each needs a fresh process (ctest runs every test alone).
#define REQUIRE_FRESH_TABLE(probe)                                                 \
    if (ngfail::kind_from_name(probe).value() != 1)                                \
    GTEST_SKIP() << "needs a process of its own: run it through ctest or --gtest_filter"

TEST(kind_limits, past_the_intern_limit_names_share_the_overflow_code) {
    REQUIRE_FRESH_TABLE("limit_kind_0");
    std::vector<std::error_code> codes{ngfail::kind_from_name("limit_kind_0")};
    std::error_code overflow;
    for (int i = 1; i < 20000 && !overflow; ++i) {
        const auto ec = ngfail::kind_from_name("limit_kind_" + std::to_string(i));
        if (ngfail::kind_name(ec) == overflow_name) {
            overflow = ec;
        } else {
            codes.push_back(ec);
        }
    }
    ASSERT_TRUE(overflow) << "interned 20,000 names without reaching a limit";
    EXPECT_EQ(codes.size(), 16384u);
    EXPECT_EQ(ngfail::kind_from_name("another_name_past_the_limit"), overflow);
    EXPECT_EQ(ngfail::kind_from_name(overflow_name), overflow);
    for (std::size_t i = 0; i < codes.size(); i += 997) {
        EXPECT_EQ(ngfail::kind_name(codes[i]), "limit_kind_" + std::to_string(i)) << "earlier names stay";
        EXPECT_EQ(ngfail::kind_from_name("limit_kind_" + std::to_string(i)), codes[i]);
    }
    EXPECT_EQ(ngfail::kind_from_name("provider_oom_killed"), ngfail::kind::provider_oom_killed)
        << "core names never need the table";
}

TEST(kind_limits, interned_bytes_are_bounded_too) {
    REQUIRE_FRESH_TABLE("x");
    const std::string big(4096, 'x');
    std::error_code last;
    int interned = 0;
    for (int i = 0; i < 1000; ++i) {
        last = ngfail::kind_from_name(std::to_string(i) + big);
        if (ngfail::kind_name(last) == overflow_name) break;
        ++interned;
    }
    EXPECT_EQ(ngfail::kind_name(last), overflow_name);
    EXPECT_LE(interned * big.size(), std::size_t{1} << 20);
    EXPECT_GE(interned, 200);
}

}  // namespace
