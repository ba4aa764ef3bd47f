// <ngfail/sandbox.hpp> — sandbox failures, built from explicit facts.
//
// `sandbox_failure` is the event a sandbox wrapper throws. Its constructor is the factory:
// it records the facts it is given and classifies nothing (a provider's classifier, such
// as <ngfail/opensandbox/classify.hpp>, decides the kind from structured evidence):
//
//   throw ngfail::sandbox_failure({.operation = "exec",
//                                  .kind = ngfail::kind::provider_oom_killed,
//                                  .sandbox_id = "sbx-42",
//                                  .provider_status_reason = "OOMKilled"});
//
// `http_status` describes this operation, never a child failure: a cause keeps its own
// evidence. `make_sandbox_failure` gives the same as a `noexcept` `failure`.
//
// `sandbox_facts` is the flat shorthand for the fields most wrappers set. The two-part form
// takes what every event has and the sandbox's details apart, and so reaches every field of
// `sandbox_details`, including any added after `sandbox_facts` was fixed:
//
//   throw ngfail::sandbox_failure({.kind = ngfail::kind::provider_oom_killed},
//                                 {.operation = "exec", .sandbox_id = "sbx-42"});
//
// Delivery — whether the request reached the sandbox — is the fact that says whether a
// retry is safe; it is at hand on both forms:
//
//   catch (const ngfail::sandbox_failure& e) { if (e.delivery() == ngfail::delivery::not_sent) retry(); }
//   if (auto r = c.try_exec(id, cmd); !r && ngfail::delivery_of(r.error()) == ngfail::delivery::not_sent) retry();
#pragma once

#include <ngfail/event.hpp>

#include <chrono>
#include <optional>
#include <string>

namespace ngfail {

// Designated initialisers follow this order.
struct sandbox_facts {
    std::string operation{};  // required
    std::error_code kind{};   // required
    std::optional<std::string> sandbox_id{};
    ngfail::cause cause{};
    std::optional<std::string> reason{};  // default: "<operation> failed[ on <sandbox_id>]"
    std::optional<std::string> execution_id{};
    std::optional<std::string> provider{};
    std::optional<std::string> provider_status_reason{};
    std::optional<int> exit_code{};
    std::optional<int> http_status{};
    std::optional<std::string> provider_code{};
    std::optional<std::string> signal{};
    std::optional<ngfail::delivery> delivery{};
    std::optional<std::chrono::seconds> retry_after{};
    std::optional<ngfail::boundary> boundary{};
    std::optional<ngfail::stage> stage{};
};

class sandbox_failure : public failure_event {
public:
    explicit sandbox_failure(sandbox_facts facts);
    // An empty `info.reason` becomes "<operation> failed[ on <sandbox_id>]", as with the facts.
    sandbox_failure(event_info info, sandbox_details details);
    [[nodiscard]] const sandbox_details& sandbox() const noexcept;
    // What the evidence established about delivery; none when it established nothing.
    [[nodiscard]] std::optional<ngfail::delivery> delivery() const noexcept { return sandbox().delivery; }

protected:
    explicit sandbox_failure(failure state);
    friend struct detail::event_access;
};

template <>
struct event_type_for<sandbox_details> {
    using type = sandbox_failure;
};

// The delivery a failure records (a sandbox failure's); none when it records none, or is
// not a sandbox failure.
[[nodiscard]] std::optional<delivery> delivery_of(const failure& f) noexcept;
// The same for a record's details (a report's `event_record::details`, say).
[[nodiscard]] std::optional<delivery> delivery_of(const event_details& details) noexcept;

// The same record as `sandbox_failure(facts)` would carry, as a failure; never throws.
[[nodiscard]] failure make_sandbox_failure(sandbox_facts facts) noexcept;
[[nodiscard]] failure make_sandbox_failure(event_info info, sandbox_details details) noexcept;

}  // namespace ngfail
