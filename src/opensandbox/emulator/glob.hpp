// File name patterns as execd's search matches them (doublestar's PathMatch applied to a
// file's name): `*` and `**` any run of characters, `?` one, `[abc]`, `[a-z]` and `[!a]`
// (or `[^a]`) one of a set, `{a,b}` either alternative, `\` the next character itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ngfail::opensandbox::testing::detail {

// Why a pattern is not compiled.
enum class glob_error {
    malformed,      // an unclosed `[` or `{`, a trailing `\`: execd's syntax error
    too_long,       // longer than `glob::max_pattern`
    too_branching,  // its braces expand to more than `glob::max_alternatives`
    too_large,      // its alternatives come to more than `glob::max_expanded` bytes
};

// A pattern read once (its braces expanded), to match many names: what a search of a whole
// tree does. A stranger's pattern costs bounded work: bounded in size before and after its
// braces are expanded, and matched within a budget of steps.
class glob {
public:
    static constexpr std::size_t max_pattern = 4096;
    static constexpr std::size_t max_alternatives = 256;
    static constexpr std::size_t max_expanded = 256 << 10;
    // What one search may spend matching: a step is a pattern character tried against a name's
    // (a search over one 16 KiB name once took 14 s).
    static constexpr std::uint64_t max_steps = std::uint64_t{1} << 24;

    // Nothing, and `why`, when the pattern is malformed or past a bound.
    [[nodiscard]] static std::optional<glob> compile(std::string_view pattern, glob_error& why);
    [[nodiscard]] static std::optional<glob> compile(std::string_view pattern);
    // Whether `name` matches, spending from `steps`; nothing once they have run out.
    [[nodiscard]] std::optional<bool> matches(std::string_view name, std::uint64_t& steps) const;

private:
    std::vector<std::string> alternatives_;
};

// Whether `name` matches `pattern`; nothing when the pattern is malformed (an unclosed `[`
// or `{`, a trailing `\`), which execd reports as a syntax error, past a bound, or when the
// match would take more than `glob::max_steps`.
[[nodiscard]] std::optional<bool> glob_match(std::string_view pattern, std::string_view name);

}  // namespace ngfail::opensandbox::testing::detail
