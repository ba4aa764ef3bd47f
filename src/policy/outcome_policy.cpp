#include <ngfail/policy/outcome_policy.hpp>

#include <stdexcept>

namespace ngfail::policy {
namespace {

using detail::core_kind_slots;
static_assert(static_cast<std::size_t>(kind::undetermined) < core_kind_slots, "grow detail::core_kind_slots");

std::optional<std::size_t> core_slot(const std::error_code& kind) noexcept {
    if (kind.category() != kind_category()) return std::nullopt;
    const auto value = static_cast<std::size_t>(kind.value());
    if (value == 0 || value >= core_kind_slots) return std::nullopt;
    return value;
}

bool is_failure_status(int status) noexcept { return status >= 400 && status <= 599; }

template <class Table>
const rule_outcome* get(const Table& table, std::size_t index) noexcept {
    return index < table.size() && table[index] ? &*table[index] : nullptr;
}

}  // namespace

std::string_view name(rule_dimension d) noexcept {
    static constexpr std::array<std::string_view, 6> names{"status", "status", "kind", "domain", "class", "default"};
    static_assert(names.size() == static_cast<std::size_t>(rule_dimension::fallback) + 1);
    return names[static_cast<std::size_t>(d)];
}

// ---- action_table --------------------------------------------------------------------------

void action_table::set(const rule_key& key, rule_outcome outcome) {
    switch (key.dimension) {
        case rule_dimension::status:
            if (!is_failure_status(key.value)) throw std::invalid_argument("a status rule needs a status 400-599");
            status_[static_cast<std::size_t>(key.value - first_status)] = outcome;
            return;
        case rule_dimension::status_class:
            if (key.value != 4 && key.value != 5) throw std::invalid_argument("a status class is 4xx or 5xx");
            status_class_[static_cast<std::size_t>(key.value - 4)] = outcome;
            return;
        case rule_dimension::kind:
            if (const auto slot = core_slot(key.kind)) {
                core_kinds_[*slot] = outcome;
                return;
            }
            if (!is_kind(key.kind)) throw std::invalid_argument("a kind rule needs a kind code");
            for (auto& [kind, existing] : other_kinds_) {
                if (kind == key.kind) {
                    existing = outcome;
                    return;
                }
            }
            other_kinds_.emplace_back(key.kind, outcome);
            return;
        case rule_dimension::domain:
            if (key.value < 1 || static_cast<std::size_t>(key.value) >= domains_.size()) {
                throw std::invalid_argument("no such domain");
            }
            domains_[static_cast<std::size_t>(key.value)] = outcome;
            return;
        case rule_dimension::failure_class:
            if (key.value < 0) throw std::invalid_argument("a class rule needs a class id");
            if (classes_.size() <= static_cast<std::size_t>(key.value)) classes_.resize(static_cast<std::size_t>(key.value) + 1);
            classes_[static_cast<std::size_t>(key.value)] = outcome;
            return;
        case rule_dimension::fallback:
            fallback_ = outcome;
            return;
    }
}

const rule_outcome* action_table::find(const rule_key& key) const noexcept {
    switch (key.dimension) {
        case rule_dimension::status:
            return is_failure_status(key.value) ? get(status_, static_cast<std::size_t>(key.value - first_status))
                                                : nullptr;
        case rule_dimension::status_class:
            return key.value == 4 || key.value == 5 ? get(status_class_, static_cast<std::size_t>(key.value - 4))
                                                    : nullptr;
        case rule_dimension::kind:
            if (const auto slot = core_slot(key.kind)) return get(core_kinds_, *slot);
            for (const auto& [kind, outcome] : other_kinds_) {
                if (kind == key.kind) return &outcome;
            }
            return nullptr;
        case rule_dimension::domain:
            return key.value > 0 ? get(domains_, static_cast<std::size_t>(key.value)) : nullptr;
        case rule_dimension::failure_class:
            return key.value >= 0 ? get(classes_, static_cast<std::size_t>(key.value)) : nullptr;
        case rule_dimension::fallback:
            return fallback_ ? &*fallback_ : nullptr;
    }
    return nullptr;
}

std::vector<std::pair<rule_key, rule_outcome>> action_table::rules() const {
    std::vector<std::pair<rule_key, rule_outcome>> all;
    const auto add = [&](const rule_key& key) {
        if (const auto* outcome = find(key)) all.emplace_back(key, *outcome);
    };
    for (int status = 400; status <= 599; ++status) add(rule_key::status(status));
    add(rule_key::status_class(4));
    add(rule_key::status_class(5));
    for (kind k : all_kinds()) add(rule_key::of(k));
    for (const auto& [kind, outcome] : other_kinds_) all.emplace_back(rule_key::of(kind), outcome);
    for (int d = 1; d < static_cast<int>(domains_.size()); ++d) add(rule_key::of(static_cast<domain>(d)));
    for (class_id c = 0; c < static_cast<class_id>(classes_.size()); ++c) add(rule_key::of_class(c));
    add(rule_key::fallback());
    return all;
}

// ---- outcome_policy -------------------------------------------------------------------------

outcome_policy::outcome_policy() {
    kind_named_class_.fill(no_class);
    shared.set(rule_key::fallback(), {.action = outcome_action::fail});
}

class_id outcome_policy::intern_class(std::string_view name) {
    if (const auto known = find_class(name)) return *known;
    const auto id = static_cast<class_id>(class_names_.size());
    class_names_.emplace_back(name);
    try {
        class_ids_.emplace(class_names_.back(), id);
    } catch (...) {
        class_names_.pop_back();
        throw;
    }
    if (const auto kind = registered_kind(name)) {
        if (const auto slot = core_slot(*kind)) {
            kind_named_class_[*slot] = id;
        } else {
            extension_named_class_.emplace_back(*kind, id);
        }
    }
    return id;
}

std::optional<class_id> outcome_policy::find_class(std::string_view name) const noexcept {
    const auto it = class_ids_.find(name);
    if (it == class_ids_.end()) return std::nullopt;
    return it->second;
}

std::string_view outcome_policy::class_name(class_id id) const noexcept {
    if (id < 0 || static_cast<std::size_t>(id) >= class_names_.size()) return {};
    return class_names_[static_cast<std::size_t>(id)];
}

class_id outcome_policy::classify(const std::error_code& kind, std::optional<int> http_status,
                                  std::optional<ngfail::stage> stage) const noexcept {
    for (const class_rule& rule : classification) {
        if (rule.stage && rule.stage != stage) continue;
        if (rule.status && rule.status != http_status) continue;
        if (rule.status_class && (!http_status || *http_status / 100 != *rule.status_class)) continue;
        if (rule.kind && rule.kind != kind) continue;
        if (rule.domain && kind != *rule.domain) continue;
        return rule.target;
    }
    if (const auto slot = core_slot(kind)) return kind_named_class_[*slot];
    for (const auto& [named, id] : extension_named_class_) {
        if (named == kind) return id;
    }
    return no_class;
}

const outcome_policy& outcome_policy::defaults() {
    static const outcome_policy built = [] {
        outcome_policy p;
        const auto set = [&p](const rule_key& key, outcome_action action, bool terminal = false) {
            p.shared.set(key, {.action = action, .terminal = terminal});
        };
        // Deterministic client errors: no attempt of the rollout would get another answer.
        for (int status : {400, 401, 403, 404, 422}) set(rule_key::status(status), outcome_action::fail, true);
        for (int status : {408, 429}) set(rule_key::status(status), outcome_action::retry);
        set(rule_key::status_class(5), outcome_action::retry);

        set(rule_key::of(domain::transport), outcome_action::retry);
        set(rule_key::of(domain::session), outcome_action::retry);
        for (kind k : {kind::provider_unavailable, kind::provider_quota_exhausted, kind::provider_sandbox_lost,
                       kind::provider_start_failed, kind::environment_server_failed, kind::kill_shaped,
                       kind::persistence_failed}) {
            set(rule_key::of(k), outcome_action::retry);
        }
        for (kind k : {kind::provider_credentials_rejected, kind::provider_request_rejected}) {
            set(rule_key::of(k), outcome_action::fail, true);
        }
        for (kind k : {kind::protocol_violation, kind::cancelled, kind::shutdown, kind::undetermined}) {
            set(rule_key::of(k), outcome_action::fail);
        }
        for (kind k : {kind::agent_no_generation, kind::agent_timeout, kind::judge_unparseable}) {
            set(rule_key::of(k), outcome_action::count_as_zero);
        }
        for (kind k : {kind::judge_failed, kind::verifier_error}) set(rule_key::of(k), outcome_action::verify);
        return p;
    }();
    return built;
}

}  // namespace ngfail::policy
