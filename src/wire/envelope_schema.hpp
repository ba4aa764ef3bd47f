// An event record's envelope, once: each member as the wire names it, in the order it is
// written, whether a reader requires it, and the bound `validate` holds it to. The JSON
// writer, the report reader, `validate` and truncation all walk this table (the details
// member, last, then walks its type's table in details_schema.hpp), so a member added to
// `event_record` is added here and nowhere else.
#pragma once

#include <ngfail/detail/member_count.hpp>
#include <ngfail/limits.hpp>
#include <ngfail/report.hpp>

#include "wire/details_schema.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>

namespace ngfail::wire::detail {

// One member of `event_record` on the wire. Text (the kind, the reason, and each string of
// the details) is held to `limits.*max_bytes`; a number, when present, to [lo, hi].
template <class Member>
struct envelope_field {
    std::string_view name;
    Member event_record::*member;
    bool required = false;
    std::size_t limits::*max_bytes = nullptr;
    std::int64_t lo = 0;
    std::int64_t hi = 0;
};

template <class Member>
constexpr envelope_field<Member> token_member(std::string_view name, Member event_record::*member,
                                              bool required = false) {
    return {.name = name, .member = member, .required = required};
}
template <class Member>
constexpr envelope_field<Member> text_member(std::string_view name, Member event_record::*member, bool required,
                                             std::size_t limits::*max_bytes) {
    return {.name = name, .member = member, .required = required, .max_bytes = max_bytes};
}
template <class Member>
constexpr envelope_field<Member> number_member(std::string_view name, Member event_record::*member, std::int64_t lo,
                                               std::int64_t hi) {
    return {.name = name, .member = member, .lo = lo, .hi = hi};
}
// The details object: its members are its type's table's, each string held to `max_bytes`.
constexpr envelope_field<event_details> details_member(std::string_view name, event_details event_record::*member,
                                                       std::size_t limits::*max_bytes) {
    return {.name = name, .member = member, .max_bytes = max_bytes};
}

struct envelope_schema {
    using r = event_record;
    static constexpr auto fields = std::tuple{
        token_member("event_id", &r::id, true),  // its key's id: a rule of the report's, checked there
        text_member("failure_kind", &r::kind, true, &limits::max_string_bytes),  // its code is set once accepted
        text_member("failure_reason", &r::reason, false, &limits::max_reason_bytes),  // written even when empty
        token_member("boundary", &r::boundary),
        token_member("stage", &r::stage),
        number_member("http_status", &r::http_status, 0, max_http_status),
        token_member("cause_id", &r::cause_id),
        details_member("details", &r::details, &limits::max_string_bytes),
    };
};

// Every member but `code`, which is not sent: a reader makes it from the kind's name.
static_assert(ngfail::detail::member_count<event_record>() == std::tuple_size_v<decltype(envelope_schema::fields)> + 1,
              "an event_record member has no row in the envelope");

// Calls `f(field)` for each field descriptor of the envelope, in table order.
template <class F>
constexpr void for_each_envelope_field(F&& f) {
    std::apply([&](const auto&... each) { (f(each), ...); }, envelope_schema::fields);
}

}  // namespace ngfail::wire::detail
