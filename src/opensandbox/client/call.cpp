#include "call.hpp"

#include <boost/json.hpp>

namespace ngfail::opensandbox::detail {

namespace json = boost::json;

namespace {


std::string reason_for(const observation& seen, const std::exception_ptr& cause) {
    std::string reason = seen.operation + " failed";
    if (seen.sandbox_id) reason += " on " + *seen.sandbox_id;
    if (!cause) return reason;
    try {
        std::rethrow_exception(cause);
    } catch (const std::exception& e) {
        reason += ": ";
        reason += std::string_view(e.what()).substr(0, 512);
    } catch (...) {
    }
    return reason;
}

}  // namespace

// The endpoint of execd (port 44772) for a sandbox, its credentials marked secret.
endpoint_info call_context::execd_endpoint(std::string_view sandbox_id) const {
    endpoint_info endpoint = endpoint_of(
        lifecycle(beast_http::verb::get, endpoint_path(sandbox_id, 44772), nullptr));
    for (const auto& header : endpoint.headers) {
        const auto named = [&](std::string_view secret) { return beast::iequals(header.first, secret); };
        if (named("X-EXECD-ACCESS-TOKEN") ||
            std::any_of(options.secret_headers.begin(), options.secret_headers.end(), named)) {
            secrets.add(header.second);
        }
    }
    return endpoint;
}


// A lifecycle request with the API key; error replies become api_errors.
json::value call_context::lifecycle(beast_http::verb verb, const std::string& path, const json::value* body) const {
    exchange x({options.host, options.port, ""}, deadline);
    x.connect();
    beast_http::request<beast_http::string_body> req(verb, lifecycle_path(path), 11);
    if (!options.api_key.empty()) req.set(api_key_header, options.api_key);
    req.set(beast_http::field::accept, "application/json");
    if (body) {
        req.set(beast_http::field::content_type, "application/json");
        req.body() = json::serialize(*body);
    }
    x.send(req);
    const string_response res = x.receive(options.max_body_bytes);
    if (res.result_int() >= 300) throw api_error_of(res.base(), res.body(), secrets);
    if (res.body().empty()) return nullptr;
    json::error_code ec;
    json::value v = json::parse(res.body(), ec);
    if (ec) malformed("the reply is not JSON");
    return v;
}

// Fills the observation from what went wrong, structurally.
void describe(observation& seen, const std::exception_ptr& cause) {
    seen.cause = cause;
    seen.reason = reason_for(seen, cause);
    try {
        std::rethrow_exception(cause);
    } catch (const api_error& e) {
        seen.http_status = e.status();
        seen.provider_code = e.code();
        seen.retry_after = e.retry_after();
    } catch (const connection_error& e) {
        seen.transport_error = e.code();
        seen.transport_phase = e.at();
    } catch (const std::system_error& e) {
        seen.transport_error = e.code();
        seen.transport_phase = phase::receive;
    } catch (...) {
    }
}

// Every text the observation took from a reply, with the request's secrets scrubbed (the
// cause, an api_error, was scrubbed when it was made).
void scrub(observation& seen, const redactor& secrets) {
    for (auto* text : {&seen.sandbox_id, &seen.reason, &seen.execution_id, &seen.provider_status_reason,
                       &seen.provider_code, &seen.sandbox_state, &seen.failure_kind}) {
        secrets.scrub(*text);
    }
}

std::chrono::milliseconds wait_before_retry(const observation& seen, const retry_policy& policy) {
    const auto wanted = seen.retry_after ? std::chrono::duration_cast<std::chrono::milliseconds>(*seen.retry_after)
                                         : policy.backoff;
    return std::min(wanted, policy.max_backoff);
}

// The failure's own classification says nothing was sent: the only case a retry is safe.
bool proven_not_sent(const failure& f) noexcept {
    const auto* sandbox = std::get_if<sandbox_details>(&f.details());
    return sandbox && sandbox->delivery == delivery::not_sent;
}


// What is wrong with the caller's arguments, said without repeating them (one may be a
// secret); nothing when they can be sent.
std::optional<std::string> refused_argument(const client_options& options, std::initializer_list<argument> arguments) {
    if (breaks_a_line(options.api_key)) return "the API key holds CR, LF or NUL";
    for (const argument& a : arguments) {
        if (a.value.empty()) return "the " + std::string(a.name) + " is empty";
        if (breaks_a_line(a.value)) return "the " + std::string(a.name) + " holds CR, LF or NUL";
    }
    return std::nullopt;
}

// A request refused before anything was sent: the caller's arguments cannot be sent.
failure refused_request(std::string_view operation, std::string_view sandbox_id, const std::string& problem,
                        const redactor& secrets) {
    std::optional<std::string> id;
    if (!sandbox_id.empty() && !breaks_a_line(sandbox_id)) id = secrets.scrubbed(sandbox_id);
    return make_sandbox_failure({.operation = std::string(operation),
                                 .kind = kind::provider_request_rejected,
                                 .sandbox_id = std::move(id),
                                 .reason = std::string(operation) + " was not sent: " + problem,
                                 .provider = "opensandbox",
                                 .delivery = delivery::not_sent});
}

// One execd request to the sandbox, through its endpoint with the endpoint's headers, the
// reply read whole; an error reply becomes an api_error.
string_response execd_call(const call_context& c, std::string_view sandbox_id, beast_http::verb verb,
                           const std::string& path, std::string body, std::string_view content_type) {
    const endpoint_info endpoint = c.execd_endpoint(sandbox_id);
    const target where = parse_endpoint(endpoint.endpoint);
    exchange x(where, c.deadline);
    x.connect();
    auto req = execd_request<beast_http::string_body>(verb, where, endpoint, path);
    if (!content_type.empty()) req.set(beast_http::field::content_type, content_type);
    req.body() = std::move(body);
    x.send(req);
    string_response res = x.receive(c.options.max_body_bytes);
    if (res.result_int() >= 300) throw api_error_of(res.base(), res.body(), c.secrets);
    return res;
}

json::value json_of(const string_response& res, const char* what) {
    json::error_code ec;
    json::value v = json::parse(res.body(), ec);
    if (ec) malformed(what);
    return v;
}

json::object string_map(const std::map<std::string, std::string>& m) {
    json::object o;
    for (const auto& [k, v] : m) o[k] = v;
    return o;
}

}  // namespace ngfail::opensandbox::detail
