// <ngfail/event.hpp> — failure events: the exceptions a boundary throws.
//
// An event is a `std::system_error` whose `code()` is its kind, whose `what()` is
// "<kind>: <reason>", and which carries an id, evidence and an explicit cause:
//
//   try {
//       sdk.exec(cmd);
//   } catch (...) {
//       // "raise X from cause": the SDK's exception becomes the nested cause
//       std::throw_with_nested(ngfail::failure_event({.kind = ngfail::kind::transport_peer_drop,
//                                                      .reason = "exec stream dropped"}));
//   }
//
//   // or anywhere, with the cause given explicitly:
//   ngfail::raise(ngfail::failure_event({.kind = …, .reason = …, .cause = some_failure}));
//
//   catch (const std::system_error& e) {
//       if (e.code() == ngfail::domain::transport) …          // by domain
//       for (const ngfail::failure& level : ngfail::cause_chain(e)) …   // outermost first
//   }
//
// The classes: `failure_event` (no details), `sandbox_failure` (<ngfail/sandbox.hpp>),
// `model_failure`, and `foreign_failure`, which stands for a non-ngfail exception. Copies
// share one immutable record. None is `final`, and none is itself a `std::nested_exception`:
// a cause is applied when the event is raised, so `std::rethrow_if_nested` is safe on every
// caught event and reaches the cause exactly when there is one.
#pragma once

#include <ngfail/detail/event_access.hpp>
#include <ngfail/details.hpp>
#include <ngfail/failure.hpp>

#include <concepts>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace ngfail {

class failure_event : public std::system_error {
public:
    explicit failure_event(event_info info);
    failure_event(std::error_code kind, std::string reason);

    // "<kind>: <reason>"; nothing else, so nothing that could leak a secret.
    [[nodiscard]] const char* what() const noexcept override;

    [[nodiscard]] event_id id() const noexcept { return state_.id(); }
    [[nodiscard]] std::string_view kind_name() const noexcept { return state_.kind_name(); }
    [[nodiscard]] std::string_view reason() const noexcept { return state_.reason(); }
    [[nodiscard]] std::optional<ngfail::boundary> boundary() const noexcept { return state_.boundary(); }
    [[nodiscard]] std::optional<ngfail::stage> stage() const noexcept { return state_.stage(); }
    [[nodiscard]] std::optional<int> http_status() const noexcept { return state_.http_status(); }
    [[nodiscard]] const event_details& details() const noexcept { return state_.details(); }

    // The cause, without rethrowing it: the nested exception of a caught nested event, else
    // the explicit cause the event was built with (a failure cause becomes its event), else
    // null.
    [[nodiscard]] std::exception_ptr cause() const;

    // Writes what its `failure` writes: `what()` and the id, "provider_oom_killed: exec ended
    // (0192f1c4-…)", so that `std::cerr << e` works on any caught event.
    friend std::ostream& operator<<(std::ostream& out, const failure_event& e);

protected:
    // An event for an existing record (same id): how `raise(failure)` and `rebuild` make them.
    explicit failure_event(failure state);

private:
    friend struct detail::event_access;
    failure state_;
};

// A model request failed; details: `model_details`.
class model_failure : public failure_event {
public:
    model_failure(event_info info, model_details details);
    [[nodiscard]] const model_details& model() const noexcept;

protected:
    explicit model_failure(failure state);
    friend struct detail::event_access;
};

// Stands for a non-ngfail exception, so every level of a chain has a kind and an id.
// In-process it keeps the original as its cause (`std::rethrow_if_nested` reaches the
// original type once raised); rebuilt from the wire it has no cause, since the type cannot
// travel. Details: `sdk_error_details` of the original.
class foreign_failure : public failure_event {
public:
    explicit foreign_failure(std::exception_ptr original, std::error_code kind = ngfail::kind::undetermined);
    foreign_failure(event_info info, sdk_error_details details);
    [[nodiscard]] const sdk_error_details& sdk_error() const noexcept;

protected:
    explicit foreign_failure(failure state);
    friend struct detail::event_access;
};

// The event class a details type raises as (specialised beside each class).
template <class Details>
struct event_type_for;
template <>
struct event_type_for<std::monostate> {
    using type = failure_event;
};
template <>
struct event_type_for<model_details> {
    using type = model_failure;
};
template <>
struct event_type_for<sdk_error_details> {
    using type = foreign_failure;
};

// Implemented by exception types that carry an HTTP reply's facts as data (the OpenSandbox
// client's `api_error`, or your SDK's), so that `sdk_error_details_of` and classifiers
// read them structurally instead of parsing text.
class structured_error {
public:
    virtual ~structured_error() = default;
    [[nodiscard]] virtual std::optional<int> http_status() const noexcept = 0;
    [[nodiscard]] virtual std::optional<std::string> error_code_name() const = 0;
    [[nodiscard]] virtual std::optional<std::string> request_id() const = 0;
};

// ---- raising ----------------------------------------------------------------------------

namespace detail {
template <class Event>
[[noreturn]] void throw_nested_over(const Event& event, const std::exception_ptr& cause) {
    try {
        std::rethrow_exception(cause);
    } catch (...) {
        std::throw_with_nested(event);
    }
}
}  // namespace detail

// Throws `event` (its static type, as `throw event` would) nested over its cause, exactly
// as `std::throw_with_nested` inside a handler of the cause would; plainly without one.
template <std::derived_from<failure_event> Event>
[[noreturn]] void raise(const Event& event) {
    if (const std::exception_ptr c = event.cause()) detail::throw_nested_over(event, c);
    throw event;
}

// Throws the failure as its event: the class its details call for, same id, nested over
// its cause chain (each level its own class). A kind-only failure becomes an event with a
// fresh id; an empty one, an `undetermined` event saying so.
[[noreturn]] void raise(const failure& f);

// The caught event as a failure, sharing its record (same id) and keeping the nested cause
// of a caught nested event. Never throws; if memory runs out, the nested cause is dropped.
[[nodiscard]] failure failure_of(const failure_event& e) noexcept;

// ---- walking causes ---------------------------------------------------------------------

// The explicit chain, outermost first, one failure per level (sharing each event's record).
// A non-ngfail exception ends the chain as a `foreign_failure` level whose cause is the
// original. Levels linked as records are walked without rethrowing; an exception_ptr link
// is rethrown once, internally, to see what it holds. Never throws across levels.
[[nodiscard]] std::vector<failure> cause_chain(const std::exception& e);
[[nodiscard]] std::vector<failure> cause_chain(const std::exception_ptr& e);
[[nodiscard]] std::vector<failure> cause_chain(const failure& f);

// The outermost event in the chain that names a boundary; empty when none does.
[[nodiscard]] failure find_boundary_failure(const std::exception_ptr& e);

// Describes any exception: demangled dynamic type name, `what()`, and the HTTP status,
// code and request id where the type carries them structurally (`structured_error`;
// `std::system_error` and `boost::system::system_error` give "<category>:<value>" as code).
// Never the request, its headers or its body.
[[nodiscard]] sdk_error_details sdk_error_details_of(const std::exception_ptr& e);
[[nodiscard]] sdk_error_details sdk_error_details_of(const std::exception& e);

}  // namespace ngfail
