#include "text/printable.hpp"

namespace ngfail::text {

std::string printable(std::string_view text, std::size_t max_bytes) {
    constexpr std::string_view hex = "0123456789abcdef";
    const bool cut = text.size() > max_bytes;
    if (cut) text = text.substr(0, max_bytes);
    std::string out;
    out.reserve(text.size() + 3);
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x20 && byte < 0x7f && c != '"' && c != '\\') {
            out += c;
        } else {
            out += "\\x";
            out += hex[byte >> 4];
            out += hex[byte & 0xf];
        }
    }
    if (cut) out += "...";
    return out;
}

}  // namespace ngfail::text
