// <ngfail/opensandbox/call_observer.hpp> — what a client tells a tracer or a meter about each
// call (target ngfail::opensandbox_client).
//
// The client depends on no telemetry library: it reports each call's beginning, its
// attempts and its end to a `call_observer` given in `client_options::observer`, and the
// observer records what it wants. `ngfail::otel` (<ngfail/otel/client_instrumentation.hpp>)
// is the OpenTelemetry one:
//
//   ngfail::opensandbox::client c({.observer = ngfail::otel::instrument_client({})});
//
// Per call: `begin` once, then `attempt_began` before each attempt, `attempt_failed` for
// each attempt the client tries again, and `ended` once with the call's outcome (which also
// ends its last attempt). Calls run concurrently: an observer is shared by all of them; an
// `observed_call` belongs to one call and is used by one thread at a time.
#pragma once

#include <ngfail/failure.hpp>
#include <ngfail/opensandbox/operation.hpp>

#include <memory>
#include <span>
#include <string_view>

namespace ngfail::opensandbox {

// A key and value the caller attaches to one call's trace (`call_options::trace_labels`):
// span attributes, never metric ones (a trajectory's id, a run's).
struct trace_label {
    std::string_view key;
    std::string_view value;
};

// One call, seen from its beginning to its end.
class observed_call {
public:
    virtual ~observed_call() = default;

    // An attempt begins (the first is 1). Returns the W3C `traceparent` value the attempt's
    // requests carry: "00-<32 hex>-<16 hex>-<2 hex>", lowercase; anything else (and empty)
    // sends none. The client copies it before this returns.
    virtual std::string_view attempt_began(int attempt) = 0;

    // The attempt that began last failed with `f`, and the call will try again: a failure
    // the call may still recover from.
    virtual void attempt_failed(const failure& f) = 0;

    // The program an exec runs, for a span name: the command's first word after any
    // `NAME=value` assignments, never its arguments, scrubbed of the client's secrets,
    // printable ASCII, at most 64 bytes. Only a plain command line names one (a quote, an
    // escape or an expansion before the program's end may hide a secret: then none). Called
    // at most once, during the first attempt, by the command operations.
    virtual void command_program(std::string_view program) { (void)program; }

    // The call ended: `f` is its failure, empty on success; `sandbox_id` the sandbox it
    // concerned, when known (a new sandbox's, after a create).
    virtual void ended(const failure& f, std::string_view sandbox_id) = 0;
};

// Watches every call of the clients it is given to; thread-safe.
class call_observer {
public:
    virtual ~call_observer() = default;

    // A call of `op` begins (`sandbox_id` empty when it names none, as a create); nullptr
    // when this call is not to be watched.
    [[nodiscard]] virtual std::unique_ptr<observed_call> begin(operation op, std::string_view sandbox_id,
                                                               std::span<const trace_label> labels) = 0;
};

}  // namespace ngfail::opensandbox
