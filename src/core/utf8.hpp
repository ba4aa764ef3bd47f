// UTF-8 helpers for text that crosses the wire.
#pragma once

#include <cstddef>
#include <string>

namespace ngfail::detail {

// Cuts `text` to at most `max_bytes`, never inside a UTF-8 sequence, marking the cut with
// a trailing "…" (counted in `max_bytes`). Text within the limit is left as it is.
void truncate_utf8(std::string& text, std::size_t max_bytes);

}  // namespace ngfail::detail
