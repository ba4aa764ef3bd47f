#include <ngfail/kind.hpp>

#include "text/printable.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <ostream>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace ngfail {
namespace {

// ---- the vocabulary, one row per kind, in enumerator order ----------------------------

struct kind_row {
    kind code;
    std::string_view name;
    std::optional<domain> owner;
    std::string_view description;
};

#define NGFAIL_ROW(k, d, text) kind_row{kind::k, #k, d, text}
constexpr std::optional<domain> no_domain{};

constexpr std::array kind_table{
    NGFAIL_ROW(transport_unreachable, domain::transport, "no connection could be made; nothing was sent"),
    NGFAIL_ROW(transport_peer_drop, domain::transport, "the peer closed or reset an established connection"),
    NGFAIL_ROW(transport_timeout, domain::transport, "an established exchange ran out of time"),
    NGFAIL_ROW(transport_local_resource, domain::transport, "this process ran out of sockets, memory or ports"),
    NGFAIL_ROW(agent_run_error, domain::agent, "the agent answered and broke"),
    NGFAIL_ROW(agent_request_failed, domain::agent, "something in front of the agent failed; the run never ran"),
    NGFAIL_ROW(agent_timeout, domain::agent, "the agent run exceeded its time budget"),
    NGFAIL_ROW(agent_command_not_allowed, domain::agent, "the agent asked for a command the harness forbids"),
    NGFAIL_ROW(agent_no_generation, domain::agent, "the agent produced no generation to score"),
    NGFAIL_ROW(environment_server_failed, domain::environment, "the environment server failed the episode attempt"),
    NGFAIL_ROW(protocol_violation, domain::environment, "a peer sent something the protocol does not allow"),
    NGFAIL_ROW(judge_failed, domain::verifier, "the judge could not be run or did not answer"),
    NGFAIL_ROW(judge_unparseable, domain::verifier, "the judge answered, but its verdict could not be read"),
    NGFAIL_ROW(verifier_error, domain::verifier, "the verifier itself failed"),
    NGFAIL_ROW(provider_unavailable, domain::provider, "the provider could not serve the request now"),
    NGFAIL_ROW(provider_quota_exhausted, domain::provider, "the provider refused for quota or capacity"),
    NGFAIL_ROW(provider_oom_killed, domain::provider, "the provider reported an out-of-memory kill"),
    NGFAIL_ROW(provider_credentials_rejected, domain::provider, "the provider refused the caller's credentials"),
    NGFAIL_ROW(provider_request_rejected, domain::provider, "the request is invalid or not permitted; resending won't help"),
    NGFAIL_ROW(provider_state_conflict, domain::provider, "the sandbox is in a state that forbids the operation"),
    NGFAIL_ROW(provider_sandbox_lost, domain::provider, "the sandbox no longer exists or has terminally failed"),
    NGFAIL_ROW(provider_start_failed, domain::provider, "a sandbox could not be brought up (readiness, image pull)"),
    NGFAIL_ROW(provider_command_terminated, domain::provider, "a command in the sandbox was killed by a signal"),
    NGFAIL_ROW(session_lost, domain::session, "the resources session disappeared while in use"),
    NGFAIL_ROW(session_expired, domain::session, "the resources session outlived its lease"),
    NGFAIL_ROW(session_release_failed, domain::session, "the resources session could not be released"),
    NGFAIL_ROW(cancelled, domain::lifecycle, "the work was cancelled on purpose"),
    NGFAIL_ROW(kill_shaped, domain::lifecycle, "the process died from outside: SIGTERM, a dead actor, a host OOM"),
    NGFAIL_ROW(shutdown, domain::lifecycle, "the process is shutting down"),
    NGFAIL_ROW(persistence_failed, domain::persistence, "a result could not be stored"),
    NGFAIL_ROW(cohort_incomplete, domain::persistence, "a cohort ended with members missing"),
    NGFAIL_ROW(undetermined, no_domain, "the evidence established no kind: an explicit, honest answer"),
};
#undef NGFAIL_ROW

constexpr bool table_in_enum_order() {
    for (std::size_t i = 0; i < kind_table.size(); ++i) {
        if (static_cast<std::size_t>(kind_table[i].code) != i + 1) return false;
    }
    return true;
}
static_assert(table_in_enum_order(), "kind_table rows must follow the enumerators");

constexpr std::array<kind, kind_table.size()> all_kinds_array = [] {
    std::array<kind, kind_table.size()> out{};
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = kind_table[i].code;
    return out;
}();

// The rows in order of their names' lengths, and where each length starts among them: a
// name is compared only with the names as long as it (one to four of them).
constexpr std::size_t longest_kind_name = [] {
    std::size_t longest = 0;
    for (const kind_row& row : kind_table) longest = std::max(longest, row.name.size());
    return longest;
}();

constexpr auto rows_by_name_length = [] {
    std::array<std::uint8_t, kind_table.size()> order{};
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint8_t>(i);
    std::sort(order.begin(), order.end(), [](std::uint8_t a, std::uint8_t b) {
        return std::pair(kind_table[a].name.size(), a) < std::pair(kind_table[b].name.size(), b);
    });
    return order;
}();

constexpr auto name_length_starts = [] {  // rows of length n: [starts[n], starts[n + 1])
    std::array<std::uint8_t, longest_kind_name + 2> starts{};
    for (const kind_row& row : kind_table) ++starts[row.name.size() + 1];
    for (std::size_t n = 1; n < starts.size(); ++n) starts[n] = static_cast<std::uint8_t>(starts[n] + starts[n - 1]);
    return starts;
}();

const kind_row* row_of(int value) noexcept {
    if (value < 1 || static_cast<std::size_t>(value) > kind_table.size()) return nullptr;
    return &kind_table[static_cast<std::size_t>(value) - 1];
}

// ---- warnings ---------------------------------------------------------------------------

struct warning_state {
    std::mutex mutex;
    std::shared_ptr<const warning_sink> sink;
    std::unordered_set<std::string> warned;
    bool saturated = false;
};

// Leaked on purpose: warnings may be emitted from static destructors of user code.
warning_state& warnings() {
    static auto* state = new warning_state;
    return *state;
}

void emit_warning(std::string_view line) noexcept {
    std::shared_ptr<const warning_sink> sink;
    {
        auto& w = warnings();
        std::lock_guard lock(w.mutex);
        sink = w.sink;
    }
    try {
        if (sink && *sink) {
            (*sink)(line);
        } else {
            std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
        }
    } catch (...) {
        // A throwing sink must not turn validation into a failure.
    }
}

constexpr std::size_t max_warned_names = 4096;
constexpr std::size_t max_quoted_bytes = 200;

// True the first time `name` is seen; bounded so hostile input cannot grow it forever.
bool first_warning_for(std::string_view name, bool& just_saturated) {
    auto& w = warnings();
    std::lock_guard lock(w.mutex);
    if (w.warned.contains(std::string(name))) return false;
    if (w.warned.size() >= max_warned_names) {
        just_saturated = !w.saturated;
        w.saturated = true;
        return false;
    }
    w.warned.emplace(name);
    return true;
}

// ---- interned unknown kinds ---------------------------------------------------------------

constexpr std::size_t max_interned_names = 16384;
constexpr std::size_t max_interned_bytes = std::size_t{1} << 20;
constexpr int overflow_value = std::numeric_limits<int>::max();
constexpr std::string_view overflow_name = "ngfail:unknown_kind_overflow";

struct intern_table {
    mutable std::shared_mutex mutex;
    std::deque<std::string> names;  // a deque never moves its elements: views stay valid
    std::unordered_map<std::string_view, int> values;
    std::size_t bytes = 0;

