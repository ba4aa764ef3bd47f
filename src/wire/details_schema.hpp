// Each details type's fields, once: wire name, member and allowed range. The JSON writer,
// the report reader, `validate`, truncation and the header's shortening all walk these
// tables, so a field added to a details struct is added here and nowhere else.
#pragma once

#include <ngfail/details.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <variant>

namespace ngfail::wire::detail {

inline constexpr std::int64_t max_http_status = 999;
inline constexpr std::int64_t max_retry_after_s = std::int64_t{1} << 40;
inline constexpr std::int64_t max_int = std::numeric_limits<int>::max();

// One member of a details struct as the wire names it. `lo`/`hi` bound a number when it
// is present (what `validate` enforces and truncation clamps); text and tokens have none.
template <class Details, class Member>
struct details_field {
    std::string_view name;
    Member Details::*member;
    std::int64_t lo = 0;
    std::int64_t hi = 0;
};

template <class Details, class Member>
constexpr details_field<Details, Member> on_wire(std::string_view name, Member Details::*member) {
    return {name, member};
}
template <class Details, class Member>
constexpr details_field<Details, Member> on_wire(std::string_view name, Member Details::*member, std::int64_t lo,
                                               std::int64_t hi) {
    return {name, member, lo, hi};
}

// `type`: the value of the details object's "type" member; `fields`: its other members, in
// the order they are written. A `std::string` member is required, an optional one is not.
template <class Details>
struct details_schema;

template <>
struct details_schema<sandbox_details> {
    using d = sandbox_details;
    static constexpr std::string_view type = "sandbox";
    static constexpr auto fields = std::tuple{
        on_wire("operation", &d::operation),
        on_wire("provider", &d::provider),
        on_wire("sandbox_id", &d::sandbox_id),
        on_wire("execution_id", &d::execution_id),
        on_wire("provider_status_reason", &d::provider_status_reason),
        on_wire("provider_code", &d::provider_code),
        on_wire("exit_code", &d::exit_code, std::numeric_limits<int>::min(), max_int),
        on_wire("signal", &d::signal),
        on_wire("delivery", &d::delivery),
        on_wire("retry_after_s", &d::retry_after, 0, max_retry_after_s),
        on_wire("evidence_row", &d::evidence_row),
        on_wire("diagnostics", &d::diagnostics),
    };
};

template <>
struct details_schema<sdk_error_details> {
    using d = sdk_error_details;
    static constexpr std::string_view type = "sdk_error";
    static constexpr auto fields = std::tuple{
        on_wire("error_type", &d::error_type),
        on_wire("message", &d::message),
        on_wire("http_status", &d::http_status, 0, max_http_status),
        on_wire("code", &d::code),
        on_wire("request_id", &d::request_id),
    };
};

template <>
struct details_schema<model_details> {
    using d = model_details;
    static constexpr std::string_view type = "model";
    static constexpr auto fields = std::tuple{
        on_wire("operation", &d::operation),
        on_wire("model", &d::model),
        on_wire("attempt", &d::attempt, 0, max_int),
        on_wire("retry_after_s", &d::retry_after, 0, max_retry_after_s),
    };
};

// Calls `f(field)` for each field descriptor of `Details`, in table order.
template <class Details, class F>
constexpr void for_each_field(F&& f) {
    std::apply([&](const auto&... each) { (f(each), ...); }, details_schema<Details>::fields);
}

// ---- what kind of value a member holds -------------------------------------------------------

template <class Member>
inline constexpr bool is_text = std::is_same_v<Member, std::string> || std::is_same_v<Member, std::optional<std::string>>;
template <class Member>
inline constexpr bool is_number =
    std::is_same_v<Member, std::optional<int>> || std::is_same_v<Member, std::optional<std::chrono::seconds>>;

// The text of a string field, or null when an optional one is absent.
inline const std::string* field_text(const std::string& s) noexcept { return &s; }
inline const std::string* field_text(const std::optional<std::string>& s) noexcept { return s ? &*s : nullptr; }
inline std::string* field_text(std::string& s) noexcept { return &s; }
inline std::string* field_text(std::optional<std::string>& s) noexcept { return s ? &*s : nullptr; }

inline std::int64_t number_of(const std::optional<int>& v) noexcept { return *v; }
inline std::int64_t number_of(const std::optional<std::chrono::seconds>& v) noexcept { return v->count(); }

// ---- walks over one event's details, whichever type they are --------------------------------

// Calls `f(name, member)` for each string field (`std::string` or `std::optional<std::string>`,
// const or not, as `Details` is); `name` is the table's, without the "details." prefix.
template <class Details, class F>
void for_each_detail_string(Details& details, F&& f) {
    std::visit(
        [&](auto& d) {
            using type = std::remove_const_t<std::remove_reference_t<decltype(d)>>;
            if constexpr (!std::is_same_v<type, std::monostate>) {
                for_each_field<type>([&](const auto& each) {
                    if constexpr (is_text<std::remove_cvref_t<decltype(d.*each.member)>>) f(each.name, d.*each.member);
                });
            }
        },
        details);
}

// Calls `f(name, lo, hi, member)` for each number field; the member is an optional int or
// seconds, const or not, as `Details` is.
template <class Details, class F>
void for_each_detail_number(Details& details, F&& f) {
    std::visit(
        [&](auto& d) {
            using type = std::remove_const_t<std::remove_reference_t<decltype(d)>>;
            if constexpr (!std::is_same_v<type, std::monostate>) {
                for_each_field<type>([&](const auto& each) {
                    if constexpr (is_number<std::remove_cvref_t<decltype(d.*each.member)>>) {
                        f(each.name, each.lo, each.hi, d.*each.member);
                    }
                });
            }
        },
        details);
}

}  // namespace ngfail::wire::detail
