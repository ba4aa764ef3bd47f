#include <ngfail/replay.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <sstream>

namespace {

using ngfail::delivery;
using ngfail::replay_allowed;
using ngfail::replay_policy;

TEST(replay_allowed, only_idempotent_and_deduplicated_requests_repeat_what_may_have_arrived) {
    const std::optional<delivery> deliveries[] = {delivery::not_sent, delivery::possibly_delivered,
                                                  delivery::delivered, std::nullopt};
    for (const auto d : deliveries) {
        EXPECT_EQ(replay_allowed(replay_policy::before_delivery, d), d == delivery::not_sent);
        EXPECT_TRUE(replay_allowed(replay_policy::idempotent, d));
        EXPECT_TRUE(replay_allowed(replay_policy::deduplicated, d));
        EXPECT_FALSE(replay_allowed(replay_policy::never, d));
    }
}

TEST(replay_policy, names_round_trip_and_print) {
    for (const auto p : {replay_policy::before_delivery, replay_policy::idempotent, replay_policy::deduplicated,
                         replay_policy::never}) {
        EXPECT_EQ(ngfail::parse_replay_policy(ngfail::name(p)), p);
        std::ostringstream out;
        out << p;
        EXPECT_EQ(out.str(), ngfail::name(p));
    }
    EXPECT_FALSE(ngfail::parse_replay_policy("sometimes"));
    static_assert(!replay_allowed(replay_policy::before_delivery, delivery::possibly_delivered));
}

}  // namespace
