#include "request.hpp"

#include <boost/beast/core/string.hpp>

#include <charconv>

namespace ngfail::opensandbox::detail {

namespace beast_http = boost::beast::http;

request::request(beast_http::verb method, std::string_view base, std::string_view path) : method_(method) {
    const auto name = beast_http::to_string(method);
    constexpr std::string_view version = " HTTP/1.1\r\n";
    head_.reserve(name.size() + 1 + base.size() + path.size() + version.size() + 160);  // room for a few fields
    head_.append(name.data(), name.size()).append(1, ' ').append(base).append(path).append(version);
}

std::size_t request::find(std::string_view name) const noexcept {
    const std::string_view head = head_;
    for (std::size_t line = head.find("\r\n") + 2; line < head.size(); line = head.find("\r\n", line) + 2) {
        const std::string_view start = head.substr(line, name.size() + 1);
        if (start.size() == name.size() + 1 && start.back() == ':' &&
            boost::beast::iequals(start.substr(0, name.size()), name)) {
            return line;
        }
    }
    return std::string_view::npos;
}

request& request::set(std::string_view name, std::string_view value) {
    if (const std::size_t line = find(name); line != std::string_view::npos) {
        head_.erase(line, head_.find("\r\n", line) + 2 - line);
    }
    head_.append(name).append(": ").append(value).append("\r\n");
    return *this;
}

request& request::set(beast_http::field name, std::string_view value) {
    const auto text = beast_http::to_string(name);
    return set(std::string_view(text.data(), text.size()), value);
}

void request::prepare_payload() {
    using beast_http::verb;
    if (body_.empty() && method_ != verb::post && method_ != verb::put && method_ != verb::options) return;
    char digits[20];
    const auto end = std::to_chars(digits, digits + sizeof digits, body_.size()).ptr;
    set(beast_http::field::content_length, std::string_view(digits, static_cast<std::size_t>(end - digits)));
}

}  // namespace ngfail::opensandbox::detail
