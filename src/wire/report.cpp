#include <ngfail/report.hpp>

#include "core/rebuilt_record.hpp"
#include "wire/details_schema.hpp"
#include "wire/envelope_schema.hpp"
#include "wire/report_links.hpp"
#include "wire/strict_json.hpp"
#include "text/utf8.hpp"

#include <algorithm>
#include <iterator>
#include <cstdint>
#include <string_view>
#include <vector>

namespace ngfail {
namespace wire::detail {

std::pmr::memory_resource& table_memory() noexcept {
    thread_local std::pmr::unsynchronized_pool_resource pool(
        std::pmr::pool_options{.max_blocks_per_chunk = 4, .largest_required_pool_block = 256 << 10});
    return pool;
}

report_links::report_links(const failure_report& report) {
    const std::size_t n = report.events.size();
    events.reserve(n);
    for (auto it = report.events.begin(); it != report.events.end(); ++it) events.push_back(it);
    cause.assign(n, none);
    citers.assign(n, 0);
    bool linked = false;
    for (std::size_t i = 0; i < n; ++i) {
        const auto& cause_id = events[i]->second.cause_id;
        if (!cause_id) continue;
        linked = true;
        cause[i] = index_of(*cause_id);
        if (cause[i] == none) cause[i] = dangling;
        if (cause[i] < n) ++citers[cause[i]];
    }
    depth.assign(n, 1);
    if (!linked) return;  // every event a chain of one (a report of observed events, say)
    // Longest chains, outermost down: an event's depth is settled once every event naming it
    // as its cause has been; one on a cycle (or below one) never is, even when a chain from
    // outside leads into the cycle, and gets 0.
    per_event<std::size_t> waiting = citers;
    per_event<std::size_t> ready;
    ready.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        if (waiting[i] == 0) ready.push_back(i);
    }
    while (!ready.empty()) {
        const std::size_t i = ready.back();
        ready.pop_back();
        const std::size_t c = cause[i];
        if (c >= n) continue;
        depth[c] = std::max(depth[c], depth[i] + 1);
        if (--waiting[c] == 0) ready.push_back(c);
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (waiting[i] != 0) depth[i] = 0;
    }
}

std::size_t report_links::index_of(const event_id& id) const noexcept {
    const auto found = std::lower_bound(events.begin(), events.end(), id,
                                        [](const iterator& it, const event_id& key) { return it->first < key; });
    return found != events.end() && (*found)->first == id ? static_cast<std::size_t>(found - events.begin()) : none;
}

std::size_t report_links::deepest() const noexcept {
    return depth.empty() ? 0 : *std::max_element(depth.begin(), depth.end());
}

std::vector<event_id> failure_chain_ids(const failure_report& report) {
    std::vector<event_id> chain;
    if (!report.failure_id) return chain;
    for (auto it = report.events.find(*report.failure_id); it != report.events.end();) {
        if (std::find(chain.begin(), chain.end(), it->first) != chain.end()) break;
        chain.push_back(it->first);
        if (!it->second.cause_id) break;
        it = report.events.find(*it->second.cause_id);
    }
    return chain;
}

}  // namespace wire::detail

