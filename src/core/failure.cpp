#include <ngfail/failure.hpp>
#include <ngfail/limits.hpp>

#include "core/event_state.hpp"
#include "core/rebuilt_record.hpp"
#include "text/utf8.hpp"

#include <new>
#include <ostream>

namespace ngfail {
namespace detail {

namespace {

template <class Details>
event_state* new_state(std::string_view kind_name, std::string_view reason, Details&& details) {
    const std::string_view separator = reason.empty() ? std::string_view() : std::string_view(": ");
    const std::size_t text_size = kind_name.size() + separator.size() + reason.size();
    void* block = ::operator new(sizeof(event_state) + text_size + 1);
    auto* state = new (block) event_state(std::forward<Details>(details));
    char* text = reinterpret_cast<char*>(state + 1);
    kind_name.copy(text, kind_name.size());
    separator.copy(text + kind_name.size(), separator.size());
    reason.copy(text + kind_name.size() + separator.size(), reason.size());
    text[text_size] = '\0';
    state->text = std::string_view(text, text_size);
    state->kind_size = kind_name.size();
    state->reason_offset = kind_name.size() + separator.size();
    return state;
}

template <class Details>
failure new_record(event_info&& info, Details&& details, const event_id& id, std::string_view kind_text,
                   std::size_t dropped_events) {
    const std::error_code code = is_kind(info.kind) ? info.kind : make_error_code(kind::undetermined);
    text::truncate_utf8(info.reason, limits{}.max_reason_bytes);  // a reason is born within the wire's bound
    auto* state = new_state(kind_text.empty() ? ngfail::kind_name(code) : kind_text, info.reason,
                            std::forward<Details>(details));
    failure owner = event_access::adopt(state);  // frees the record if anything below throws
    state->id = id.is_nil() ? event_id::generate() : id;
    state->code = code;
    state->boundary = info.boundary;
    state->stage = info.stage;
    state->http_status = info.http_status;
    state->cause = std::move(info.cause);
    state->dropped_events = dropped_events;
    return owner;
}

}  // namespace

event_state* new_event_state(std::string_view kind_name, std::string_view reason, event_details&& details) {
    return new_state(kind_name, reason, std::move(details));
}

failure make_record(event_info&& info, event_details&& details) {
    return new_record(std::move(info), std::move(details), {}, {}, 0);
}

failure rebuilt_record(event_info&& info, event_details&& details, const event_id& id, std::string_view kind_text,
                       std::size_t dropped_events) {
    return new_record(std::move(info), std::move(details), id, kind_text, dropped_events);
}

failure make_record(event_info&& info, sandbox_details&& details) {
    return new_record(std::move(info), std::move(details), {}, {}, 0);
}

failure make_record(event_info&& info, sandbox_details_in_facts details) {
    return new_record(std::move(info), details, {}, {}, 0);
}

failure with_cause(const failure& f, std::exception_ptr cause) {
    const event_state* original = event_access::state(f);
    if (!original) return f;
    auto* copy = new_event_state(original->kind_name(), original->reason(), event_details(original->details));
    failure owner = event_access::adopt(copy);
    copy->id = original->id;
    copy->code = original->code;
    copy->boundary = original->boundary;
    copy->stage = original->stage;
    copy->http_status = original->http_status;
    copy->cause = std::move(cause);
    copy->dropped_events = original->dropped_events;
    return owner;
}

const event_state* event_access::state(const failure& f) noexcept {
    return static_cast<const event_state*>(f.header());
}

failure event_access::take_failure(ngfail::cause& c) noexcept { return std::move(c.failure_); }

const state_header* event_access::release_last(failure& f) noexcept {
    const state_header* h = f.header();
    f.bits_ = 0;
    return h && h->refs.fetch_sub(1, std::memory_order_acq_rel) == 1 ? h : nullptr;
}

std::size_t dropped_events(const failure& f) noexcept {
    const event_state* s = event_access::state(f);
    return s ? s->dropped_events : 0;
}

failure event_access::adopt(event_state* state) noexcept {
    failure f;
    f.bits_ = reinterpret_cast<std::uintptr_t>(state);
    return f;
}

// Iterative: a chain a retry loop built (`f = failure({…, .cause = f})`) may be a million
// levels deep, far too deep to free by recursion.
void destroy(const state_header* state) noexcept {
    while (state) {
        auto* record = const_cast<event_state*>(static_cast<const event_state*>(state));
        failure next = event_access::take_failure(record->cause);
        record->~event_state();
        ::operator delete(record);
        state = event_access::release_last(next);
    }
}

namespace {

// What a failure degrades to when its record cannot be allocated.
failure kind_only_fallback(const std::error_code& code) noexcept {
    if (code.category() == kind_category()) return failure(static_cast<kind>(code.value()));
    return failure(kind::undetermined);
}

const event_details& no_details() noexcept {
    static const event_details none;
    return none;
}

const ngfail::cause& no_cause() noexcept {
    static const ngfail::cause none;
    return none;
}

}  // namespace
}  // namespace detail

failure::failure(const std::error_code& kind) noexcept {
    if (!kind) return;
    if (kind.category() == kind_category()) {
        *this = failure(static_cast<ngfail::kind>(kind.value()));
    } else {
        *this = failure(event_info{.kind = kind});
    }
}

failure::failure(const std::error_code& kind, std::string_view reason) noexcept {
    try {
        *this = detail::make_record(event_info{.kind = kind, .reason = std::string(reason)}, event_details{});
    } catch (...) {  // out of memory: the kind survives, the reason cannot
        *this = detail::kind_only_fallback(kind);
    }
}

failure::failure(event_info info) noexcept : failure(std::move(info), event_details{}) {}

failure::failure(event_info info, event_details details) noexcept {
    const std::error_code code = info.kind;
    try {
        *this = detail::make_record(std::move(info), std::move(details));
    } catch (...) {  // out of memory: the kind survives, the rest cannot
        *this = detail::kind_only_fallback(code);
    }
}

std::error_code failure::record_code() const noexcept { return detail::event_access::state(*this)->code; }

event_id failure::id() const noexcept {
    const auto* s = detail::event_access::state(*this);
    return s ? s->id : event_id{};
}

std::string_view failure::kind_name() const noexcept {
    const auto* s = detail::event_access::state(*this);
    return s ? s->kind_name() : ngfail::kind_name(code());
}

std::string_view failure::reason() const noexcept {
    const auto* s = detail::event_access::state(*this);
    return s ? s->reason() : std::string_view{};
}

std::optional<boundary> failure::boundary() const noexcept {
    const auto* s = detail::event_access::state(*this);
    return s ? s->boundary : std::nullopt;
}

std::optional<stage> failure::stage() const noexcept {
    const auto* s = detail::event_access::state(*this);
    return s ? s->stage : std::nullopt;
}

std::optional<int> failure::http_status() const noexcept {
    const auto* s = detail::event_access::state(*this);
    return s ? s->http_status : std::nullopt;
}

const event_details& failure::details() const noexcept {
    const auto* s = detail::event_access::state(*this);
    return s ? s->details : detail::no_details();
}

const cause& failure::cause() const noexcept {
    const auto* s = detail::event_access::state(*this);
    return s ? s->cause : detail::no_cause();
}

std::string_view failure::what() const noexcept {
    const auto* s = detail::event_access::state(*this);
    return s ? s->text : kind_name();
}

std::ostream& operator<<(std::ostream& out, const failure& f) {
    if (!f) return out << "no failure";
    out << f.what();
    if (!f.id().is_nil()) out << " (" << f.id() << ')';
    return out;
}

failure restated(const failure& cause, std::string reason) noexcept {
    try {
        return failure(event_info{.kind = cause.code(),
                                  .reason = std::move(reason),
                                  .boundary = cause.boundary(),
                                  .stage = cause.stage(),
                                  .http_status = cause.http_status(),
                                  .cause = cause},
                       cause.details());
    } catch (...) {
        return cause;
    }
}

}  // namespace ngfail
