// Policy files: the schema, partial overrides over the defaults, and one clear error (with
// its line) for each kind of bad file.
#include <ngfail/kind_extension.hpp>
#include <ngfail/policy/choose_action.hpp>
#include <ngfail/policy/policy_file.hpp>

#include <gtest/gtest.h>

#include <fstream>

namespace policy_file_test {
enum class failure { patch_failed = 1 };
}
NGFAIL_KIND_EXTENSION(policy_file_test, failure, "pft", "patch_failed");

namespace {

using namespace ngfail::policy;
using ngfail::kind;
using ngfail::stage;

failure_evidence evidence(std::error_code k, std::optional<int> status = {}, std::optional<stage> s = {}) {
    return {.kind = k, .http_status = status, .stage = s};
}
failure_evidence evidence(kind k, std::optional<int> status = {}, std::optional<stage> s = {}) {
    return evidence(make_error_code(k), status, s);
}

outcome_policy parsed(std::string_view text) {
    auto p = parse_outcome_policy(text, "test.yaml");
    EXPECT_TRUE(p) << (p ? "" : std::string(p.error().reason()));
    return p ? std::move(p).value() : outcome_policy{};
}

std::string error_of(std::string_view text) {
    auto p = parse_outcome_policy(text, "test.yaml");
    EXPECT_FALSE(p) << text;
    if (p) return {};
    EXPECT_EQ(p.error().code(), kind::protocol_violation);
    return std::string(p.error().reason());
}

TEST(policy_file, an_empty_file_is_the_defaults) {
    const auto p = parsed("");
    const auto& d = outcome_policy::defaults();
    for (kind k : ngfail::all_kinds()) {
        EXPECT_EQ(choose_action(p, evidence(k)).action, choose_action(d, evidence(k)).action) << name(k);
    }
}

TEST(policy_file, a_partial_file_overrides_key_by_key) {
    const auto p = parsed(R"(
actions:
  status:
    429: fail
  kind:
    provider_oom_killed: {action: fail, terminal: true}
)");
    EXPECT_EQ(choose_action(p, evidence(kind::provider_quota_exhausted, 429)).action, outcome_action::fail);
    const auto oom = choose_action(p, evidence(kind::provider_oom_killed));
    EXPECT_TRUE(oom.terminal);
    EXPECT_EQ(oom.rule.line, 6);
    // Everything the file does not name keeps its default.
    EXPECT_EQ(choose_action(p, evidence(kind::provider_unavailable, 503)).action, outcome_action::retry);
    EXPECT_EQ(choose_action(p, evidence(kind::judge_unparseable)).action, outcome_action::count_as_zero);
    EXPECT_TRUE(choose_action(p, evidence(kind::provider_request_rejected, 400)).terminal);
}

TEST(policy_file, reads_every_section) {
    const auto p = parsed(R"(
classes:
  - {class: sandbox_infrastructure, domain: provider, stage: agent}
  - {class: judge_down, status: 5xx, stage: verification}
  - {class: patching, kind: "pft:patch_failed"}
actions:
  class: {sandbox_infrastructure: retry}
  default: count_as_zero
stages:
  verification:
    class: {judge_down: verify}
supported: [retry, verify]
allowance: {attempts: 5, elapsed_ms: 1000, base_delay_ms: 10, max_delay_ms: 200}
max_rollout_attempts: 7
count_failure_classes_as_zero: [agent_run_error, judge_down]
count_missing_rollouts_as_zero: true
)");
    const auto oom = choose_action(p, evidence(kind::provider_oom_killed, {}, stage::agent));
    EXPECT_EQ(class_name(oom, p), "sandbox_infrastructure");
    EXPECT_EQ(oom.action, outcome_action::retry);
    const auto judge = choose_action(p, evidence(kind::judge_failed, 502, stage::verification), {.saved_answer = true});
    EXPECT_EQ(class_name(judge, p), "judge_down");
    EXPECT_EQ(judge.action, outcome_action::verify) << "the stage's class rule comes before the shared table's 5xx";
    EXPECT_EQ(judge.rule.table, stage::verification);
    const auto patch = choose_action(p, evidence(make_error_code(policy_file_test::failure::patch_failed)));
    EXPECT_EQ(class_name(patch, p), "patching");
    EXPECT_EQ(patch.selected, outcome_action::count_as_zero);
    EXPECT_EQ(patch.refused, refusal::unsupported) << "count_as_zero is not in supported";
    EXPECT_EQ(p.allowance, (allowance_limits{.attempts = 5,
                                             .elapsed = std::chrono::milliseconds(1000),
                                             .base_delay = std::chrono::milliseconds(10),
                                             .max_delay = std::chrono::milliseconds(200)}));
    EXPECT_EQ(p.max_rollout_attempts, 7);
    ASSERT_EQ(p.count_as_zero_classes.size(), 2U);
    EXPECT_EQ(p.class_name(p.count_as_zero_classes[1]), "judge_down");
    EXPECT_TRUE(p.count_missing_as_zero);
}

TEST(policy_file, json_is_read_with_the_same_schema) {
    const auto p = parsed(R"({"actions": {"status": {"429": "fail"}, "kind": {"judge_failed": "fail"}},
                              "max_rollout_attempts": 2})");
    EXPECT_EQ(choose_action(p, evidence(kind::provider_quota_exhausted, 429)).action, outcome_action::fail);
    EXPECT_EQ(choose_action(p, evidence(kind::judge_failed)).action, outcome_action::fail);
    EXPECT_EQ(p.max_rollout_attempts, 2);
}

