#include <ngfail/policy/policy_file.hpp>

#include <ngfail/one_line.hpp>

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <fstream>
#include <functional>
#include <set>
#include <string>

namespace ngfail::policy {
namespace {

// Text from the file in an error (a key path, a value) is escaped and cut to this.
constexpr std::size_t max_quoted_bytes = 200;

std::string from_file(std::string_view text) { return "'" + one_line(text, max_quoted_bytes) + "'"; }

struct file_error {
    std::string text;
};

class reader {
public:
    explicit reader(std::string_view source) : source_(source) {}

    [[noreturn]] void fail(const YAML::Node& at, const std::string& key, const std::string& why) const {
        const auto line = at.Mark().line >= 0 ? std::to_string(at.Mark().line + 1) : std::string("?");
        throw file_error{source_ + ":" + line + ": " + (key.empty() ? "" : one_line(key, max_quoted_bytes) + ": ") + why};
    }

    // Aliases let a small file name one node many times: every node and every scalar's bytes
    // are counted as the walk reaches them, so an alias counts its target again.
    void visit(const YAML::Node& node) {
        if (++visited_ > max_policy_nodes) {
            fail(node, "", "over " + std::to_string(max_policy_nodes) + " nodes with aliases expanded (max_policy_nodes)");
        }
    }

    std::string scalar(const YAML::Node& node, const std::string& key) {
        visit(node);
        if (!node.IsScalar()) fail(node, key, "expected a single value");
        expanded_ += node.Scalar().size();
        if (expanded_ > max_policy_expanded_bytes) {
            fail(node, key, "over " + std::to_string(max_policy_expanded_bytes) +
                                " bytes of text with aliases expanded (max_policy_expanded_bytes)");
        }
        return node.Scalar();
    }

    long long integer(const YAML::Node& node, const std::string& key, long long low, long long high) {
        const auto text = scalar(node, key);
        long long value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc{} || end != text.data() + text.size() || value < low || value > high) {
            fail(node, key, "expected an integer from " + std::to_string(low) + " to " + std::to_string(high) +
                                ", not " + from_file(text));
        }
        return value;
    }

    bool boolean(const YAML::Node& node, const std::string& key) {
        const auto text = scalar(node, key);
        if (text == "true") return true;
        if (text == "false") return false;
        fail(node, key, "expected true or false, not " + from_file(text));
    }

    // Calls `each(key text, key node, value node)` for every entry, refusing duplicates.
    void for_each_entry(const YAML::Node& map, const std::string& key,
                        const std::function<void(const std::string&, const YAML::Node&, const YAML::Node&)>& each) {
        visit(map);
        if (!map.IsMap()) fail(map, key, "expected a mapping");
        std::set<std::string> seen;
        for (const auto& entry : map) {
            const auto name = scalar(entry.first, key);
            const auto path = key.empty() ? name : key + "." + name;
            if (!seen.insert(name).second) fail(entry.first, path, "duplicate key");
            each(name, entry.first, entry.second);
        }
    }

