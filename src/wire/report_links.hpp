// The cause links of a report as one table of indices: what validation, truncation and
// the header writer all need, computed once and linear in the number of events.
#pragma once

#include <ngfail/report.hpp>

#include <boost/container/small_vector.hpp>

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory_resource>
#include <optional>
#include <vector>

namespace ngfail::wire::detail {

// Where the tables below live: a pool of this thread's own that keeps freed blocks up to
// 256 KiB (32,768 events' worth of indices) for the next call. Through the allocator, glibc
// gave a freed table back to the system (it trims the top of its heap past 128 KiB free),
// so every call over ~2,000 events page-faulted its tables in afresh. Blocks are never
// handed between threads: the tables live and die in one call.
[[nodiscard]] std::pmr::memory_resource& table_memory() noexcept;

template <class T>
struct table_allocator {
    using value_type = T;
    table_allocator() noexcept = default;
    template <class U>
    table_allocator(const table_allocator<U>&) noexcept {}  // NOLINT: rebinding, as allocators do
    [[nodiscard]] T* allocate(std::size_t n) { return static_cast<T*>(table_memory().allocate(n * sizeof(T), alignof(T))); }
    void deallocate(T* p, std::size_t n) noexcept { table_memory().deallocate(p, n * sizeof(T), alignof(T)); }
    friend bool operator==(table_allocator, table_allocator) noexcept { return true; }
};

template <class T>
using table = std::vector<T, table_allocator<T>>;

struct report_links {
    static constexpr std::size_t none = static_cast<std::size_t>(-1);
    static constexpr std::size_t dangling = static_cast<std::size_t>(-2);

    using iterator = std::map<event_id, event_record>::const_iterator;

    // Per event: held inline up to a typical report's size, so validating one allocates nothing.
    template <class T>
    using per_event = boost::container::small_vector<T, 16, table_allocator<T>>;

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

// The choice `drop_observed` makes, on the links alone: `on_drop(i)` for each event index it
// would drop, in order, until `enough()`. Changes nothing.
template <class Enough, class OnDrop>
void select_observed(const report_links& links, const std::vector<event_id>& keep, Enough&& enough, OnDrop&& on_drop);

// `truncate_to_limits(report, lim)`, made without copying the events it drops when the event
// count is all that is over (a report of 10,000 observed events keeps 64).
[[nodiscard]] failure_report fitted_copy(const failure_report& report, const limits& lim);

// Drops the deepest levels of `chain` (outermost first), never its first, until
// `enough()`; `on_drop(record)` sees each dropped record, `on_unlink(record)` the level
// that loses its cause link. Counted in `dropped_events`.
template <class Enough, class OnDrop, class OnUnlink>
void drop_deepest(failure_report& report, const std::vector<event_id>& chain, Enough&& enough, OnDrop&& on_drop,
                  OnUnlink&& on_unlink);

// ---- implementation ---------------------------------------------------------------------

template <class Enough, class OnDrop>
void select_observed(const report_links& links, const std::vector<event_id>& keep, Enough&& enough, OnDrop&& on_drop) {
    if (enough()) return;
    table<bool> kept(links.events.size(), false);
    for (const event_id& id : keep) {
        if (const std::size_t i = links.index_of(id); i < links.events.size()) kept[i] = true;
    }
    auto citers = links.citers;
    // Newest first, and indices are in id order: the highest ready index each time. Those
    // ready from the start are ascending already (taken from the back); those a drop makes
    // ready, usually few, wait in a max-heap beside them. Linear when nothing is cited.
    table<std::size_t> ready_at_start;
    table<std::size_t> ready_later;
    ready_at_start.reserve(links.events.size());
    for (std::size_t i = 0; i < links.events.size(); ++i) {
        if (!kept[i] && citers[i] == 0) ready_at_start.push_back(i);
    }
    while (!ready_at_start.empty() || !ready_later.empty()) {
        std::size_t i = 0;
        if (!ready_later.empty() && (ready_at_start.empty() || ready_later.front() > ready_at_start.back())) {
            std::pop_heap(ready_later.begin(), ready_later.end());
            i = ready_later.back();
            ready_later.pop_back();
        } else {
            i = ready_at_start.back();
            ready_at_start.pop_back();
        }
        on_drop(i);
        if (const std::size_t c = links.cause[i]; c < links.events.size() && --citers[c] == 0 && !kept[c]) {
            ready_later.push_back(c);
            std::push_heap(ready_later.begin(), ready_later.end());
        }
        if (enough()) break;
    }
}

template <class Enough, class OnDrop>
void drop_observed(failure_report& report, const std::vector<event_id>& keep, Enough&& enough, OnDrop&& on_drop) {
    if (enough()) return;
    const report_links links(report);
    std::vector<report_links::iterator> gone;
    select_observed(links, keep, enough, [&](std::size_t i) {
        on_drop(links.events[i]->second);
        gone.push_back(links.events[i]);
        ++report.dropped_events;
    });
    for (const report_links::iterator it : gone) report.events.erase(it);
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

}  // namespace ngfail::wire::detail
