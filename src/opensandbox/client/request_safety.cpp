#include "request_safety.hpp"

#include <boost/beast/core/string.hpp>

#include <algorithm>
#include <array>

namespace ngfail::opensandbox::detail {
namespace {

constexpr bool is_unreserved(unsigned char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
}

// RFC 3986 pchar (less the %-escape, kept as it is) plus '/'.
constexpr bool is_path_character(unsigned char c) noexcept {
    constexpr std::string_view allowed = "!$&'()*+,;=:@/%";
    return is_unreserved(c) || allowed.find(static_cast<char>(c)) != std::string_view::npos;
}

template <class Keep>
std::string percent_encode(std::string_view value, Keep keep) {
    constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(value.size());
    for (const char ch : value) {
        const auto c = static_cast<unsigned char>(ch);
        if (keep(c)) {
            out += ch;
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 0xf];
        }
    }
    return out;
}

}  // namespace

bool breaks_a_line(std::string_view value) noexcept {
    // Not find_first_of: it calls memchr over the set for every byte of the value.
    return std::any_of(value.begin(), value.end(), [](char c) { return c == '\r' || c == '\n' || c == '\0'; });
}

bool is_field_name(std::string_view name) noexcept {
    constexpr std::string_view symbols = "!#$%&'*+-.^_`|~";
    return !name.empty() && std::all_of(name.begin(), name.end(), [&](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               symbols.find(c) != std::string_view::npos;
    });
}

bool frames_the_request(std::string_view name) noexcept {
    return boost::beast::iequals(name, "Host") || boost::beast::iequals(name, "Content-Length") ||
           boost::beast::iequals(name, "Transfer-Encoding");
}

std::string path_segment(std::string_view value) { return percent_encode(value, is_unreserved); }

std::string sandbox_path(std::string_view sandbox_id, std::string_view suffix) {
    return "/sandboxes/" + path_segment(sandbox_id) + std::string(suffix);
}

std::string path_prefix(std::string_view value) { return percent_encode(value, is_path_character); }

}  // namespace ngfail::opensandbox::detail