struct bad_file {
    const char* name;
    const char* text;
    const char* expected;  // the error, file and line included
};

TEST(policy_file, each_bad_file_gets_one_clear_error_with_its_line) {
    const bad_file cases[] = {
        {"unknown kind", "actions:\n  kind:\n    provider_exploded: retry\n",
         "test.yaml:3: actions.kind: unknown kind 'provider_exploded' (neither a core kind nor a registered extension kind)"},
        {"unregistered extension kind", "actions:\n  kind: {\"acme:thing\": retry}\n",
         "test.yaml:2: actions.kind: unknown kind 'acme:thing'"},
        {"unknown action", "actions:\n  default: retry_forever\n",
         "test.yaml:2: actions.default: unknown action (retry, fail, count_as_zero, verify) 'retry_forever'"},
        {"wrong type", "max_rollout_attempts: [1, 2]\n", "test.yaml:1: max_rollout_attempts: expected a single value"},
        {"not a number", "max_rollout_attempts: three\n",
         "test.yaml:1: max_rollout_attempts: expected an integer from 1 to 1000000, not 'three'"},
        {"duplicate key", "actions:\n  status:\n    429: retry\n    429: fail\n",
         "test.yaml:4: actions.status.429: duplicate key"},
        {"stage that does not exist", "stages:\n  judging:\n    default: fail\n",
         "test.yaml:2: stages.judging: unknown stage (admission, seed, agent, verification, cleanup) 'judging'"},
        {"status out of range", "actions:\n  status: {200: retry}\n",
         "test.yaml:2: actions.status: expected an integer from 400 to 599, not '200'"},
        {"unknown top-level key", "\nretries: 3\n", "test.yaml:2: retries: unknown key"},
        {"terminal retry", "actions:\n  default: {action: retry, terminal: true}\n",
         "test.yaml:2: actions.default: only a fail can be terminal"},
        {"kind and domain", "classes:\n  - {class: x, kind: cancelled, domain: lifecycle}\n",
         "test.yaml:2: classes[0]: a class rule names a kind or a domain, not both"},
        {"YAML syntax", "actions: {status: [\n", "test.yaml:2: YAML: "},
        {"YAML syntax, unclosed quote", "actions:\n  default: \"fail\n", "test.yaml:"},
    };
    for (const auto& c : cases) {
        const auto error = error_of(c.text);
        EXPECT_EQ(error.rfind(c.expected, 0), 0U) << c.name << ": " << error;
    }
}

