#include <ngfail/report.hpp>

#include "detail/detail_fields.hpp"
#include "detail/event_state.hpp"

#include <set>
#include <string_view>
#include <vector>

namespace ngfail {
namespace {

failure protocol_violation(std::string reason) {
    return failure(event_info{.kind = kind::protocol_violation, .reason = "failure report: " + std::move(reason)});
}

std::string limit_text(std::size_t actual, std::size_t limit) {
    return std::to_string(actual) + " bytes; the limit is " + std::to_string(limit);
}

// The first details string over `max`, as "field is N bytes; the limit is M".
std::optional<std::string> oversized_detail(const event_details& details, std::size_t max) {
    std::optional<std::string> found;
    detail::for_each_detail_string(details, [&](std::string_view field, const auto& value) {
        const std::string* text = detail::field_text(value);
        if (!found && text && text->size() > max) found = std::string(field) + " is " + limit_text(text->size(), max);
    });
    return found;
}

std::optional<std::string> broken_record_rule(const event_id& key, const event_record& record, const limits& lim) {
    const auto event = [&] { return "event " + to_string(key); };  // only built when a rule breaks
    if (record.id != key) return "events key " + to_string(key) + " does not match its event_id " + to_string(record.id);
    if (record.kind.size() > lim.max_string_bytes) {
        return event() + ": failure_kind is " + limit_text(record.kind.size(), lim.max_string_bytes);
    }
    if (record.reason.size() > lim.max_reason_bytes) {
        return event() + ": failure_reason is " + limit_text(record.reason.size(), lim.max_reason_bytes);
    }
    if (const auto detail = oversized_detail(record.details, lim.max_string_bytes)) return event() + ": " + *detail;
    if (record.cause_id == key) return event() + " is its own cause (a cycle)";
    return std::nullopt;
}

// Walks cause links from `start`: a cycle, a dangling link or excess depth is a broken rule.
std::optional<std::string> broken_chain_rule(const failure_report& report, const event_id& start, const limits& lim) {
    std::size_t depth = 1;
    for (auto it = report.events.find(start); it->second.cause_id; ++depth) {
        const event_id& next = *it->second.cause_id;
        const auto found = report.events.find(next);
        if (found == report.events.end()) {
            return "event " + to_string(it->first) + ": cause_id " + to_string(next) + " is not in the report";
        }
        if (depth > report.events.size()) return "the cause chain from event " + to_string(start) + " has a cycle";
        it = found;
    }
    if (depth > lim.max_chain_depth) {
        return "the cause chain from event " + to_string(start) + " has " + std::to_string(depth) +
               " levels; the limit is " + std::to_string(lim.max_chain_depth);
    }
    return std::nullopt;
}

// The records of the failure's chain, outermost first, as far as the links allow.
std::vector<const event_record*> failure_chain(const failure_report& report) {
    std::vector<const event_record*> chain;
    if (!report.failure_id) return chain;
    std::set<event_id> seen;
    for (auto it = report.events.find(*report.failure_id); it != report.events.end();) {
        if (!seen.insert(it->first).second) break;
        chain.push_back(&it->second);
        if (!it->second.cause_id) break;
        it = report.events.find(*it->second.cause_id);
    }
    return chain;
}

}  // namespace

event_record record_of(const failure& f) {
    event_record record{.id = f.id().is_nil() ? event_id::generate() : f.id(),
                        .kind = std::string(f.kind_name()),
                        .code = f.code(),
                        .reason = std::string(f.reason()),
                        .boundary = f.boundary(),
                        .stage = f.stage(),
                        .http_status = f.http_status(),
                        .details = f.details()};
    return record;
}

failure_report report_for(const failure& f) {
    failure_report report;
    if (!f) return report;
    std::optional<event_id> outer;
    event_record* previous = nullptr;
    for (const failure& level : cause_chain(f)) {
        event_record record = record_of(level);
        if (previous) previous->cause_id = record.id;
        if (!outer) outer = record.id;
        previous = &report.events.insert_or_assign(record.id, std::move(record)).first->second;
    }
    report.failure_id = outer;
    return report;
}

failure_report report_for(const std::exception_ptr& e) {
    const auto chain = cause_chain(e);
    return chain.empty() ? failure_report{} : report_for(chain.front());
}

void merge(failure_report& report, const failure_report& observed) {
    for (const auto& [id, record] : observed.events) report.events.try_emplace(id, record);
    report.dropped_events += observed.dropped_events;
}

result<void> validate(const failure_report& report, const limits& lim) {
    if (report.events.size() > lim.max_events) {
        return protocol_violation("it has " + std::to_string(report.events.size()) + " events; the limit is " +
                                  std::to_string(lim.max_events));
    }
    for (const auto& [key, record] : report.events) {
        if (auto broken = broken_record_rule(key, record, lim)) return protocol_violation(std::move(*broken));
    }
    if (report.failure_id && !report.events.contains(*report.failure_id)) {
        return protocol_violation("failure_id " + to_string(*report.failure_id) + " is not in the report");
    }
    for (const auto& [key, record] : report.events) {
        if (auto broken = broken_chain_rule(report, key, lim)) return protocol_violation(std::move(*broken));
    }
    return boost::outcome_v2::success();
}

failure rebuild_failure(const failure_report& report) {
    const auto chain = failure_chain(report);
    failure inner;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        const event_record& r = **it;
        const std::error_code code = is_kind(r.code) ? r.code : kind_from_name(r.kind);
        inner = detail::make_record(event_info{.kind = code,
                                               .reason = r.reason,
                                               .boundary = r.boundary,
                                               .stage = r.stage,
                                               .http_status = r.http_status,
                                               .cause = std::move(inner)},
                                    event_details(r.details), r.id);
    }
    return inner;
}

std::exception_ptr rebuild(const failure_report& report) {
    const failure f = rebuild_failure(report);
    if (!f) return nullptr;
    try {
        raise(f);
    } catch (...) {
        return std::current_exception();
    }
}

}  // namespace ngfail