    std::optional<int> find(std::string_view name) const {
        std::shared_lock lock(mutex);
        const auto it = values.find(name);
        return it == values.end() ? std::nullopt : std::optional<int>(it->second);
    }

    int insert(std::string_view name) {
        std::unique_lock lock(mutex);
        if (const auto it = values.find(name); it != values.end()) return it->second;
        if (names.size() >= max_interned_names || bytes + name.size() > max_interned_bytes) {
            return overflow_value;
        }
        const std::string& stored = names.emplace_back(name);
        const int value = static_cast<int>(names.size());
        values.emplace(stored, value);
        bytes += stored.size();
        return value;
    }

    bool contains(int value) const {
        if (value == overflow_value) return true;
        std::shared_lock lock(mutex);
        return value >= 1 && static_cast<std::size_t>(value) <= names.size();
    }

    std::string_view name_of(int value) const {
        if (value == overflow_value) return overflow_name;
        std::shared_lock lock(mutex);
        if (value < 1 || static_cast<std::size_t>(value) > names.size()) return {};
        return names[static_cast<std::size_t>(value) - 1];
    }
};

// Leaked on purpose: interned names are handed out as views valid for the whole process.
intern_table& interned() {
    static auto* table = new intern_table;
    return *table;
}

// ---- categories ---------------------------------------------------------------------------

class kind_category_impl final : public detail::named_kind_category {
public:
    [[nodiscard]] const char* name() const noexcept override { return "ngfail.kind"; }