    template <class Each>
    void for_each_item(const YAML::Node& list, const std::string& key, Each&& each) {
        visit(list);
        if (!list.IsSequence()) fail(list, key, "expected a list");
        std::size_t index = 0;
        for (const auto& item : list) each(key + "[" + std::to_string(index++) + "]", item);
    }

private:
    std::string source_;
    int visited_ = 0;
    std::size_t expanded_ = 0;
};

int line_of(const YAML::Node& node) { return node.Mark().line >= 0 ? node.Mark().line + 1 : 0; }

std::error_code known_kind(reader& r, const YAML::Node& node, const std::string& key) {
    const auto text = r.scalar(node, key);
    const auto kind = registered_kind(text);
    if (!kind) r.fail(node, key, "unknown kind " + from_file(text) + " (neither a core kind nor a registered extension kind)");
    return *kind;
}

template <class Enum>
Enum known(reader& r, const YAML::Node& node, const std::string& key, std::string_view what,
           std::optional<Enum> (*parse)(std::string_view) noexcept) {
    const auto text = r.scalar(node, key);
    const auto value = parse(text);
    if (!value) r.fail(node, key, "unknown " + std::string(what) + " " + from_file(text));
    return *value;
}

outcome_action action_named(reader& r, const YAML::Node& node, const std::string& key) {
    return known<outcome_action>(r, node, key, "action (retry, fail, count_as_zero, verify)", parse_outcome_action);
}

rule_outcome outcome_of(reader& r, const YAML::Node& node, const std::string& key) {
    rule_outcome outcome{.line = line_of(node)};
    if (node.IsScalar()) {
        outcome.action = action_named(r, node, key);
        return outcome;
    }
    bool has_action = false;
    r.for_each_entry(node, key, [&](const std::string& name, const YAML::Node& at, const YAML::Node& value) {
        if (name == "action") {
            outcome.action = action_named(r, value, key + ".action");
            has_action = true;
        } else if (name == "terminal") {
            outcome.terminal = r.boolean(value, key + ".terminal");
        } else {
            r.fail(at, key + "." + name, "unknown key (a rule has action and terminal)");
        }
    });
    if (!has_action) r.fail(node, key, "a rule needs an action");
    if (outcome.terminal && outcome.action != outcome_action::fail) r.fail(node, key, "only a fail can be terminal");
    return outcome;
}

// "5xx" / "4xx" or an exact status.
rule_key status_key(reader& r, const YAML::Node& node, const std::string& key) {
    const auto text = r.scalar(node, key);
    if (text == "4xx" || text == "5xx") return rule_key::status_class(text[0] - '0');
    return rule_key::status(static_cast<int>(r.integer(node, key, 400, 599)));
}

void read_table(reader& r, outcome_policy& p, action_table& table, const YAML::Node& node, const std::string& key) {
    r.for_each_entry(node, key, [&](const std::string& dimension, const YAML::Node& at, const YAML::Node& rules) {
        const auto path = key + "." + dimension;
        if (dimension == "default") {
            table.set(rule_key::fallback(), outcome_of(r, rules, path));
            return;
        }
        using key_reader = std::function<rule_key(const YAML::Node&, const std::string&)>;
        key_reader key_of;
        if (dimension == "status") {
            key_of = [&](const YAML::Node& n, const std::string& k) { return status_key(r, n, k); };
        } else if (dimension == "kind") {
            key_of = [&](const YAML::Node& n, const std::string& k) { return rule_key::of(known_kind(r, n, k)); };
        } else if (dimension == "domain") {
            key_of = [&](const YAML::Node& n, const std::string& k) {
                return rule_key::of(known<domain>(r, n, k, "domain", parse_domain));
            };
        } else if (dimension == "class") {
            key_of = [&](const YAML::Node& n, const std::string& k) {
                return rule_key::of_class(p.intern_class(r.scalar(n, k)));
            };
        } else {
            r.fail(at, path, "unknown key (a table has status, kind, domain, class and default)");
        }
        r.for_each_entry(rules, path, [&](const std::string& name, const YAML::Node& key_node, const YAML::Node& value) {
            table.set(key_of(key_node, path), outcome_of(r, value, path + "." + name));
        });
    });
}

void read_class_rule(reader& r, outcome_policy& p, const YAML::Node& node, const std::string& key) {
    class_rule rule{.line = line_of(node)};
    bool has_class = false;
    r.for_each_entry(node, key, [&](const std::string& name, const YAML::Node& at, const YAML::Node& value) {
        const auto path = key + "." + name;
        if (name == "class") {
            rule.target = p.intern_class(r.scalar(value, path));
            has_class = true;
        } else if (name == "stage") {
            rule.stage = known<stage>(r, value, path, "stage (admission, seed, agent, verification, cleanup)", parse_stage);
        } else if (name == "kind") {
            rule.kind = known_kind(r, value, path);
        } else if (name == "domain") {
            rule.domain = known<domain>(r, value, path, "domain", parse_domain);
        } else if (name == "status") {
            const auto status = status_key(r, value, path);
            (status.dimension == rule_dimension::status ? rule.status : rule.status_class) = status.value;
        } else {
            r.fail(at, path, "unknown key (a class rule has class, stage, kind, domain and status)");
        }
    });
    if (!has_class) r.fail(node, key, "a class rule needs a class");
    if (rule.kind && rule.domain) r.fail(node, key, "a class rule names a kind or a domain, not both");
    p.classification.push_back(rule);
}

void read_policy(reader& r, outcome_policy& p, const YAML::Node& root) {
    if (root.IsNull()) return;  // an empty file: the defaults
    r.for_each_entry(root, "", [&](const std::string& name, const YAML::Node& at, const YAML::Node& value) {
        if (name == "classes") {
            r.for_each_item(value, name, [&](const std::string& k, const YAML::Node& item) { read_class_rule(r, p, item, k); });
        } else if (name == "actions") {
            read_table(r, p, p.shared, value, name);
        } else if (name == "stages") {
            r.for_each_entry(value, name, [&](const std::string& stage_name, const YAML::Node& key_node, const YAML::Node& table) {
                const auto s = known<stage>(r, key_node, name + "." + stage_name,
                                            "stage (admission, seed, agent, verification, cleanup)", parse_stage);
                auto& slot = p.stages[static_cast<std::size_t>(s)];
                if (!slot) slot.emplace();
                read_table(r, p, *slot, table, name + "." + stage_name);
            });
        } else if (name == "supported") {
            action_set supported;
            r.for_each_item(value, name, [&](const std::string& k, const YAML::Node& item) { supported.insert(action_named(r, item, k)); });
            supported.insert(outcome_action::fail);  // always possible
            p.supported = supported;
        } else if (name == "allowance") {
            r.for_each_entry(value, name, [&](const std::string& field, const YAML::Node& key_node, const YAML::Node& v) {
                const auto path = name + "." + field;
                using ms = std::chrono::milliseconds;
                constexpr long long day = 86'400'000;
                if (field == "attempts") {
                    p.allowance.attempts = static_cast<int>(r.integer(v, path, 1, 1000));
                } else if (field == "elapsed_ms") {
                    p.allowance.elapsed = ms(r.integer(v, path, 0, day));
                } else if (field == "base_delay_ms") {
                    p.allowance.base_delay = ms(r.integer(v, path, 0, day));
                } else if (field == "max_delay_ms") {
                    p.allowance.max_delay = ms(r.integer(v, path, 0, day));
                } else {
                    r.fail(key_node, path, "unknown key (attempts, elapsed_ms, base_delay_ms, max_delay_ms)");
                }
            });
        } else if (name == "max_rollout_attempts") {
            p.max_rollout_attempts = static_cast<int>(r.integer(value, name, 1, 1'000'000));
        } else if (name == "count_failure_classes_as_zero") {
            p.count_as_zero_classes.clear();
            r.for_each_item(value, name, [&](const std::string& k, const YAML::Node& item) {
                p.count_as_zero_classes.push_back(p.intern_class(r.scalar(item, k)));
            });
        } else if (name == "count_missing_rollouts_as_zero") {
            p.count_missing_as_zero = r.boolean(value, name);
        } else {
            r.fail(at, name,
                   "unknown key (classes, actions, stages, supported, allowance, max_rollout_attempts, "
                   "count_failure_classes_as_zero, count_missing_rollouts_as_zero)");
        }
    });
}

}  // namespace