namespace {

using wire::detail::report_links;

// The report's rules, broken: the one protocol_violation helper, the reason prefixed.
failure report_violation(std::string reason) {
    return wire::detail::protocol_violation("failure report: " + std::move(reason));
}

std::string limit_text(std::size_t actual, std::size_t limit) {
    return std::to_string(actual) + " bytes; the limit is " + std::to_string(limit);
}

// ---- the value rules: the envelope's table, read by validation and by truncation ----------

// What a string of a record is held to, named as `validate` names it.
struct text_rule {
    std::string_view prefix;  // "details." for a details field
    std::string_view field;
    std::size_t limits::*max_bytes;
};

// An optional number that must lie in [lo, hi] when present.
struct number_rule {
    std::string_view prefix;
    std::string_view field;
    std::int64_t lo;
    std::int64_t hi;
};

// Which values of a record a walk visits: its strings, held to limits of bytes, or its
// numbers, held to ranges.
enum class values { text, numbers };

// Calls `f(rule, value)` for each of a record's values of the kind asked for, in the
// envelope's order (the details' where the details are); `value` is const or not, as
// `Record` is.
template <values which, class Record, class F>
void for_each_value(Record& r, F&& f) {
    wire::detail::for_each_envelope_field([&](const auto& row) {
        auto& value = r.*row.member;
        using member = std::remove_cvref_t<decltype(value)>;
        if constexpr (std::is_same_v<member, event_details> && which == values::text) {
            wire::detail::for_each_detail_string(value, [&](std::string_view name, auto& text) {
                f(text_rule{"details.", name, row.max_bytes}, text);
            });
        } else if constexpr (std::is_same_v<member, event_details>) {
            wire::detail::for_each_detail_number(value, [&](std::string_view name, std::int64_t lo, std::int64_t hi,
                                                            auto& number) {
                f(number_rule{"details.", name, lo, hi}, number);
            });
        } else if constexpr (wire::detail::is_text<member> && which == values::text) {
            f(text_rule{"", row.name, row.max_bytes}, value);
        } else if constexpr (wire::detail::is_number<member> && which == values::numbers) {
            f(number_rule{"", row.name, row.lo, row.hi}, value);
        }
    });
}

using wire::detail::number_of;

template <class Value>
bool breaks(const number_rule& rule, const Value& value) noexcept {
    return value && (number_of(value) < rule.lo || number_of(value) > rule.hi);
}

// What `validate` says of a broken value, made only then: out of line, so that the checks
// stay inline in the walk over every record.
[[gnu::noinline, gnu::cold]] std::string out_of_range(const number_rule& rule, std::int64_t value) {
    return std::string(rule.prefix) + std::string(rule.field) + " is " + std::to_string(value) + "; it must be from " +
           std::to_string(rule.lo) + " to " + std::to_string(rule.hi);
}
[[gnu::noinline, gnu::cold]] std::string over_limit(const text_rule& rule, std::size_t actual, std::size_t max) {
    return std::string(rule.prefix) + std::string(rule.field) + " is " + limit_text(actual, max);
}

std::optional<std::string> broken_number(const event_record& record) {
    std::optional<std::string> found;
    for_each_value<values::numbers>(record, [&](const number_rule& rule, const auto& value) {
        if (!found && breaks(rule, value)) found = out_of_range(rule, number_of(value));
    });
    return found;
}

// The first string over its limit, as "field is N bytes; the limit is M".
std::optional<std::string> oversized_text(const event_record& record, const limits& lim) {
    std::optional<std::string> found;
    for_each_value<values::text>(record, [&](const text_rule& rule, const auto& value) {
        const std::string* text = wire::detail::field_text(value);
        const std::size_t max = lim.*rule.max_bytes;
        if (!found && text && text->size() > max) found = over_limit(rule, text->size(), max);
    });
    return found;
}

std::optional<std::string> broken_record_rule(const event_id& key, const event_record& record, const limits& lim) {
    const auto event = [&] { return "event " + to_string(key); };  // only built when a rule breaks
    if (key.is_nil()) return "an event's id is the nil UUID, which names no event";
    if (record.id != key) return "events key " + to_string(key) + " does not match its event_id " + to_string(record.id);
    if (const auto text = oversized_text(record, lim)) return event() + ": " + *text;
    if (const auto number = broken_number(record)) return event() + ": " + *number;
    if (record.cause_id == key) return event() + " is its own cause (a cycle)";
    return std::nullopt;
}

std::optional<std::string> broken_link_rule(const report_links& links, const limits& lim) {
    for (std::size_t i = 0; i < links.events.size(); ++i) {
        if (links.cause[i] == report_links::dangling) {
            return "event " + to_string(links.events[i]->first) + ": cause_id " +
                   to_string(*links.events[i]->second.cause_id) + " is not in the report";
        }
    }
    for (std::size_t i = 0; i < links.events.size(); ++i) {
        if (links.depth[i] == 0) return "the cause chain through event " + to_string(links.events[i]->first) + " has a cycle";
    }
    if (const std::size_t deepest = links.deepest(); deepest > lim.max_chain_depth) {
        const auto at = std::find(links.depth.begin(), links.depth.end(), deepest) - links.depth.begin();
        return "the cause chain down to event " + to_string(links.events[static_cast<std::size_t>(at)]->first) +
               " has " + std::to_string(deepest) + " levels; the limit is " + std::to_string(lim.max_chain_depth);
    }
    return std::nullopt;
}

// The records of the failure's chain, outermost first, as far as the links allow.
std::vector<const event_record*> failure_chain(const failure_report& report) {
    std::vector<const event_record*> chain;
    for (const event_id& id : wire::detail::failure_chain_ids(report)) chain.push_back(&report.events.at(id));
    return chain;
}

// ---- truncation, step by step -----------------------------------------------------------------

void drop_malformed_records(failure_report& r) {
    std::erase_if(r.events, [&](const auto& entry) {
        const bool malformed = entry.first.is_nil() || entry.second.id != entry.first;
        r.dropped_events += malformed ? 1 : 0;
        return malformed;
    });
}

void restore_failure_record(failure_report& r) {
    if (!r.failure_id || r.events.contains(*r.failure_id)) return;
    if (r.failure_id->is_nil()) r.failure_id = event_id::generate();
    r.events.emplace(*r.failure_id, event_record{.id = *r.failure_id,
                                                 .kind = std::string(kind_name(make_error_code(kind::undetermined))),
                                                 .code = make_error_code(kind::undetermined),
                                                 .reason = "the report named this failure but held no record of it"});
}

void clamp_fields(event_record& record, const limits& lim) {
    for_each_value<values::numbers>(record, [](const number_rule& rule, auto& value) {
        if (breaks(rule, value)) value.reset();
    });
    for_each_value<values::text>(record, [&](const text_rule& rule, auto& value) {
        if (std::string* cut = wire::detail::field_text(value)) text::truncate_utf8(*cut, lim.*rule.max_bytes);
    });
}

// A link to a missing event is removed (the event it named is lost, and counted); a cycle
// is opened at the link that closes it, each found by one walk from the lowest id on it.
void repair_links(failure_report& r) {
    for (auto& [id, record] : r.events) {
        if (record.cause_id && !r.events.contains(*record.cause_id)) {
            record.cause_id.reset();
            ++r.dropped_events;
        }
    }
    const report_links links(r);
    const std::size_t n = links.events.size();
    std::vector<std::size_t> walked_by(n, 0);
    for (std::size_t start = 0; start < n; ++start) {
        if (links.depth[start] != 0 || walked_by[start] != 0) continue;
        std::size_t at = start;
        std::size_t last = start;
        while (at < n && walked_by[at] == 0) {
            walked_by[at] = start + 1;
            last = at;
            at = links.cause[at];
        }
        if (at < n && walked_by[at] == start + 1) r.events.at(links.events[last]->first).cause_id.reset();
    }
}

// Levels below `max` on any chain are dropped, deepest first; links to them are removed.
void cut_deep_chains(failure_report& r, std::size_t max) {
    const report_links links(r);
    if (links.deepest() <= max) return;
    std::vector<event_id> gone;
    for (std::size_t i = 0; i < links.events.size(); ++i) {
        if (links.depth[i] > max) gone.push_back(links.events[i]->first);
    }
    for (const event_id& id : gone) r.events.erase(id);
    r.dropped_events += gone.size();
    for (auto& [id, record] : r.events) {
        if (record.cause_id && !r.events.contains(*record.cause_id)) record.cause_id.reset();
    }
}

void cut_to_event_count(failure_report& r, std::size_t max) {
    std::size_t left = r.events.size();
    const auto enough = [&] { return left <= max; };
    const auto count_drop = [&](const event_record&) { --left; };
    const std::vector<event_id> chain = wire::detail::failure_chain_ids(r);
    wire::detail::drop_observed(r, chain, enough, count_drop);
    wire::detail::drop_deepest(r, chain, enough, count_drop, [](const event_record&) {});
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
        report.dropped_events += detail::dropped_events(level);
        previous = &report.events.insert_or_assign(record.id, std::move(record)).first->second;
    }
    report.failure_id = outer;
    return report;
}

