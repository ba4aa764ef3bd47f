#include "glob.hpp"

#include <string>
#include <vector>

namespace ngfail::opensandbox::testing::detail {
namespace {

constexpr std::size_t npos = std::string_view::npos;

// One past the `]` of the bracket expression opening at `open`, or npos.
std::size_t bracket_end(std::string_view p, std::size_t open) {
    std::size_t at = open + 1;
    if (at < p.size() && (p[at] == '!' || p[at] == '^')) ++at;
    if (at < p.size() && p[at] == ']') ++at;  // a leading ']' is a member
    for (; at < p.size(); ++at) {
        if (p[at] == '\\') {
            ++at;
        } else if (p[at] == ']') {
            return at + 1;
        }
    }
    return npos;
}

char take(std::string_view& s) {
    if (s.size() > 1 && s[0] == '\\') s.remove_prefix(1);
    const char c = s[0];
    s.remove_prefix(1);
    return c;
}

// `set` is what is between the brackets.
bool in_bracket(std::string_view set, char c) {
    const bool negated = !set.empty() && (set[0] == '!' || set[0] == '^');
    if (negated) set.remove_prefix(1);
    bool found = false;
    while (!set.empty()) {
        const char low = take(set);
        char high = low;
        if (set.size() >= 2 && set[0] == '-') {
            set.remove_prefix(1);
            high = take(set);
        }
        found = found || (low <= c && c <= high);
    }
    return found != negated;
}

// The first top-level `{` outside brackets and escapes, or npos; `malformed` when a bracket
// or an escape is not closed.
std::size_t first_brace(std::string_view p, bool& malformed) {
    for (std::size_t at = 0; at < p.size(); ++at) {
        if (p[at] == '\\') {
            if (++at >= p.size()) malformed = true;
        } else if (p[at] == '[') {
            const std::size_t end = bracket_end(p, at);
            if (end == npos) {
                malformed = true;
                return npos;
            }
            at = end - 1;
        } else if (p[at] == '{') {
            return at;
        }
    }
    return npos;
}

// Appends every brace-free pattern `p` stands for, counting their `bytes`; why it cannot.
std::optional<glob_error> expand(std::string_view p, std::vector<std::string>& out, std::size_t& bytes) {
    bool malformed = false;
    const std::size_t open = first_brace(p, malformed);
    if (malformed) return glob_error::malformed;
    if (open == npos) {
        if (out.size() >= glob::max_alternatives) return glob_error::too_branching;
        if ((bytes += p.size()) > glob::max_expanded) return glob_error::too_large;
        out.emplace_back(p);
        return std::nullopt;
    }
    std::vector<std::string_view> options;
    int depth = 0;
    std::size_t start = open + 1;
    for (std::size_t at = open; at < p.size(); ++at) {
        const char c = p[at];
        if (c == '\\') {
            ++at;
        } else if (c == '{') {
            ++depth;
        } else if (c == ',' && depth == 1) {
            options.push_back(p.substr(start, at - start));
            start = at + 1;
        } else if (c == '}' && --depth == 0) {
            options.push_back(p.substr(start, at - start));
            const std::string_view before = p.substr(0, open);
            const std::string_view after = p.substr(at + 1);
            for (const std::string_view option : options) {
                const std::string one = std::string(before).append(option).append(after);
                if (const auto why = expand(one, out, bytes)) return why;
            }
            return std::nullopt;
        }
    }
    return glob_error::malformed;  // the brace is never closed
}

// Matches one pattern character (a literal, an escape, `?` or a bracket) at `at` against
// `c`, moving `at` past it.
bool match_one(std::string_view p, std::size_t& at, char c) {
    switch (p[at]) {
        case '?': ++at; return true;
        case '[': {
            const std::size_t end = bracket_end(p, at);
            const bool in = in_bracket(p.substr(at + 1, end - at - 2), c);
            at = end;
            return in;
        }
        case '\\': ++at; [[fallthrough]];
        default: return p[at++] == c;
    }
}

// A brace-free, well-formed pattern against a name: the greedy star with one backtrack
// point, never exponential but up to the product of the two lengths, so it spends `steps`
// (one a pattern character tried) and gives up when they run out.
std::optional<bool> match(std::string_view p, std::string_view s, std::uint64_t& steps) {
    std::size_t pi = 0, si = 0, star_p = npos, star_s = 0;
    while (si < s.size()) {
        if (steps == 0) return std::nullopt;
        --steps;
        if (pi < p.size() && p[pi] == '*') {
            while (pi < p.size() && p[pi] == '*') ++pi;
            star_p = pi;
            star_s = si;
            continue;
        }
        std::size_t next = pi;
        const bool one = pi < p.size() && match_one(p, next, s[si]);
        const std::uint64_t more = next > pi ? next - pi - 1 : 0;  // a bracket's or an escape's other characters
        if (more > steps) return std::nullopt;
        steps -= more;
        if (one) {
            pi = next;
            ++si;
            continue;
        }
        if (star_p == npos) return false;
        pi = star_p;
        si = ++star_s;
    }
    while (pi < p.size() && p[pi] == '*') ++pi;
    return pi == p.size();
}

}  // namespace

std::optional<glob> glob::compile(std::string_view pattern, glob_error& why) {
    if (pattern.size() > max_pattern) {
        why = glob_error::too_long;
        return std::nullopt;
    }
    glob g;
    std::size_t bytes = 0;
    if (const auto refused = expand(pattern, g.alternatives_, bytes)) {
        why = *refused;
        return std::nullopt;
    }
    return g;
}

std::optional<glob> glob::compile(std::string_view pattern) {
    glob_error ignored{};
    return compile(pattern, ignored);
}

std::optional<bool> glob::matches(std::string_view name, std::uint64_t& steps) const {
    for (const std::string& p : alternatives_) {
        const std::optional<bool> m = match(p, name, steps);
        if (!m || *m) return m;
    }
    return false;
}

std::optional<bool> glob_match(std::string_view pattern, std::string_view name) {
    const auto g = glob::compile(pattern);
    std::uint64_t steps = glob::max_steps;
    return g ? g->matches(name, steps) : std::nullopt;
}

}  // namespace ngfail::opensandbox::testing::detail
