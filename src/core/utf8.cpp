#include "core/utf8.hpp"

#include <string_view>

namespace ngfail::detail {

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

}  // namespace ngfail::detail