failure_report report_for(const std::exception_ptr& e) {
    const auto chain = cause_chain(e);
    return chain.empty() ? failure_report{} : report_for(chain.front());
}

result<void> merge(failure_report& report, const failure_report& observed) {
    for (const auto& [id, record] : observed.events) {
        const auto found = report.events.find(id);
        if (found != report.events.end() && found->second != record) {
            return report_violation("event " + to_string(id) +
                                      " arrived twice with different records; ids must be unique");
        }
    }
    for (const auto& [id, record] : observed.events) report.events.try_emplace(id, record);
    report.dropped_events += observed.dropped_events;
    return boost::outcome_v2::success();
}

namespace {

// The first rule `report` breaks, its event count aside.
std::optional<std::string> broken_rule(const failure_report& report, const limits& lim, const report_links& links) {
    // Through the table's iterators rather than the map's own links: the nodes' addresses are
    // known ahead, so their cache misses overlap instead of each waiting for the one before.
    for (const report_links::iterator event : links.events) {
        if (auto broken = broken_record_rule(event->first, event->second, lim)) return broken;
    }
    if (report.failure_id && !report.events.contains(*report.failure_id)) {
        return "failure_id " + to_string(*report.failure_id) + " is not in the report";
    }
    return broken_link_rule(links, lim);
}

}  // namespace

