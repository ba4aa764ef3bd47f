// Reaches the representation of failures and events; for ngfail's own code only.
#pragma once

#include <ngfail/failure.hpp>

#include <utility>

namespace ngfail {
class failure_event;
}

namespace ngfail::detail {

struct event_state;
struct state_header;

struct event_access {
    [[nodiscard]] static const event_state* state(const failure& f) noexcept;
    [[nodiscard]] static failure adopt(event_state* state) noexcept;
    [[nodiscard]] static const failure& state_of(const failure_event& e) noexcept;
    // Moves the failure out of a cause (for iterative destruction).
    [[nodiscard]] static failure take_failure(cause& c) noexcept;
    // Empties `f`, returning its record when this was the last reference (for the caller
    // to free), else null.
    [[nodiscard]] static const state_header* release_last(failure& f) noexcept;

    // The event of class `Event` for an existing record (same id).
    template <class Event>
    [[nodiscard]] static Event make_event(failure state) {
        return Event(std::move(state));
    }
};

}  // namespace ngfail::detail