    [[nodiscard]] std::string message(int value) const override {
        const kind_row* row = row_of(value);
        return row ? std::string(row->description) : "unknown ngfail kind " + std::to_string(value);
    }

    [[nodiscard]] std::string_view kind_name(int value) const noexcept override {
        const kind_row* row = row_of(value);
        return row ? row->name : std::string_view{};
    }

    [[nodiscard]] std::optional<int> kind_value(std::string_view local_name) const noexcept override {
        const auto k = parse_kind(local_name);
        return k ? std::optional<int>(static_cast<int>(*k)) : std::nullopt;
    }
};

class unknown_kind_category final : public detail::named_kind_category {
public:
    [[nodiscard]] const char* name() const noexcept override { return "ngfail.unknown_kind"; }

    [[nodiscard]] std::string message(int value) const override {
        return "unknown failure kind \"" + text::printable(kind_name(value), max_quoted_bytes) + '"';
    }

    [[nodiscard]] std::string_view kind_name(int value) const noexcept override {
        try {
            return interned().name_of(value);
        } catch (...) {  // std::system_error from a lock: no name rather than a crash
            return {};
        }
    }

    [[nodiscard]] std::optional<int> kind_value(std::string_view local_name) const noexcept override {
        try {
            return interned().find(local_name);
        } catch (...) {
            return std::nullopt;
        }
    }
};

class domain_category_impl final : public std::error_category {
public:
    [[nodiscard]] const char* name() const noexcept override { return "ngfail.domain"; }

    [[nodiscard]] std::string message(int value) const override {
        const auto n = ngfail::name(static_cast<domain>(value));
        return n.empty() ? "unknown ngfail domain " + std::to_string(value) : std::string(n);
    }

    [[nodiscard]] bool equivalent(const std::error_code& code, int condition) const noexcept override {
        if (code.category() != kind_category()) return false;
        const auto d = domain_of(static_cast<kind>(code.value()));
        return d && static_cast<int>(*d) == condition;
    }
};

constinit const kind_category_impl kind_category_instance{};
constinit const unknown_kind_category unknown_category_instance{};
constinit const domain_category_impl domain_category_instance{};

// ---- extension namespaces -------------------------------------------------------------------

struct namespace_registry {
    std::shared_mutex mutex;
    std::unordered_map<std::string, const detail::named_kind_category*> categories;

    const detail::named_kind_category* find(std::string_view name_space) {
        std::shared_lock lock(mutex);
        const auto it = categories.find(std::string(name_space));
        return it == categories.end() ? nullptr : it->second;
    }
};

// Leaked on purpose: extension categories register from static initialisers in any order.
namespace_registry& registry() {
    static auto* r = new namespace_registry;
    return *r;
}

struct split_name {
    std::string_view name_space;
    std::string_view local;
};

std::optional<split_name> split_namespaced(std::string_view name) noexcept {
    const auto colon = name.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    return split_name{name.substr(0, colon), name.substr(colon + 1)};
}

std::optional<std::error_code> registered_extension_code(std::string_view name) {
    const auto parts = split_namespaced(name);
    if (!parts) return std::nullopt;
    const auto* category = registry().find(parts->name_space);
    if (!category) return std::nullopt;
    const auto value = category->kind_value(parts->local);
    if (!value) return std::nullopt;
    return std::error_code(*value, *category);
}

// Core, a registered extension kind, or `<namespace>:<kind>` in a namespace this process
// does not know (a peer's extension is legitimate even when not registered here).
bool is_acceptable_name(std::string_view name) {
    if (parse_kind(name)) return true;
    const auto parts = split_namespaced(name);
    if (!parts || !detail::is_kind_word(parts->name_space) || !detail::is_kind_word(parts->local)) {
        return false;
    }
    const auto* category = registry().find(parts->name_space);
    return !category || category->kind_value(parts->local).has_value();
}

}  // namespace

// ---- public functions -----------------------------------------------------------------------

const std::error_category& kind_category() noexcept { return kind_category_instance; }
const std::error_category& domain_category() noexcept { return domain_category_instance; }

std::span<const kind> all_kinds() noexcept { return all_kinds_array; }