result<outcome_policy> parse_outcome_policy(std::string_view text, std::string_view source) noexcept {
    try {
        if (text.size() > max_policy_file_bytes) {
            return failure(kind::protocol_violation, std::string(source) + ": over " +
                                                         std::to_string(max_policy_file_bytes) + " bytes");
        }
        reader r(source);
        outcome_policy p = outcome_policy::defaults();
        try {
            read_policy(r, p, YAML::Load(std::string(text)));
        } catch (const YAML::Exception& e) {
            const auto line = e.mark.line >= 0 ? std::to_string(e.mark.line + 1) : std::string("?");
            return failure(kind::protocol_violation, std::string(source) + ":" + line + ": YAML: " + one_line(e.msg, max_quoted_bytes));
        }
        return p;
    } catch (const file_error& e) {
        return failure(kind::protocol_violation, e.text);
    } catch (const std::exception& e) {
        return failure(kind::protocol_violation, std::string(source) + ": " + one_line(e.what(), max_quoted_bytes));
    } catch (...) {
        return failure(kind::protocol_violation, "the policy could not be read");
    }
}

result<outcome_policy> load_outcome_policy(const std::filesystem::path& path) noexcept {
    try {
        std::ifstream in(path, std::ios::binary);
        if (!in) return failure(kind::protocol_violation, path.string() + ": cannot be opened");
        std::string text;
        std::array<char, 1 << 16> block{};
        while (in.read(block.data(), block.size()) || in.gcount() > 0) {
            text.append(block.data(), static_cast<std::size_t>(in.gcount()));
            if (text.size() > max_policy_file_bytes) break;
        }
        return parse_outcome_policy(text, path.string());
    } catch (...) {
        return failure(kind::protocol_violation, "the policy file could not be read");
    }
}

}  // namespace ngfail::policy