TEST(policy_file, alias_bombs_under_unknown_keys_and_oversized_files_are_refused_unwalked) {
    std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
    for (char c = 'b'; c <= 'i'; ++c) {
        bomb += std::string(1, c) + ": &" + c + " [*" + static_cast<char>(c - 1) + ", *" + static_cast<char>(c - 1) +
                ", *" + static_cast<char>(c - 1) + ", *" + static_cast<char>(c - 1) + ", *" + static_cast<char>(c - 1) +
                ", *" + static_cast<char>(c - 1) + ", *" + static_cast<char>(c - 1) + ", *" +
                static_cast<char>(c - 1) + ", *" + static_cast<char>(c - 1) + ", *" + static_cast<char>(c - 1) + "]\n";
    }
    bomb += "count_failure_classes_as_zero: *i\n";
    const auto error = error_of(bomb);
    EXPECT_NE(error.find("unknown key"), std::string::npos) << error;  // `a:` is refused before any walking

    std::string classes = "count_failure_classes_as_zero: [";
    for (int i = 0; i < 100; ++i) classes += "c" + std::to_string(i) + ",";
    classes += "z]\n";
    EXPECT_TRUE(parse_outcome_policy(classes));

    EXPECT_NE(error_of(std::string(max_policy_file_bytes + 1, ' ')).find("over"), std::string::npos);
}

// A small "billion laughs": one 1 KiB name reached 5,000 times through aliases is 5 MiB of
// text from a 20 KB file; every use counts, so the file is refused before it is printed.
TEST(policy_file, aliases_count_their_targets_bytes_again_up_to_the_expanded_bound) {
    const std::string name(1024, 'l');
    const auto laughs = [&](int uses) {
        std::string text = "classes:\n  - {class: &lol " + name + "}\ncount_failure_classes_as_zero: [";
        for (int i = 0; i < uses; ++i) text += "*lol, ";
        return text + "x]\n";
    };
    EXPECT_LT(laughs(5000).size(), std::size_t{32} << 10);
    const auto error = error_of(laughs(5000));
    EXPECT_NE(error.find("max_policy_expanded_bytes"), std::string::npos) << error;
    EXPECT_NE(error.find(std::to_string(max_policy_expanded_bytes)), std::string::npos) << error;
    // An alias carries its target's mark: the line named is the anchor's.
    EXPECT_EQ(error.rfind("test.yaml:2: count_failure_classes_as_zero[", 0), 0U) << error;

    // 3,000 uses (3 MiB) are within the bound: the count is of text, not of aliases.
    EXPECT_EQ(parsed(laughs(3000)).count_as_zero_classes.size(), 3001U);
    static_assert(max_policy_expanded_bytes == std::size_t{4} << 20);
    static_assert(max_policy_nodes == 1'000'000);
}

TEST(policy_file, text_from_the_file_in_an_error_is_escaped_and_cut_at_200_bytes) {
    const std::string long_text(300, 'x');
    EXPECT_EQ(error_of("max_rollout_attempts: \"\\x1b[2J" + long_text + "\"\n"),
              "test.yaml:1: max_rollout_attempts: expected an integer from 1 to 1000000, not '\\x1b[2J" +
                  std::string(196, 'x') + "...'");
    EXPECT_EQ(error_of("actions:\n  \"\\x7f\\x9b\": 1\n").rfind("test.yaml:2: actions.\\x7f\\u009b: unknown key", 0), 0U);
    EXPECT_EQ(error_of("actions:\n  kind: {\"\\e]0;x\\a\": retry}\n").rfind("test.yaml:2: actions.kind: unknown kind '\\x1b]0;x\\x07'", 0),
              0U);
}

TEST(policy_file, loads_from_a_path_and_names_it_in_errors) {
    const std::string path = testing::TempDir() + "policy_file_test.yaml";
    {
        std::ofstream(path) << "actions:\n  kind:\n    nope: retry\n";
    }
    const auto p = load_outcome_policy(path);
    ASSERT_FALSE(p);
    EXPECT_EQ(std::string(p.error().reason()).rfind(path + ":3: ", 0), 0U) << p.error().reason();
    EXPECT_FALSE(load_outcome_policy(path + ".absent"));
}

TEST(policy_file, the_example_policy_file_loads) {
    const auto p = load_outcome_policy(NGFAIL_EXAMPLES_DATA "/outcome_policy.yaml");
    ASSERT_TRUE(p) << p.error().reason();
    EXPECT_FALSE(p.value().count_as_zero_classes.empty());
}

}  // namespace
