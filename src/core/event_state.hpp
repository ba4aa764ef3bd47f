// The immutable record that a failure and every copy of its event share.
#pragma once

#include <ngfail/detail/event_access.hpp>
#include <ngfail/event.hpp>
#include <ngfail/sandbox.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace ngfail::detail {

struct sandbox_details_in_facts;

// Allocated in one block with its text ("<kind>: <reason>", NUL-terminated) right after it,
// so creating a record is one allocation and what() needs none. Make one with
// `new_event_state`; `destroy` frees it.
struct event_state : state_header {
    // `d`: event_details, or one of its alternatives, moved straight into place.
    template <class Details>
    explicit event_state(Details&& d) noexcept : details(std::forward<Details>(d)) {}
    explicit event_state(sandbox_details_in_facts d) noexcept;

    event_id id;
    std::error_code code;
    std::string_view text;  // points just past this object
    std::size_t kind_size = 0;  // the kind's wire name, verbatim, is text's first kind_size bytes
    std::size_t reason_offset = 0;
    std::optional<ngfail::boundary> boundary;
    std::optional<ngfail::stage> stage;
    std::optional<int> http_status;
    event_details details;
    ngfail::cause cause;
    // Events a sender dropped from the report this record was rebuilt from: carried so that
    // the report made from it at the next hop says so too (rebuilt_record.hpp).
    std::size_t dropped_events = 0;

    [[nodiscard]] std::string_view reason() const noexcept { return text.substr(reason_offset); }
    [[nodiscard]] std::string_view kind_name() const noexcept { return text.substr(0, kind_size); }
};

// A sandbox's details still inside the facts they came in, moved out once, into the record
// itself: a dozen optional strings moved twice showed in an event's creation time.
struct sandbox_details_in_facts {
    sandbox_facts& facts;
    operator sandbox_details() const noexcept;  // NOLINT: converts where the record is built
};

inline event_state::event_state(sandbox_details_in_facts d) noexcept
    : details(std::in_place_type<sandbox_details>, d) {}

// A record with room for `text`, copied in, and `details` moved in; throws std::bad_alloc.
[[nodiscard]] event_state* new_event_state(std::string_view kind_name, std::string_view reason,
                                           event_details&& details);

// A new record with a fresh id; throws std::bad_alloc when memory runs out. (A record made
// again from a report: `rebuilt_record`, rebuilt_record.hpp.)
[[nodiscard]] failure make_record(event_info&& info, event_details&& details);
// The same with a sandbox's details, moved into the record without a variant between (an
// event's creation time shows every move of their dozen optional strings).
[[nodiscard]] failure make_record(event_info&& info, sandbox_details&& details);
[[nodiscard]] failure make_record(event_info&& info, sandbox_details_in_facts details);

// The same record with `cause` as its cause (same id): for caught nested events.
[[nodiscard]] failure with_cause(const failure& f, std::exception_ptr cause);

}  // namespace ngfail::detail
