// <ngfail/visit_event.hpp> — a failure as the event of its own class.
//
// The class of an event follows from its details: none → `failure_event`, sandbox details →
// `sandbox_failure`, model details → `model_failure`, SDK error details → `foreign_failure`.
// `visit_event` calls a generic visitor with that event, sharing the failure's record (same
// id), so code that must wrap or extend an event keeps its static class:
//
//   ngfail::visit_event(f, [&](const auto& event) { throw my_wrapper<std::decay_t<decltype(event)>>(event); });
#pragma once

#include <ngfail/detail/event_access.hpp>
#include <ngfail/event.hpp>
#include <ngfail/sandbox.hpp>

#include <type_traits>
#include <utility>
#include <variant>

namespace ngfail {

// A kind-only or empty failure is visited as a `failure_event` with a record of its own.
template <class Visitor>
decltype(auto) visit_event(const failure& f, Visitor&& visitor) {
    return std::visit(
        [&](const auto& details) -> decltype(auto) {
            using event_type = typename event_type_for<std::decay_t<decltype(details)>>::type;
            return std::forward<Visitor>(visitor)(detail::event_access::make_event<event_type>(f));
        },
        f.details());
}

}  // namespace ngfail