result<void> validate(const failure_report& report, const limits& lim) {
    if (report.events.size() > lim.max_events) {
        return report_violation("it has " + std::to_string(report.events.size()) + " events; the limit is " +
                                  std::to_string(lim.max_events));
    }
    if (auto broken = broken_rule(report, lim, report_links(report))) return report_violation(std::move(*broken));
    return boost::outcome_v2::success();
}

failure_report truncate_to_limits(failure_report report, const limits& lim) {
    drop_malformed_records(report);
    restore_failure_record(report);
    for (auto& [id, record] : report.events) clamp_fields(record, lim);
    repair_links(report);
    cut_deep_chains(report, std::max<std::size_t>(lim.max_chain_depth, 1));
    cut_to_event_count(report, std::max<std::size_t>(lim.max_events, 1));
    return report;
}

namespace wire::detail {

failure_report fitted_copy(const failure_report& report, const limits& lim) {
    const std::size_t max = std::max<std::size_t>(lim.max_events, 1);
    if (report.events.size() <= max) return truncate_to_limits(report, lim);
    const report_links links(report);
    if (broken_rule(report, lim, links)) return truncate_to_limits(report, lim);
    // Valid but for its count, so truncate_to_limits would only cut to the count: the observed
    // events to drop are chosen on the report itself, and only the others are copied.
    table<bool> gone(links.events.size(), false);
    std::size_t left = links.events.size();
    select_observed(
        links, failure_chain_ids(report), [&] { return left <= max; },
        [&](std::size_t i) {
            gone[i] = true;
            --left;
        });
    failure_report fitted{.failure_id = report.failure_id,
                          .dropped_events = report.dropped_events + (links.events.size() - left)};
    for (std::size_t i = 0; i < links.events.size(); ++i) {
        if (!gone[i]) fitted.events.emplace_hint(fitted.events.end(), *links.events[i]);
    }
    cut_to_event_count(fitted, max);  // the chain's deepest levels, if dropping observed events was not enough
    return fitted;
}

}  // namespace wire::detail

failure rebuild_failure(const failure_report& report) {
    const auto chain = failure_chain(report);
    failure inner;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        const event_record& r = **it;
        const std::error_code code = is_kind(r.code) ? r.code : kind_from_name(r.kind);
        inner = detail::rebuilt_record(event_info{.kind = code,
                                               .reason = r.reason,
                                               .boundary = r.boundary,
                                               .stage = r.stage,
                                               .http_status = r.http_status,
                                               .cause = std::move(inner)},
                                    event_details(r.details), r.id, r.kind,
                                    std::next(it) == chain.rend() ? report.dropped_events : 0);
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
