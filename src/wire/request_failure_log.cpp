#include <ngfail/request_failure_log.hpp>

namespace ngfail {

request_failure_log::request_failure_log(const limits& lim) : limits_(lim) {}

void request_failure_log::observe_failure(const failure& f) {
    failure_report observed = report_for(f);
    observed.failure_id.reset();
    const std::lock_guard lock(mutex_);
    add(observed);
}

void request_failure_log::observe_reply(const failure_report& report) {
    const std::lock_guard lock(mutex_);
    add(report);
}

failure_report request_failure_log::finish(const failure& own) const {
    failure_report report = report_for(own);
    const std::lock_guard lock(mutex_);
    if (auto merged = merge(report, observed_); !merged) {
        failure_report violation = report_for(merged.error());
        violation.failure_id.reset();
        (void)merge(report, violation);  // fresh ids: nothing to collide with
    }
    return report;
}

// Bounded: past `max_events`, the newest observed events are dropped and counted, as the
// header would drop them. A twin id is kept as a `protocol_violation` observed in its place.
void request_failure_log::add(const failure_report& observed) {
    if (auto merged = merge(observed_, observed); !merged) {
        failure_report violation = report_for(merged.error());
        violation.failure_id.reset();
        (void)merge(observed_, violation);
    }
    if (observed_.events.size() > limits_.max_events) observed_ = truncate_to_limits(std::move(observed_), limits_);
}

}  // namespace ngfail
