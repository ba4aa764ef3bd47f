// The emulator's names before #42, when it was declared in ngfail::opensandbox and brought by
// <ngfail/opensandbox.hpp>: kept for one release, so code written with them (the examples,
// the README) compiles unchanged and means the same. This program links the emulator, as such
// code now does, and includes only the header it used. Goes with the aliases.
#include <ngfail/opensandbox.hpp>

#include <gtest/gtest.h>

#include <type_traits>

namespace {

namespace before = ngfail::opensandbox;
namespace now = ngfail::opensandbox::testing;

static_assert(std::is_same_v<before::embedded_server, now::embedded_server>);
static_assert(std::is_same_v<before::server_options, now::server_options>);
static_assert(std::is_same_v<before::fault, now::fault>);
static_assert(std::is_same_v<before::fault::action, now::fault::action>);
static_assert(std::is_same_v<before::backend, now::backend>);

TEST(emulator_old_names, a_server_and_a_fault_written_the_old_way_serve_and_fire) {
    before::embedded_server server(before::server_options{.api_key = "sk-old", .backend = before::backend::docker});
    auto busy = before::fault::http_error("create", 429, "QUOTA_EXCEEDED", "slow down");
    server.inject(busy);
    before::client sandboxes({.port = server.port(), .api_key = "sk-old"});
    const auto refused = sandboxes.try_create({});
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), ngfail::kind::provider_quota_exhausted);
    EXPECT_TRUE(sandboxes.try_create({})) << "the fault fired once, then the server served";
}

TEST(emulator_old_names, the_old_functions_are_the_testing_namespaces) {
    EXPECT_EQ(before::name(before::backend::docker), "docker");
    EXPECT_EQ(before::parse_backend("kubernetes"), now::backend::kubernetes);
    EXPECT_EQ(before::name(before::fault::action::oom_kill), now::name(now::fault::action::oom_kill));
    const auto f = before::parse_fault(R"({"operation":"exec","action":"stall","stall_ms":250})");
    ASSERT_TRUE(f) << f.error().reason();
    EXPECT_EQ(before::to_json(f.value()), now::to_json(f.value()));
    EXPECT_FALSE(before::parse_fault(R"({"operation":"exce"})")) << "a misspelt operation is refused, as ever";
    EXPECT_EQ(before::name(before::operation::exec), "exec") << "the classifier's names are untouched beside them";
}

}  // namespace
