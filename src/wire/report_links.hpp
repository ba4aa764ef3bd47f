// The cause links of a report as one table of indices: what validation, truncation and
// the header writer all need, computed once and linear in the number of events.
#pragma once

#include <ngfail/report.hpp>

#include <boost/container/small_vector.hpp>

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <vector>

namespace ngfail::detail {

struct report_links {
    static constexpr std::size_t none = static_cast<std::size_t>(-1);
    static constexpr std::size_t dangling = static_cast<std::size_t>(-2);

    using iterator = std::map<event_id, event_record>::const_iterator;

    // Per event: held inline up to a typical report's size, so validating one allocates nothing.
    template <class T>
    using per_event = boost::container::small_vector<T, 16>;

    per_event<iterator> events;     // in key order
    per_event<std::size_t> cause;   // index of each event's cause, `none` or `dangling`
    per_event<std::size_t> citers;  // how many events name each event as their cause
    // Levels on the longest chain that ends at each event (1 for an event nobody names as
    // its cause); 0 for an event on a cycle or below one.
    per_event<std::size_t> depth;

    explicit report_links(const failure_report& report);

    [[nodiscard]] std::size_t index_of(const event_id& id) const noexcept;
    [[nodiscard]] std::size_t deepest() const noexcept;
};

// The failure's chain, outermost first, as far as its links go (a cycle ends it).
[[nodiscard]] std::vector<event_id> failure_chain_ids(const failure_report& report);

// Drops observed events (those outside `keep`), newest first and only ever one that no
// remaining event names as its cause, until `enough()` or none is left. Each drop is
// counted in `dropped_events`; `on_drop` sees the record before it goes. O(n log n).
template <class Enough, class OnDrop>
void drop_observed(failure_report& report, const std::vector<event_id>& keep, Enough&& enough, OnDrop&& on_drop);

// Drops the deepest levels of `chain` (outermost first), never its first, until
// `enough()`; `on_drop(record)` sees each dropped record, `on_unlink(record)` the level
// that loses its cause link. Counted in `dropped_events`.
template <class Enough, class OnDrop, class OnUnlink>
void drop_deepest(failure_report& report, const std::vector<event_id>& chain, Enough&& enough, OnDrop&& on_drop,
                  OnUnlink&& on_unlink);

// ---- implementation ---------------------------------------------------------------------

template <class Enough, class OnDrop>
void drop_observed(failure_report& report, const std::vector<event_id>& keep, Enough&& enough, OnDrop&& on_drop) {
    if (enough()) return;
    const report_links links(report);
    std::vector<bool> kept(links.events.size(), false);
    for (const event_id& id : keep) {
        if (const std::size_t i = links.index_of(id); i < links.events.size()) kept[i] = true;
    }
    auto citers = links.citers;
    // Newest first: indices are in id order, so a max-heap of indices.
    std::vector<std::size_t> ready;
    for (std::size_t i = 0; i < links.events.size(); ++i) {
        if (!kept[i] && citers[i] == 0) ready.push_back(i);
    }
    std::make_heap(ready.begin(), ready.end());
    std::vector<event_id> gone;
    while (!ready.empty()) {
        std::pop_heap(ready.begin(), ready.end());
        const std::size_t i = ready.back();
        ready.pop_back();
        on_drop(links.events[i]->second);
        gone.push_back(links.events[i]->first);
        ++report.dropped_events;
        if (const std::size_t c = links.cause[i]; c < links.events.size() && --citers[c] == 0 && !kept[c]) {
            ready.push_back(c);
            std::push_heap(ready.begin(), ready.end());
        }
        if (enough()) break;
    }
    for (const event_id& id : gone) report.events.erase(id);
}

template <class Enough, class OnDrop, class OnUnlink>
void drop_deepest(failure_report& report, const std::vector<event_id>& chain, Enough&& enough, OnDrop&& on_drop,
                  OnUnlink&& on_unlink) {
    for (std::size_t depth = chain.size(); depth > 1 && !enough(); --depth) {
        const auto gone = report.events.find(chain[depth - 1]);
        if (gone == report.events.end()) continue;
        on_drop(gone->second);
        report.events.erase(gone);
        ++report.dropped_events;
        event_record& outer = report.events.at(chain[depth - 2]);
        on_unlink(outer);
        outer.cause_id.reset();
    }
}

}  // namespace ngfail::detail
