// UTF-8 helpers for text that crosses the wire: core cuts reasons with them, the wire
// everything it writes and reads, the emulator and ngfail::otel what they hand on (part of the private `ngfail_text`, docs/architecture.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ngfail::text {

// Cuts `text` to at most `max_bytes`, never inside a UTF-8 sequence, marking the cut with
// a trailing "…" (counted in `max_bytes`). Text within the limit is left as it is.
void truncate_utf8(std::string& text, std::size_t max_bytes);

// How much of `text`, a piece of a stream, can go out now: all of it but a character its
// last bytes have begun and not ended (which the stream's next piece ends).
[[nodiscard]] std::size_t complete_prefix(std::string_view text) noexcept;

// One character decoded strictly (no overlongs, no surrogates, nothing past U+10FFFF).
struct code_point {
    std::uint32_t value = 0;
    std::size_t length = 0;  // bytes; 0 when the bytes at the position are not valid UTF-8
};

// The character starting at `text[at]` (`at` < `text.size()`).
[[nodiscard]] code_point decode_utf8(std::string_view text, std::size_t at) noexcept;

// Every character of `text` decodes strictly.
[[nodiscard]] bool is_valid_utf8(std::string_view text) noexcept;

// `text` with each byte that does not start a strictly valid character replaced by U+FFFD,
// as Go's JSON encoder writes them (what a JSON or protobuf string can carry).
[[nodiscard]] std::string valid_utf8(std::string_view text);

}  // namespace ngfail::text
