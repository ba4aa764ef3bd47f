// File name patterns as execd's search matches them (doublestar's PathMatch applied to a
// file's name): `*` and `**` any run of characters, `?` one, `[abc]`, `[a-z]` and `[!a]`
// (or `[^a]`) one of a set, `{a,b}` either alternative, `\` the next character itself.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ngfail::opensandbox::emulator {

// A pattern read once (its braces expanded), to match many names: what a search of a whole
// tree does.
class glob {
public:
    // Nothing when the pattern is malformed, or too long or too branching to match in bounded work.
    [[nodiscard]] static std::optional<glob> compile(std::string_view pattern);
    [[nodiscard]] bool matches(std::string_view name) const;

private:
    std::vector<std::string> alternatives_;
};

// Whether `name` matches `pattern`; nothing when the pattern is malformed (an unclosed `[`
// or `{`, a trailing `\`), which execd reports as a syntax error.
[[nodiscard]] std::optional<bool> glob_match(std::string_view pattern, std::string_view name);

}  // namespace ngfail::opensandbox::emulator
