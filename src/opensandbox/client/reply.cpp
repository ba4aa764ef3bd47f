#include "reply.hpp"
#include "request_safety.hpp"

#include <boost/beast/http/field.hpp>
#include <boost/json.hpp>

#include <charconv>

namespace ngfail::opensandbox::detail {

namespace beast_http = boost::beast::http;
namespace json = boost::json;

namespace {

std::optional<std::chrono::seconds> retry_after_of(const beast_http::response_header<>& head) {
    const auto it = head.find(beast_http::field::retry_after);
    if (it == head.end()) return std::nullopt;
    int seconds = 0;
    const auto text = it->value();
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (ec != std::errc() || seconds < 0) return std::nullopt;
    return std::chrono::seconds(seconds);
}

}  // namespace

void malformed(const char* what) {
    throw std::system_error(make_error_code(errc::malformed_response), what);
}

// "host:port[/path]" as the endpoint API returns it (a scheme is tolerated).
target parse_endpoint(std::string_view endpoint, bool tls) {
    if (breaks_a_line(endpoint)) malformed("the endpoint holds CR, LF or NUL");
    if (const auto scheme = endpoint.find("://"); scheme != std::string_view::npos) {
        const std::string_view name = endpoint.substr(0, scheme);
        if (name != "http" && name != "https") malformed("the endpoint's scheme is neither http nor https");
        // Never a downgrade: the execd token and the endpoint's headers would go in clear.
        if (tls && name == "http") malformed("an https server's endpoint names http://");
        tls = name == "https";
        endpoint.remove_prefix(scheme + 3);
    }
    unsigned short port = tls ? 443 : 80;
    const auto slash = endpoint.find('/');
    const std::string_view authority = endpoint.substr(0, slash);
    // host, host:port, [v6], [v6]:port
    const std::size_t host_end = authority.starts_with('[') ? authority.find(']') + 1 : authority.rfind(':');
    const std::string_view host = authority.substr(0, std::min(host_end, authority.size()));
    if (host_end != std::string_view::npos && host_end < authority.size()) {
        if (authority[host_end] != ':') malformed("the endpoint's host is not a host name");
        const auto digits = authority.substr(host_end + 1);
        int n = 0;
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
        if (ec != std::errc() || end != digits.data() + digits.size() || n <= 0 || n > 65535) {
            malformed("the endpoint's port is not a number");
        }
        port = static_cast<unsigned short>(n);
    }
    if (host.empty() || host == "[]" || host.find_first_of(" \t/?#@") != std::string_view::npos) {
        malformed("the endpoint's host is not a host name");
    }
    const std::string_view bare = host.starts_with('[') ? host.substr(1, host.size() - 2) : host;
    return {{tls, std::string(bare), port},
            slash == std::string_view::npos ? std::string() : path_prefix(endpoint.substr(slash))};
}

endpoint_info endpoint_of(const json::value& reply) {
    const auto& o = as_object(reply);
    endpoint_info info{.endpoint = required_string(o, "endpoint")};
    if (const auto* headers = o.if_contains("headers"); headers && headers->is_object()) {
        std::size_t bytes = 0;
        for (const auto& [name, value] : headers->as_object()) {
            if (!value.is_string()) continue;
            if (!is_field_name(name)) malformed("an endpoint header's name is not an HTTP field name");
            if (breaks_a_line(value.as_string())) malformed("an endpoint header holds a line break");
            bytes += name.size() + value.as_string().size() + 4;  // as sent: "name: value\r\n"
            if (info.headers.size() == max_endpoint_headers || bytes > max_endpoint_header_bytes) {
                malformed("the endpoint's headers are more than a request head may carry");
            }
            info.headers.emplace(name, value.as_string());
        }
    }
    return info;
}

// The api_error for an error reply, from its {"code","message"} envelope.
api_error api_error_of(const beast_http::response_header<>& head, std::string_view body, const redactor& secrets) {
    std::optional<std::string> code;
    std::string message = "no error envelope";
    json::error_code ec;
    const json::value v = json::parse(body, ec);
    if (!ec && v.is_object()) {
        const auto& o = v.as_object();
        if (const auto* c = o.if_contains("code"); c && c->is_string()) code = std::string(c->as_string().subview().substr(0, 256));
        if (const auto* m = o.if_contains("message"); m && m->is_string()) message = std::string(m->as_string().subview().substr(0, 1024));
    }
    std::optional<std::string> request_id;
    if (const auto it = head.find("X-Request-ID"); it != head.end()) request_id = std::string(it->value().substr(0, 256));
    secrets.scrub(code);
    secrets.scrub(message);
    secrets.scrub(request_id);
    return api_error(static_cast<int>(head.result_int()), std::move(code), message, std::move(request_id),
                     retry_after_of(head));
}

const json::object& as_object(const json::value& v) {
    if (!v.is_object()) malformed("the reply is not a JSON object");
    return v.as_object();
}

std::string required_string(const json::object& o, std::string_view key) {
    const json::value* v = o.if_contains(key);
    if (!v || !v->is_string()) malformed("a required string field is missing from the reply");
    return std::string(v->as_string());
}

std::optional<std::string> optional_string(const json::object& o, std::string_view key) {
    const json::value* v = o.if_contains(key);
    return v && v->is_string() ? std::optional(std::string(v->as_string())) : std::nullopt;
}

entry_info entry_of(const json::value& v) {
    const auto& o = as_object(v);
    const auto whole = [&](std::string_view key) -> std::int64_t {
        const json::value* n = o.if_contains(key);
        if (!n || !n->is_int64()) malformed("a file entry's size or mode is not a whole number");
        return n->as_int64();
    };
    return {.path = required_string(o, "path"),
            .type = optional_string(o, "type").value_or(""),
            .size = whole("size"),
            .mode = whole("mode"),
            .owner = optional_string(o, "owner").value_or(""),
            .group = optional_string(o, "group").value_or(""),
            .modified_at = optional_string(o, "modified_at").value_or(""),
            .created_at = optional_string(o, "created_at").value_or("")};
}

sandbox_info sandbox_of(const json::value& v) {
    const auto& o = as_object(v);
    sandbox_info info{.id = required_string(o, "id"),
                      .expires_at = optional_string(o, "expiresAt"),
                      .snapshot_id = optional_string(o, "snapshotId")};
    const json::value* status = o.if_contains("status");
    if (!status) malformed("the sandbox has no status");
    const auto& s = as_object(*status);
    info.state = required_string(s, "state");
    info.reason = optional_string(s, "reason");
    // Metadata values are strings (Kubernetes label values); anything else is not kept.
    if (const json::value* m = o.if_contains("metadata"); m && m->is_object()) {
        for (const auto& [key, value] : m->as_object()) {
            if (value.is_string()) info.metadata.emplace(key, value.as_string());
        }
    }
    return info;
}

}  // namespace ngfail::opensandbox::detail
