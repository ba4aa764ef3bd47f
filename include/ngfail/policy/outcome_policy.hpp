// <ngfail/policy/outcome_policy.hpp> — the tables a boundary's decisions come from.
//
// An outcome policy holds:
//   - a classification table: rules from (stage, HTTP status, kind or domain) to a failure
//     class, a configurable responsibility used for reporting and selection (NeMo Gym's
//     `FailureClass`: `agent_run_error`, `judge_failed`, …). The first matching rule wins;
//     when none does, a failure's class is its kind's name. A class implies no action.
//   - action tables, a shared one and one per stage, each mapping an HTTP status (exact,
//     then `4xx`/`5xx`), a kind (exact, then its domain), a class, then a default to an
//     action. `choose_action` (<ngfail/policy/choose_action.hpp>) reads them in that order,
//     the failure's stage table first.
//   - the actions the boundary supports, the retry allowance's limits, the rollout attempt
//     cap, and the classes counted as zero in metrics views.
//
// `outcome_policy::defaults()` is ngfail's documented default (docs/policy.md); a policy
// file (<ngfail/policy/policy_file.hpp>) overrides it key by key:
//
//   ngfail::policy::outcome_policy p = ngfail::policy::outcome_policy::defaults();
//   p.shared.set(ngfail::policy::rule_key::status(409), {.action = outcome_action::retry});
#pragma once

#include <ngfail/kind.hpp>
#include <ngfail/policy/outcome_action.hpp>
#include <ngfail/policy/retry_allowance.hpp>

#include <array>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ngfail::policy {

// A failure class, as an index into its policy's class names; `no_class` when no
// classification rule matched (the class is then the kind's name).
using class_id = std::int32_t;
inline constexpr class_id no_class = -1;

namespace detail {
// Rules for core kinds index an array by the kind's value (checked against the vocabulary).
inline constexpr std::size_t core_kind_slots = 40;
}  // namespace detail

// What one rule of an action table says.
struct rule_outcome {
    outcome_action action = outcome_action::fail;
    bool terminal = false;  // `fail` only: no later attempt of the rollout repeats it
    int line = 0;           // where the rule was written (1-based); 0 for a built-in default
};

// The dimensions of an action table, in the order `choose_action` tries them.
enum class rule_dimension : std::uint8_t { status, status_class, kind, domain, failure_class, fallback };

[[nodiscard]] std::string_view name(rule_dimension d) noexcept;

// Which rule of a table: its dimension and key.
struct rule_key {
    rule_dimension dimension = rule_dimension::fallback;
    int value = 0;             // status (400-599), status class (4 or 5), domain or class id
    std::error_code kind{};    // rule_dimension::kind

    [[nodiscard]] static rule_key status(int code) noexcept { return {rule_dimension::status, code, {}}; }
    [[nodiscard]] static rule_key status_class(int hundreds) noexcept {
        return {rule_dimension::status_class, hundreds, {}};
    }
    [[nodiscard]] static rule_key of(std::error_code kind) noexcept { return {rule_dimension::kind, 0, kind}; }
    [[nodiscard]] static rule_key of(ngfail::kind k) noexcept { return of(make_error_code(k)); }
    [[nodiscard]] static rule_key of(domain d) noexcept {
        return {rule_dimension::domain, static_cast<int>(d), {}};
    }
    [[nodiscard]] static rule_key of_class(class_id c) noexcept { return {rule_dimension::failure_class, c, {}}; }
    [[nodiscard]] static rule_key fallback() noexcept { return {}; }

    friend bool operator==(const rule_key&, const rule_key&) noexcept = default;
};

// One action table (the shared one, or a stage's). Lookups are array indexing, except for
// extension kinds and classes, which are short vectors: nothing allocates.
class action_table {
public:
    // Sets a rule, replacing one with the same key. Throws std::invalid_argument for a key
    // no failure can have (a status outside 400-599, a class id below 0).
    void set(const rule_key& key, rule_outcome outcome);

    // The rule for exactly this key, if the table has one.
    [[nodiscard]] const rule_outcome* find(const rule_key& key) const noexcept;

    // Every rule, in dimension order (for printing a table).
    [[nodiscard]] std::vector<std::pair<rule_key, rule_outcome>> rules() const;

private:
    static constexpr int first_status = 400;
    std::array<std::optional<rule_outcome>, 200> status_{};
    std::array<std::optional<rule_outcome>, 2> status_class_{};
    std::array<std::optional<rule_outcome>, detail::core_kind_slots> core_kinds_{};
    std::vector<std::pair<std::error_code, rule_outcome>> other_kinds_;
    std::array<std::optional<rule_outcome>, 9> domains_{};
    std::vector<std::optional<rule_outcome>> classes_;
    std::optional<rule_outcome> fallback_;
};

// A classification rule: every condition given must hold; `kind` and `domain` exclude each
// other. Conditions left empty match anything.
struct class_rule {
    class_id target = no_class;
    std::optional<ngfail::stage> stage{};
    std::optional<int> status{};        // exact HTTP status
    std::optional<int> status_class{};  // 4 or 5
    std::error_code kind{};
    std::optional<ngfail::domain> domain{};
    int line = 0;
};

class outcome_policy {
public:
    // ngfail's defaults (docs/policy.md): deterministic client errors fail terminally, 408,
    // 429 and 5xx retry, transient kinds retry, the model's own failures count as zero, judge
    // failures are verified; everything else fails.
    [[nodiscard]] static const outcome_policy& defaults();

    // A policy with empty tables and a `fail` default: the base for a policy built whole.
    outcome_policy();

    // The id of a class name, adding it if new. Allocates.
    class_id intern_class(std::string_view name);
    // The id of a class name already known.
    [[nodiscard]] std::optional<class_id> find_class(std::string_view name) const noexcept;
    // The name of a class id; empty for `no_class`.
    [[nodiscard]] std::string_view class_name(class_id id) const noexcept;
    [[nodiscard]] std::size_t class_count() const noexcept { return class_names_.size(); }

    // The class of a failure with this evidence: the first matching classification rule,
    // else the class named like its kind (if declared), else `no_class`.
    [[nodiscard]] class_id classify(const std::error_code& kind, std::optional<int> http_status,
                                    std::optional<ngfail::stage> stage) const noexcept;

    std::vector<class_rule> classification;
    action_table shared;
    std::array<std::optional<action_table>, 5> stages{};  // indexed by ngfail::stage
    action_set supported = action_set::all();
    allowance_limits allowance{};
    int max_rollout_attempts = 3;                // NeMo Gym's per-rollout attempt cap
    std::vector<class_id> count_as_zero_classes;  // metrics views only: no row changes
    bool count_missing_as_zero = false;           // likewise, for rollouts with no row

private:
    // Lookup by a string_view without building a string.
    struct name_hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view name) const noexcept { return std::hash<std::string_view>{}(name); }
    };

    std::vector<std::string> class_names_;
    std::unordered_map<std::string, class_id, name_hash, std::equal_to<>> class_ids_;  // class_names_ inverted
    std::array<class_id, detail::core_kind_slots> kind_named_class_{};   // core kind → the class of that name
    std::vector<std::pair<std::error_code, class_id>> extension_named_class_;
};

}  // namespace ngfail::policy
