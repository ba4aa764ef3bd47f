// <ngfail/http.hpp> — failure reports on Boost.Beast messages (target ngfail::http).
//
//   // server: attach the report to every reply, success or failure
//   ngfail::http::attach(response, log.finish(own_failure));
//
//   // client: turn a reply into the remote failure, ids and causes preserved
//   try {
//       ngfail::http::raise_boundary_failure(response);   // nothing on a 2xx without failure
//   } catch (const ngfail::http::remote_failure& hop) {   // this hop's HTTP facts…
//       hop.status(); hop.body();
//   }
//   // …and the same exception is the rebuilt event: catch it as `sandbox_failure`,
//   // `failure_event` or `std::system_error`, walk it with `cause_chain`.
#pragma once

#include <ngfail/transport.hpp>
#include <ngfail/visit_event.hpp>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace ngfail::http {

// Sets the X-NG-Failure-Report header (encoded within `limits`).
template <bool IsRequest, class Body, class Fields>
void attach(boost::beast::http::message<IsRequest, Body, Fields>& message, const failure_report& report,
            const limits& limits = {}) {
    message.set(failure_header_name, encode_header(report, limits));
}

namespace detail {
[[nodiscard]] failure repeated_header(std::size_t count);
}  // namespace detail

// The report a message carries: the empty report when it has no header; a
// `protocol_violation` failure when the header is malformed or appears more than once
// (two reports on one reply, say success then failure, cannot both be believed).
template <bool IsRequest, class Body, class Fields>
[[nodiscard]] result<failure_report> report_of(const boost::beast::http::message<IsRequest, Body, Fields>& message,
                                               const limits& limits = {}) {
    const auto [first, last] = message.equal_range(failure_header_name);
    if (first == last) return failure_report{};
    if (const auto count = static_cast<std::size_t>(std::distance(first, last)); count > 1) {
        return detail::repeated_header(count);
    }
    return decode_header(std::string_view(first->value().data(), first->value().size()), limits);
}

// This hop's HTTP facts, kept apart from the rebuilt remote failure. Catch it to read them.
class remote_failure {
public:
    remote_failure(unsigned status, std::string body) : status_(status), body_(std::move(body)) {}
    virtual ~remote_failure() = default;

    [[nodiscard]] unsigned status() const noexcept { return status_; }
    // The reply's body as received (cut at `limits.max_string_bytes`); never part of
    // `what()`, reports or logs.
    [[nodiscard]] const std::string& body() const noexcept { return body_; }

private:
    unsigned status_;
    std::string body_;
};

// The rebuilt event of class `Event`, which is also a `remote_failure`.
template <class Event>
class remote_event : public Event, public remote_failure {
public:
    remote_event(const Event& event, unsigned status, std::string body)
        : Event(event), remote_failure(status, std::move(body)) {}
};

namespace detail {
// Throws `f` as a remote_event of its own class, nested over its causes.
[[noreturn]] void raise_remote(const failure& f, unsigned status, std::string body);
// Decides what a reply means; returns only for a 2xx without a failure.
void raise_for_reply(const result<failure_report>& report, unsigned status, std::string body);
}  // namespace detail

// Throws the remote failure the response reports (ids and causes preserved, each level its
// own class, the outermost also a `remote_failure` holding this hop's status and body).
// A malformed header throws a `protocol_violation`; a non-2xx reply without a failure
// throws an `undetermined` event with its status. Does nothing on a 2xx without failure.
template <class Body, class Fields>
void raise_boundary_failure(const boost::beast::http::response<Body, Fields>& response, const limits& limits = {}) {
    std::string body;
    if constexpr (std::is_convertible_v<const typename Body::value_type&, std::string_view>) {
        const std::string_view text = response.body();
        body.assign(text.substr(0, limits.max_string_bytes));
    }
    detail::raise_for_reply(report_of(response, limits), response.result_int(), std::move(body));
}

}  // namespace ngfail::http
