#include <ngfail/event.hpp>
#include <ngfail/limits.hpp>
#include <ngfail/sandbox.hpp>
#include <ngfail/visit_event.hpp>

#include "core/event_state.hpp"
#include "text/utf8.hpp"

#include <boost/system/system_error.hpp>

#include <cstdlib>
#include <cxxabi.h>
#include <memory>
#include <ostream>
#include <typeinfo>
#include <vector>

namespace ngfail {
namespace {


// An event always has a record of its own (and so an id), even when raised from a kind.
failure with_record(failure state) {
    if (state && !state.is_kind_only()) return state;
    const std::error_code code = state ? state.code() : make_error_code(kind::undetermined);
    std::string reason = state ? std::string() : "an empty ngfail::failure was raised";
    return detail::make_record(event_info{.kind = code, .reason = std::move(reason)}, event_details{});
}

std::string demangle(const char* mangled) {
    int status = 0;
    const std::unique_ptr<char, decltype(&std::free)> name(abi::__cxa_demangle(mangled, nullptr, nullptr, &status),
                                                           &std::free);
    return status == 0 && name ? std::string(name.get()) : std::string(mangled);
}

template <class Code>
std::string code_text(const Code& code) {
    return std::string(code.category().name()) + ':' + std::to_string(code.value());
}

std::exception_ptr exception_ptr_of(const failure& f) {
    try {
        raise(f);
    } catch (...) {
        return std::current_exception();
    }
}

// The failure of an ngfail event held by `e`; empty when `e` holds anything else.
failure as_event(const std::exception_ptr& e) {
    try {
        std::rethrow_exception(e);
    } catch (const failure_event& event) {
        return failure_of(event);
    } catch (...) {
        return {};
    }
}

// The record of a foreign_failure: its reason is the exception's message, else its type.
failure foreign_record(sdk_error_details details, std::error_code kind, const std::exception_ptr& original) {
    std::string reason = details.message.value_or(details.error_type);
    return detail::make_record(event_info{.kind = kind, .reason = std::move(reason), .cause = original},
                               std::move(details));
}

bool is_foreign(const failure& f) noexcept { return std::holds_alternative<sdk_error_details>(f.details()); }

bool has_cause(const failure& f) noexcept {
    const ngfail::cause& c = f.cause();
    return c.as_failure() || (c.as_exception() && !is_foreign(f));
}

// Raising and walking stop here; deeper levels are cut and the cut is said by a last level.
constexpr std::size_t max_chain_levels = limits{}.max_chain_depth;

failure cut_marker() {
    return failure(make_error_code(kind::undetermined),
                   "the cause chain is deeper than " + std::to_string(max_chain_levels) +
                       " levels; the deeper causes were cut");
}


}  // namespace

namespace detail {
const failure& event_access::state_of(const failure_event& e) noexcept { return e.state_; }
}  // namespace detail

// ---- failure_event ------------------------------------------------------------------------

namespace {

// The `std::system_error` base for a kind. Making one calls the category's `message()` and
// allocates twice; copying one made before shares its reference-counted message. So core
// kinds copy one made once each; other kinds are made.
std::system_error base_error(std::error_code code) {
    constexpr int core_kinds = static_cast<int>(kind::undetermined) + 1;
    static const auto made = [] {
        std::vector<std::system_error> each;
        each.reserve(core_kinds);
        for (int k = 0; k < core_kinds; ++k) each.emplace_back(std::error_code(k, kind_category()));
        return each;
    }();
    const bool core = code.category() == kind_category() && code.value() >= 0 && code.value() < core_kinds;
    return core ? made[static_cast<std::size_t>(code.value())] : std::system_error(code);
}

}  // namespace

failure_event::failure_event(failure state)
    : std::system_error(base_error(state ? state.code() : make_error_code(kind::undetermined))),
      state_(with_record(std::move(state))) {}

failure_event::failure_event(event_info info) : failure_event(detail::make_record(std::move(info), event_details{})) {}

failure_event::failure_event(std::error_code kind, std::string reason)
    : failure_event(event_info{.kind = kind, .reason = std::move(reason)}) {}

const char* failure_event::what() const noexcept { return state_.what().data(); }

std::exception_ptr failure_event::cause() const {
    if (const auto* nested = dynamic_cast<const std::nested_exception*>(this); nested && nested->nested_ptr()) {
        return nested->nested_ptr();
    }
    const ngfail::cause& c = state_.cause();
    if (c.as_exception()) return c.as_exception();
    if (c.as_failure()) return exception_ptr_of(c.as_failure());
    return nullptr;
}

// ---- model_failure, foreign_failure ------------------------------------------------------------

model_failure::model_failure(failure state) : failure_event(std::move(state)) {}

model_failure::model_failure(event_info info, model_details details)
    : failure_event(detail::make_record(std::move(info), std::move(details))) {}

const model_details& model_failure::model() const noexcept { return std::get<model_details>(details()); }

foreign_failure::foreign_failure(failure state) : failure_event(std::move(state)) {}

foreign_failure::foreign_failure(event_info info, sdk_error_details details)
    : failure_event(detail::make_record(std::move(info), std::move(details))) {}

foreign_failure::foreign_failure(std::exception_ptr original, std::error_code kind)
    : foreign_failure(foreign_record(sdk_error_details_of(original), kind, original)) {}

const sdk_error_details& foreign_failure::sdk_error() const noexcept { return std::get<sdk_error_details>(details()); }

// ---- raising and converting --------------------------------------------------------------------

void raise(const failure& f) {
    // Levels linked as records are raised innermost first, each nested over the one below:
    // iteration, since a retry loop can link a million of them. The innermost raises over
    // its own cause (an exception, or nothing).
    std::vector<failure> levels;
    bool cut = false;
    for (failure level = f; level;) {
        if (levels.size() == max_chain_levels - 1 && level.cause().as_failure()) {
            cut = true;
            break;
        }
        levels.push_back(level);
        level = failure(level.cause().as_failure());
    }
    if (levels.empty()) levels.push_back(f);  // an empty failure: raised as an undetermined event
    std::exception_ptr inner;
    if (cut) visit_event(cut_marker(), [&](const auto& event) { inner = std::make_exception_ptr(event); });
    for (auto it = levels.rbegin(); it != levels.rend(); ++it) {
        visit_event(with_record(*it), [&](const auto& event) {
            try {
                if (inner) detail::throw_nested_over(event, inner);
                raise(event);
            } catch (...) {
                inner = std::current_exception();
            }
        });
    }
    std::rethrow_exception(inner);
}

failure failure_of(const failure_event& e) noexcept {
    const failure& state = detail::event_access::state_of(e);
    const auto* nested = dynamic_cast<const std::nested_exception*>(&e);
    if (!nested || !nested->nested_ptr() || state.cause()) return state;
    try {
        return detail::with_cause(state, nested->nested_ptr());
    } catch (...) {
        return state;
    }
}

// ---- walking causes ----------------------------------------------------------------------------

std::vector<failure> cause_chain(const failure& f) {
    std::vector<failure> chain;
    failure level = f;
    while (level) {
        if (chain.size() == max_chain_levels - 1 && has_cause(level)) {
            chain.push_back(cut_marker());
            break;
        }
        chain.push_back(level);
        const ngfail::cause& c = level.cause();
        if (c.as_failure()) {
            level = c.as_failure();
            continue;
        }
        if (!c.as_exception()) break;
        const std::exception_ptr next = c.as_exception();
        if (failure event = as_event(next)) {
            level = std::move(event);
            continue;
        }
        // A foreign_failure already stands for the foreign exception it wraps.
        if (!is_foreign(level)) chain.push_back(failure_of(foreign_failure(next)));
        break;
    }
    return chain;
}

std::vector<failure> cause_chain(const std::exception_ptr& e) {
    if (!e) return {};
    if (const failure event = as_event(e)) return cause_chain(event);
    return {failure_of(foreign_failure(e))};
}

std::vector<failure> cause_chain(const std::exception& e) {
    if (const auto* event = dynamic_cast<const failure_event*>(&e)) return cause_chain(failure_of(*event));
    return {foreign_record(sdk_error_details_of(e), kind::undetermined, nullptr)};
}

failure find_boundary_failure(const std::exception_ptr& e) {
    for (const failure& level : cause_chain(e)) {
        if (level.boundary()) return level;
    }
    return {};
}

// ---- describing foreign exceptions ------------------------------------------------------------

sdk_error_details sdk_error_details_of(const std::exception& e) {
    sdk_error_details d{.error_type = demangle(typeid(e).name())};
    std::string message = e.what();
    text::truncate_utf8(message, limits{}.max_string_bytes);  // as any string field travels
    d.message = std::move(message);
    if (const auto* s = dynamic_cast<const structured_error*>(&e)) {
        d.http_status = s->http_status();
        d.code = s->error_code_name();
        d.request_id = s->request_id();
    } else if (const auto* b = dynamic_cast<const boost::system::system_error*>(&e)) {
        d.code = code_text(b->code());
    } else if (const auto* se = dynamic_cast<const std::system_error*>(&e)) {
        d.code = code_text(se->code());
    }
    return d;
}

sdk_error_details sdk_error_details_of(const std::exception_ptr& e) {
    if (!e) return {.error_type = "no exception"};
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& ex) {
        return sdk_error_details_of(ex);
    } catch (const structured_error& s) {
        return {.error_type = demangle(typeid(s).name()),
                .http_status = s.http_status(),
                .code = s.error_code_name(),
                .request_id = s.request_id()};
    } catch (...) {
        const std::type_info* type = abi::__cxa_current_exception_type();
        return {.error_type = type ? demangle(type->name()) : std::string("unknown exception")};
    }
}

std::ostream& operator<<(std::ostream& out, const failure_event& e) { return out << e.state_; }

}  // namespace ngfail
