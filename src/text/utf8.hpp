// UTF-8 helpers for text that crosses the wire: core cuts reasons with them, the wire
// everything it writes and reads (part of the private `ngfail_text`, docs/architecture.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ngfail::text {

// Cuts `text` to at most `max_bytes`, never inside a UTF-8 sequence, marking the cut with
// a trailing "…" (counted in `max_bytes`). Text within the limit is left as it is.
void truncate_utf8(std::string& text, std::size_t max_bytes);

// One character decoded strictly (no overlongs, no surrogates, nothing past U+10FFFF).
struct code_point {
    std::uint32_t value = 0;
    std::size_t length = 0;  // bytes; 0 when the bytes at the position are not valid UTF-8
};

// The character starting at `text[at]` (`at` < `text.size()`).
[[nodiscard]] code_point decode_utf8(std::string_view text, std::size_t at) noexcept;

}  // namespace ngfail::text
