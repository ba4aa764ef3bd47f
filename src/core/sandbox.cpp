#include <ngfail/sandbox.hpp>

#include "core/event_state.hpp"

namespace ngfail {
namespace {

void default_reason(event_info& info, const sandbox_details& details) {
    if (!info.reason.empty()) return;
    info.reason = details.operation + " failed";
    if (details.sandbox_id) info.reason += " on " + *details.sandbox_id;
}

// The facts, split into what every event has and what only a sandbox event has, each
// made where its consumer takes it (no pair between): every move of a dozen optional
// strings shows in an event's creation time.
template <class Make>
auto with_split(sandbox_facts&& f, Make&& make) {
    return make(event_info{.kind = f.kind,
                           .reason = f.reason ? std::move(*f.reason) : std::string(),
                           .boundary = f.boundary,
                           .stage = f.stage,
                           .http_status = f.http_status,
                           .cause = std::move(f.cause)},
                sandbox_details{.operation = std::move(f.operation),
                                .provider = std::move(f.provider),
                                .sandbox_id = std::move(f.sandbox_id),
                                .execution_id = std::move(f.execution_id),
                                .provider_status_reason = std::move(f.provider_status_reason),
                                .provider_code = std::move(f.provider_code),
                                .exit_code = f.exit_code,
                                .signal = std::move(f.signal),
                                .delivery = f.delivery,
                                .retry_after = f.retry_after});
}

failure sandbox_record(event_info&& info, sandbox_details&& details) {
    default_reason(info, details);
    return detail::make_record(std::move(info), std::move(details));
}

}  // namespace

sandbox_failure::sandbox_failure(failure state) : failure_event(std::move(state)) {}

sandbox_failure::sandbox_failure(sandbox_facts facts)
    : failure_event(with_split(std::move(facts), [](event_info&& info, sandbox_details&& details) {
          return sandbox_record(std::move(info), std::move(details));
      })) {}

sandbox_failure::sandbox_failure(event_info info, sandbox_details details)
    : failure_event(sandbox_record(std::move(info), std::move(details))) {}

const sandbox_details& sandbox_failure::sandbox() const noexcept { return std::get<sandbox_details>(details()); }

std::optional<delivery> delivery_of(const event_details& details) noexcept {
    const auto* sandbox = std::get_if<sandbox_details>(&details);
    return sandbox ? sandbox->delivery : std::nullopt;
}

std::optional<delivery> delivery_of(const failure& f) noexcept { return delivery_of(f.details()); }

failure make_sandbox_failure(event_info info, sandbox_details details) noexcept {
    const std::error_code kind = info.kind;
    try {
        default_reason(info, details);
        return failure(std::move(info), event_details(std::move(details)));
    } catch (...) {  // building the reason ran out of memory
        return failure(kind);
    }
}

failure make_sandbox_failure(sandbox_facts facts) noexcept {
    const std::error_code kind = facts.kind;
    try {
        return with_split(std::move(facts), [](event_info&& info, sandbox_details&& details) {
            return make_sandbox_failure(std::move(info), std::move(details));
        });
    } catch (...) {  // moving the facts ran out of memory
        return failure(kind);
    }
}

}  // namespace ngfail
