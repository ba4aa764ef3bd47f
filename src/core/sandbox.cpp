#include <ngfail/sandbox.hpp>

#include "core/event_state.hpp"

namespace ngfail {
namespace {

std::string default_reason(const std::string& operation, const std::optional<std::string>& sandbox_id) {
    std::string reason = operation + " failed";
    if (sandbox_id) reason += " on " + *sandbox_id;
    return reason;
}

void default_reason(event_info& info, const sandbox_details& details) {
    if (info.reason.empty()) info.reason = default_reason(details.operation, details.sandbox_id);
}

// What every event has, taken from the facts; the sandbox's details stay in them until the
// record is built (`detail::sandbox_details_in_facts`).
event_info info_of(sandbox_facts& f) {
    return event_info{.kind = f.kind,
                      .reason = f.reason && !f.reason->empty() ? std::move(*f.reason)
                                                               : default_reason(f.operation, f.sandbox_id),
                      .boundary = f.boundary,
                      .stage = f.stage,
                      .http_status = f.http_status,
                      .cause = std::move(f.cause)};
}

failure sandbox_record(sandbox_facts&& facts) {
    return detail::make_record(info_of(facts), detail::sandbox_details_in_facts{facts});
}

failure sandbox_record(event_info&& info, sandbox_details&& details) {
    default_reason(info, details);
    return detail::make_record(std::move(info), std::move(details));
}

}  // namespace

sandbox_failure::sandbox_failure(failure state) : failure_event(std::move(state)) {}

sandbox_failure::sandbox_failure(sandbox_facts facts) : failure_event(sandbox_record(std::move(facts))) {}

sandbox_failure::sandbox_failure(event_info info, sandbox_details details)
    : failure_event(sandbox_record(std::move(info), std::move(details))) {}

const sandbox_details& sandbox_failure::sandbox() const noexcept { return std::get<sandbox_details>(details()); }

namespace detail {

sandbox_details_in_facts::operator sandbox_details() const noexcept {
    return sandbox_details{.operation = std::move(facts.operation),
                           .provider = std::move(facts.provider),
                           .sandbox_id = std::move(facts.sandbox_id),
                           .execution_id = std::move(facts.execution_id),
                           .provider_status_reason = std::move(facts.provider_status_reason),
                           .provider_code = std::move(facts.provider_code),
                           .exit_code = facts.exit_code,
                           .signal = std::move(facts.signal),
                           .delivery = facts.delivery,
                           .retry_after = facts.retry_after};
}

}  // namespace detail

std::optional<delivery> delivery_of(const event_details& details) noexcept {
    const auto* sandbox = std::get_if<sandbox_details>(&details);
    return sandbox ? sandbox->delivery : std::nullopt;
}

std::optional<delivery> delivery_of(const failure& f) noexcept { return delivery_of(f.details()); }

// Out of memory, the kind survives.
failure make_sandbox_failure(event_info info, sandbox_details details) noexcept {
    const std::error_code kind = info.kind;
    try {
        return sandbox_record(std::move(info), std::move(details));
    } catch (...) {
        return failure(kind);
    }
}

failure make_sandbox_failure(sandbox_facts facts) noexcept {
    const std::error_code kind = facts.kind;
    try {
        return sandbox_record(std::move(facts));
    } catch (...) {
        return failure(kind);
    }
}

}  // namespace ngfail
