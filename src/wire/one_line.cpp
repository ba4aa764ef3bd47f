#include <ngfail/one_line.hpp>

#include "text/utf8.hpp"

#include <algorithm>
#include <cstdint>

namespace ngfail {
namespace {

// The bidirectional formatting characters: they reorder what a terminal shows after them
// (U+202E turns "exe.txt" into "txt.exe"), so a stranger's text could disguise a line.
bool reorders_text(std::uint32_t cp) noexcept {
    return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string one_line(std::string_view text, std::size_t max_bytes) {
    constexpr char hex[] = "0123456789abcdef";
    std::string out;
    const auto escape = [&](std::string_view prefix, std::uint32_t value) {
        out += prefix;
        out += hex[(value >> 4) & 0xf];
        out += hex[value & 0xf];
    };
    std::size_t i = 0;
    while (i < text.size()) {
        const auto [cp, length] = text::decode_utf8(text, i);
        if (i + std::max<std::size_t>(length, 1) > max_bytes) break;
        if (length == 0) {
            escape("\\x", static_cast<unsigned char>(text[i]));
        } else if (cp == '\n') {
            out += "\\n";
        } else if (cp == '\r') {
            out += "\\r";
        } else if (cp == '\t') {
            out += "\\t";
        } else if (cp < 0x20 || cp == 0x7f) {
            escape("\\x", cp);
        } else if (cp >= 0x80 && cp <= 0x9f) {
            escape("\\u00", cp);
        } else if (reorders_text(cp)) {
            escape("\\u", cp >> 8);
            escape("", cp);
        } else {
            out.append(text.data() + i, length);
        }
        i += std::max<std::size_t>(length, 1);
    }
    if (i < text.size()) out += "...";
    return out;
}

}  // namespace ngfail