std::string_view name(kind k) noexcept {
    const kind_row* row = row_of(static_cast<int>(k));
    return row ? row->name : std::string_view{};
}

std::string_view description(kind k) noexcept {
    const kind_row* row = row_of(static_cast<int>(k));
    return row ? row->description : std::string_view{};
}

std::optional<domain> domain_of(kind k) noexcept {
    const kind_row* row = row_of(static_cast<int>(k));
    return row ? row->owner : std::nullopt;
}

std::optional<kind> parse_kind(std::string_view text) noexcept {
    if (text.size() > longest_kind_name) return std::nullopt;
    for (std::size_t i = name_length_starts[text.size()]; i < name_length_starts[text.size() + 1]; ++i) {
        const kind_row& row = kind_table[rows_by_name_length[i]];
        if (std::memcmp(row.name.data(), text.data(), text.size()) == 0) return row.code;
    }
    return std::nullopt;
}

bool is_kind(const std::error_code& ec) noexcept {
    if (!ec) return false;
    if (ec.category() == unknown_category_instance) {  // an interned name may be empty
        try {
            return interned().contains(ec.value());
        } catch (...) {
            return false;
        }
    }
    return !kind_name(ec).empty();
}

std::string_view kind_name(const std::error_code& ec) noexcept {
    if (!ec) return {};
    if (ec.category() == kind_category_instance) return kind_category_instance.kind_name(ec.value());
    const auto* category = dynamic_cast<const detail::named_kind_category*>(&ec.category());
    return category ? category->kind_name(ec.value()) : std::string_view{};
}

std::error_code kind_from_name(std::string_view text) noexcept {
    if (const auto k = parse_kind(text)) return make_error_code(*k);
    try {
        if (const auto ec = registered_extension_code(text)) return *ec;
        if (text == overflow_name) return {overflow_value, unknown_category_instance};
        if (const auto value = interned().find(text)) return {*value, unknown_category_instance};
        return {interned().insert(text), unknown_category_instance};
    } catch (...) {  // out of memory: the shared overflow code, never an exception
        return {overflow_value, unknown_category_instance};
    }
}

std::optional<std::error_code> registered_kind(std::string_view text) noexcept {
    if (const auto k = parse_kind(text)) return make_error_code(*k);
    try {
        return registered_extension_code(text);
    } catch (...) {
        return std::nullopt;
    }
}

warning_sink set_warning_sink(warning_sink sink) {
    auto replacement = sink ? std::make_shared<const warning_sink>(std::move(sink)) : nullptr;
    auto& w = warnings();
    std::lock_guard lock(w.mutex);
    auto previous = std::exchange(w.sink, std::move(replacement));
    return previous ? *previous : warning_sink{};
}

std::string_view validate_kind_name(std::string_view name) noexcept {
    try {
        if (is_acceptable_name(name)) return name;
        bool just_saturated = false;
        if (first_warning_for(name, just_saturated)) {
            emit_warning("ngfail: unknown failure kind \"" + text::printable(name, max_quoted_bytes) +
                         "\"; add it to the vocabulary or name it <namespace>:<kind>");
        } else if (just_saturated) {
            emit_warning("ngfail: too many distinct unknown failure kinds; no longer warning about new ones");
        }
    } catch (...) {
        // Validation never rejects and never throws; a lost warning is the lesser harm.
    }
    return name;
}

namespace detail {

void register_kind_namespace(std::string_view name_space, const named_kind_category& category) noexcept {
    try {
        auto& r = registry();
        std::unique_lock lock(r.mutex);
        const auto [it, inserted] = r.categories.emplace(std::string(name_space), &category);
        if (inserted || it->second == &category) return;
        lock.unlock();
        emit_warning("ngfail: kind namespace \"" + text::printable(name_space, max_quoted_bytes) +
                     "\" is already registered by " + it->second->name() + "; ignoring " +
                     category.name());
    } catch (...) {
        emit_warning("ngfail: could not register a kind namespace (out of memory)");
    }
}

}  // namespace detail
std::ostream& operator<<(std::ostream& out, kind k) { return out << name(k); }
std::ostream& operator<<(std::ostream& out, domain d) { return out << name(d); }
std::ostream& operator<<(std::ostream& out, stage s) { return out << name(s); }
std::ostream& operator<<(std::ostream& out, boundary b) { return out << name(b); }
std::ostream& operator<<(std::ostream& out, delivery d) { return out << name(d); }

}  // namespace ngfail
