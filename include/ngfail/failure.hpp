// <ngfail/failure.hpp> — one failure as a value: the error type of `ngfail::result`.
//
// A `failure` is a handle to the same immutable record a failure event shares, one pointer
// wide and `noexcept` to copy and move, so `noexcept` code can return failures as cheaply
// as error codes and throwing code can raise them as events without losing anything:
//
//   ngfail::failure f = ngfail::kind::transport_timeout;         // kind only: allocates nothing
//   ngfail::failure g{ngfail::event_info{.kind = ngfail::kind::provider_oom_killed,
//                                        .reason = "exec ended: OOMKilled",
//                                        .cause = f}};           // a full record, with a cause
//   g.code() == ngfail::domain::provider;                         // true
//
// Creating a failure never throws: if memory runs out it degrades to the kind-only failure
// of its kind (`undetermined` for a non-core kind), which needs no memory. A kind-only
// failure has no id (`id().is_nil()`); raising it creates an event with a fresh one.
#pragma once

#include <ngfail/details.hpp>
#include <ngfail/event_id.hpp>
#include <ngfail/kind.hpp>

#include <atomic>
#include <cstdint>
#include <exception>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace ngfail {

class cause;
struct event_info;

namespace detail {
struct event_state;
struct event_access;

// The reference count sits at the start of every record, so copies can bump it inline.
struct state_header {
    mutable std::atomic<std::uint32_t> refs{1};
};

void destroy(const state_header* state) noexcept;
}  // namespace detail

class failure {
public:
    // The empty failure: no failure at all (`!f`), as `find_boundary_failure` returns.
    constexpr failure() noexcept = default;

    // The kind-only failure of a core kind: no allocation, no id, no reason.
    failure(kind k) noexcept  // NOLINT(google-explicit-constructor): `return kind::x;` reads well
        : bits_(k == kind{} ? 0 : (static_cast<std::uintptr_t>(k) << 1) | 1) {}

    // Any kind code: core kinds stay kind-only; extension and unknown kinds get a record.
    explicit failure(const std::error_code& kind) noexcept;

    // A kind and a reason, copied inside: the form to use in `noexcept` code, since nothing
    // is allocated before the failure can fall back to its kind if memory runs out.
    //   return ngfail::failure(ngfail::kind::judge_failed, "judge timed out after 30 s");
    failure(const std::error_code& kind, std::string_view reason) noexcept;

    // A full record with a fresh id. `details` decides the event class it raises as. The
    // `event_info` (its reason string) is built by the caller, where a failed allocation
    // throws: prefer the constructor above in `noexcept` code.
    explicit failure(event_info info) noexcept;
    failure(event_info info, event_details details) noexcept;

    failure(const failure& other) noexcept : bits_(other.bits_) { retain(); }
    failure(failure&& other) noexcept : bits_(std::exchange(other.bits_, 0)) {}
    failure& operator=(const failure& other) noexcept {
        failure(other).swap(*this);
        return *this;
    }
    failure& operator=(failure&& other) noexcept {
        failure(std::move(other)).swap(*this);
        return *this;
    }
    ~failure() { release(); }

    void swap(failure& other) noexcept { std::swap(bits_, other.bits_); }

    [[nodiscard]] explicit operator bool() const noexcept { return bits_ != 0; }

    // The kind, as an error code: compares with `kind::…` and `domain::…`.
    [[nodiscard]] std::error_code code() const noexcept {
        if (is_kind_only()) return make_error_code(static_cast<kind>(bits_ >> 1));
        return bits_ == 0 ? std::error_code{} : record_code();
    }

    [[nodiscard]] bool is_kind_only() const noexcept { return (bits_ & 1) != 0; }

    [[nodiscard]] event_id id() const noexcept;
    [[nodiscard]] std::string_view kind_name() const noexcept;
    [[nodiscard]] std::string_view reason() const noexcept;
    [[nodiscard]] std::optional<ngfail::boundary> boundary() const noexcept;
    [[nodiscard]] std::optional<ngfail::stage> stage() const noexcept;
    [[nodiscard]] std::optional<int> http_status() const noexcept;
    [[nodiscard]] const event_details& details() const noexcept;
    [[nodiscard]] const ngfail::cause& cause() const noexcept;

    // "<kind>: <reason>" (just "<kind>" without a reason), as the event's `what()`.
    [[nodiscard]] std::string_view what() const noexcept;

    // The same event: same id and kind (two kind-only failures of one kind are equal).
    friend bool operator==(const failure& a, const failure& b) noexcept {
        return a.code() == b.code() && a.id() == b.id();
    }

    // Writes `what()` and the id: "provider_oom_killed: exec ended (0192f1c4-…)"; a success
    // (no failure) writes "no failure".
    friend std::ostream& operator<<(std::ostream& out, const failure& f);

private:
    friend struct detail::event_access;

    [[nodiscard]] std::error_code record_code() const noexcept;
    [[nodiscard]] const detail::state_header* header() const noexcept {
        return bits_ == 0 || is_kind_only() ? nullptr : reinterpret_cast<const detail::state_header*>(bits_);
    }
    void retain() const noexcept {
        if (const auto* h = header()) h->refs.fetch_add(1, std::memory_order_relaxed);
    }
    void release() noexcept {
        if (const auto* h = header(); h && h->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            detail::destroy(h);
        }
    }

    // 0: empty; odd: a core kind shifted left by one; otherwise a `detail::event_state*`.
    std::uintptr_t bits_ = 0;
};

// The explicit cause of an event ("raise X from cause"): nothing, an ngfail failure, or
// any exception. Implicit context is never a cause.
class cause {
public:
    cause() noexcept = default;
    cause(std::exception_ptr exception) noexcept : exception_(std::move(exception)) {}  // NOLINT
    cause(failure f) noexcept : failure_(std::move(f)) {}                                // NOLINT
    cause(kind k) noexcept : failure_(k) {}                                              // NOLINT

    [[nodiscard]] explicit operator bool() const noexcept { return failure_ || exception_; }
    [[nodiscard]] const failure& as_failure() const noexcept { return failure_; }
    [[nodiscard]] const std::exception_ptr& as_exception() const noexcept { return exception_; }

private:
    friend struct detail::event_access;
    failure failure_;
    std::exception_ptr exception_;
};

// What every event is made of. An aggregate, for designated initialisers:
//   ngfail::failure_event({.kind = ngfail::kind::judge_failed, .reason = "judge timed out"})
struct event_info {
    std::error_code kind{};  // a kind code; anything else becomes `undetermined`
    std::string reason{};    // human text, cut to 2000 bytes on a UTF-8 boundary
    std::optional<ngfail::boundary> boundary{};
    std::optional<ngfail::stage> stage{};
    std::optional<int> http_status{};  // of this operation, never of a cause
    ngfail::cause cause{};
};

// A failure with `cause`'s kind and evidence (boundary, stage, HTTP status, details) and a
// reason of its own, caused by `cause`: how a layer that gives up says why ("no retry left
// after 3 attempts") without hiding what the last attempt showed. `cause` itself when the
// new record cannot be allocated.
[[nodiscard]] failure restated(const failure& cause, std::string reason) noexcept;

}  // namespace ngfail
