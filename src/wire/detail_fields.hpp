// Every string field of an event's details, named as on the wire: for code that checks or
// shortens them all (validation, header truncation).
#pragma once

#include <ngfail/details.hpp>

#include <string_view>
#include <type_traits>
#include <variant>

namespace ngfail::detail {

// Calls `f(name, field)` for each string field (`std::string` or
// `std::optional<std::string>`, const or not, as `Details` is).
template <class Details, class F>
void for_each_detail_string(Details& details, F&& f) {
    std::visit(
        [&](auto& d) {
            using type = std::decay_t<decltype(d)>;
            if constexpr (std::is_same_v<type, sandbox_details>) {
                f("details.operation", d.operation);
                f("details.provider", d.provider);
                f("details.sandbox_id", d.sandbox_id);
                f("details.execution_id", d.execution_id);
                f("details.provider_status_reason", d.provider_status_reason);
                f("details.provider_code", d.provider_code);
                f("details.signal", d.signal);
            } else if constexpr (std::is_same_v<type, sdk_error_details>) {
                f("details.error_type", d.error_type);
                f("details.message", d.message);
                f("details.code", d.code);
                f("details.request_id", d.request_id);
            } else if constexpr (std::is_same_v<type, model_details>) {
                f("details.operation", d.operation);
                f("details.model", d.model);
            }
        },
        details);
}

// The text of a string field, or null when an optional one is absent.
inline const std::string* field_text(const std::string& s) noexcept { return &s; }
inline const std::string* field_text(const std::optional<std::string>& s) noexcept { return s ? &*s : nullptr; }
inline std::string* field_text(std::string& s) noexcept { return &s; }
inline std::string* field_text(std::optional<std::string>& s) noexcept { return s ? &*s : nullptr; }

}  // namespace ngfail::detail
