#include "text/utf8.hpp"

#include <array>
#include <string>
#include <string_view>

namespace ngfail::text {

void truncate_utf8(std::string& text, std::size_t max_bytes) {
    constexpr std::string_view ellipsis = "\xe2\x80\xa6";  // U+2026
    if (text.size() <= max_bytes) return;
    if (max_bytes < ellipsis.size()) {
        text.clear();
        return;
    }
    std::size_t cut = max_bytes - ellipsis.size();
    // Back up over continuation bytes (10xxxxxx) so the cut lands before a lead byte.
    for (int steps = 0; steps < 3 && cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80; ++steps) {
        --cut;
    }
    text.resize(cut);
    text += ellipsis;
}

std::size_t complete_prefix(std::string_view text) noexcept {
    // The last lead byte within a character's length of the end, and whether its character ends.
    for (std::size_t back = 1; back <= 4 && back <= text.size(); ++back) {
        const auto c = static_cast<unsigned char>(text[text.size() - back]);
        if ((c & 0xc0) == 0x80) continue;
        const std::size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
        return length > back ? text.size() - back : text.size();
    }
    return text.size();
}

code_point decode_utf8(std::string_view text, std::size_t at) noexcept {
    const auto c = static_cast<unsigned char>(text[at]);
    if (c < 0x80) return {c, 1};
    const std::size_t length = c >= 0xf8 ? 0 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    if (length == 0 || at + length > text.size()) return {};
    std::uint32_t cp = length == 4 ? c & 0x07u : length == 3 ? c & 0x0fu : c & 0x1fu;
    for (std::size_t k = 1; k < length; ++k) {
        const auto cc = static_cast<unsigned char>(text[at + k]);
        if ((cc & 0xc0) != 0x80) return {};
        cp = (cp << 6) | (cc & 0x3fu);
    }
    constexpr std::array<std::uint32_t, 5> min_for_length{0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_for_length[length] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return {};
    return {cp, length};
}

bool is_valid_utf8(std::string_view text) noexcept {
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t length = decode_utf8(text, at).length;
        if (length == 0) return false;
        at += length;
    }
    return true;
}

std::string valid_utf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t length = decode_utf8(text, at).length;
        out.append(length != 0 ? text.substr(at, length) : std::string_view("\xEF\xBF\xBD"));
        at += length != 0 ? length : 1;
    }
    return out;
}

}  // namespace ngfail::text
