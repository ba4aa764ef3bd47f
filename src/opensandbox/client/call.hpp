// One call of the client, whatever the operation: its context (deadline, secrets, the
// lifecycle and execd requests every operation is made of), the checks on its arguments,
// and the attempt loop that classifies each failure and retries only what was not sent.
#pragma once

#include "connection.hpp"
#include "redactor.hpp"
#include "request_safety.hpp"

#include <ngfail/transport.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <initializer_list>
#include <map>
#include <thread>

namespace ngfail::opensandbox::detail {

inline constexpr std::string_view api_key_header = "OPEN-SANDBOX-API-KEY";
inline constexpr auto status_probe_timeout = std::chrono::milliseconds(2000);

struct call_context {
    const client_options& options;
    clock::time_point deadline;
    redactor& secrets;  // what the request carried; scrubbed from everything recorded

    std::string lifecycle_path(std::string_view suffix) const { return "/v1" + std::string(suffix); }

    // The rest of the call's time, capped at `most`: a step (a status probe, a clean-up)
    // never outlives the call's deadline.
    [[nodiscard]] std::optional<call_context> within(std::chrono::milliseconds most) const {
        const auto now = clock::now();
        if (now >= deadline) return std::nullopt;
        return call_context{options, std::min(deadline, deadline_after(most)), secrets};
    }

    // GET …/endpoints/{port}, asking for the server proxy or a direct endpoint as configured.
    [[nodiscard]] std::string endpoint_path(std::string_view sandbox_id, int port) const {
        return "/sandboxes/" + path_segment(sandbox_id) + "/endpoints/" + std::to_string(port) +
               (options.use_server_proxy ? "?use_server_proxy=true" : "?use_server_proxy=false");
    }

    // The endpoint of execd (port 44772) for a sandbox, its credentials marked secret.
    [[nodiscard]] endpoint_info execd_endpoint(std::string_view sandbox_id) const;

    // A lifecycle request with the API key; error replies become api_errors.
    [[nodiscard]] boost::json::value lifecycle(beast_http::verb verb, const std::string& path,
                                               const boost::json::value* body) const;
};

// Fills the observation from what went wrong, structurally.
void describe(observation& seen, const std::exception_ptr& cause);

// Every text the observation took from a reply, with the request's secrets scrubbed (the
// cause, an api_error, was scrubbed when it was made).
void scrub(observation& seen, const redactor& secrets);

[[nodiscard]] std::chrono::milliseconds wait_before_retry(const observation& seen, const retry_policy& policy);

// The failure's own classification says nothing was sent: the only case a retry is safe.
[[nodiscard]] bool proven_not_sent(const failure& f) noexcept;

// A value the caller gave that may go on a request line or in a header.
struct argument {
    std::string_view name;
    std::string_view value;
};

// What is wrong with the caller's arguments, said without repeating them (one may be a
// secret); nothing when they can be sent.
[[nodiscard]] std::optional<std::string> refused_argument(const client_options& options,
                                                          std::initializer_list<argument> arguments);

// A request refused before anything was sent: the caller's arguments cannot be sent.
[[nodiscard]] failure refused_request(std::string_view operation, std::string_view sandbox_id,
                                      const std::string& problem, const redactor& secrets);

// Runs `attempt` until it succeeds, fails for good, or may not be retried. `attempt`
// returns the value, or nothing after recording its evidence in the observation.
template <class T, class Attempt>
result<T> call(const client_options& options, const call_options& per_call, std::string_view operation,
               std::string_view sandbox_id, std::initializer_list<argument> arguments, Attempt&& attempt) noexcept {
    try {
        redactor secrets;
        secrets.add(options.api_key);
        if (auto problem = refused_argument(options, arguments)) {
            return refused_request(operation, sandbox_id, *problem, secrets);
        }
        const int attempts = std::max(1, options.retries.max_attempts);
        for (int n = 1;; ++n) {
            observation seen{.operation = std::string(operation)};
            if (!sandbox_id.empty()) seen.sandbox_id = std::string(sandbox_id);
            const call_context context{options, deadline_after(per_call.timeout.value_or(options.timeout)), secrets};
            try {
                if (std::optional<T> value = attempt(context, seen)) return std::move(*value);
            } catch (...) {
                describe(seen, std::current_exception());
            }
            scrub(seen, secrets);
            failure f = to_failure(seen);
            if (n >= attempts || !proven_not_sent(f)) return f;
            if (per_call.log) per_call.log->observe_failure(f);
            std::this_thread::sleep_for(wait_before_retry(seen, options.retries));
        }
    } catch (...) {  // out of memory while describing a failure
        return failure(kind::transport_local_resource);
    }
}

// A call that returns nothing but success.
inline result<void> done(result<bool> r) noexcept {
    if (!r) return std::move(r).error();
    return boost::outcome_v2::success();
}

// An execd request to `where`, carrying the endpoint's headers (its access token included).
template <class Body>
beast_http::request<Body> execd_request(beast_http::verb verb, const target& where, const endpoint_info& endpoint,
                                        std::string_view path) {
    beast_http::request<Body> req(verb, where.base + std::string(path), 11);
    for (const auto& [name, value] : endpoint.headers) req.set(name, value);
    return req;
}

// One execd request to the sandbox, through its endpoint with the endpoint's headers, the
// reply read whole; an error reply becomes an api_error.
string_response execd_call(const call_context& c, std::string_view sandbox_id, beast_http::verb verb,
                           const std::string& path, std::string body = {}, std::string_view content_type = {});

// The reply's body as JSON; not JSON is malformed (`what` says what it should have been).
[[nodiscard]] boost::json::value json_of(const string_response& res, const char* what);

[[nodiscard]] boost::json::object string_map(const std::map<std::string, std::string>& m);

}  // namespace ngfail::opensandbox::detail
