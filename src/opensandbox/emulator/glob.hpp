// File name patterns as execd's search matches them (doublestar's PathMatch applied to a
// file's name): `*` and `**` any run of characters, `?` one, `[abc]`, `[a-z]` and `[!a]`
// (or `[^a]`) one of a set, `{a,b}` either alternative, `\` the next character itself.
#pragma once

#include <optional>
#include <string_view>

namespace ngfail::opensandbox::emulator {

// Whether `name` matches `pattern`; nothing when the pattern is malformed (an unclosed `[`
// or `{`, a trailing `\`), which execd reports as a syntax error.
[[nodiscard]] std::optional<bool> glob_match(std::string_view pattern, std::string_view name);

}  // namespace ngfail::opensandbox::emulator
