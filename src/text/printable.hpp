// Text from the wire, made safe for one log line: core quotes unknown kinds with it, the
// wire what it refuses (part of the private `ngfail_text`, docs/architecture.md).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ngfail::text {

// `text` with printable ASCII kept and every other byte (controls, quotes, backslashes,
// non-ASCII) written as `\xNN`, cut after `max_bytes` input bytes with a trailing "...".
[[nodiscard]] std::string printable(std::string_view text, std::size_t max_bytes);

}  // namespace ngfail::text
