// <ngfail/one_line.hpp> — text from a stranger (a report, a policy file) made safe to print
// on one line of a terminal (target ngfail::wire).
//
//   std::cout << "class " << ngfail::one_line(name) << '\n';   // "class red\x1b[31m" stays text
//
// A terminal obeys control characters wherever they come from: ESC starts sequences that
// move the cursor, retitle the window or rewrite the screen, and so do the C1 controls (CSI
// is U+009B, or the lone byte 0x9b on a terminal that reads 8 bits). `one_line` shows every
// one of them as an escape and keeps all other UTF-8 as it is.
#pragma once

#include <ngfail/detail/cplusplus.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace ngfail {

// `text` as one line that is safe on a terminal:
//   - newline, return and tab as `\n`, `\r`, `\t`; the other C0 controls and DEL as `\x1b`;
//   - the C1 controls written as UTF-8 (U+0080–U+009F) as `\u009b`;
//   - the bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A–U+202E,
//     U+2066–U+2069), which reorder what follows them on the screen, as `\u202e`;
//   - every byte that is not part of valid UTF-8 (a lone 0x80–0xff, an overlong, a cut
//     sequence) as `\x9b`, so the C1 bytes of 8-bit terminals never pass;
//   - all other UTF-8 as it is (a backslash too: the escapes are for reading, not parsing).
// Cut after `max_bytes` bytes of `text`, never inside a character, with "..." after.
[[nodiscard]] std::string one_line(std::string_view text, std::size_t max_bytes = 200);

}  // namespace ngfail
