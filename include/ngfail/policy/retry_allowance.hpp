// <ngfail/policy/retry_allowance.hpp> — one retry budget for one logical request.
//
// Every layer that retries the same logical request spends the same allowance: a 429, then
// a dropped connection, then a 503 use three attempts of one budget, not three budgets.
// Create it where the logical request starts and pass it down by reference:
//
//   ngfail::policy::retry_allowance allowance({.attempts = 4, .elapsed = 30s});
//   for (;;) {
//       auto r = try_once();
//       if (r || !worth_retrying(r.error())) return r;
//       allowance.record(r.error());
//       const auto wait = allowance.next_delay(retry_after_of(r.error()));
//       if (!wait) return allowance.exhausted(r.error());   // allowance.report(…) has them all
//       sleep(*wait);
//   }
//
// Delays are capped exponential backoff with full jitter (uniform in [0, min(cap, base·2ⁿ)]).
// A server's `Retry-After` replaces the jittered delay when it fits in what remains; a wait
// longer than what remains ends the call now rather than sleeping into a certain failure.
// One allowance may also be a whole harness's budget, shared by rollouts on many threads:
// every member is safe to call concurrently (a lock of its own guards it), except that the
// span `attempts()` returns must not be read while another thread records.
#pragma once

#include <ngfail/failure.hpp>
#include <ngfail/report.hpp>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

namespace ngfail::policy {

struct allowance_limits {
    int attempts = 3;                                  // every attempt, the first included
    std::chrono::milliseconds elapsed{60'000};         // from the first attempt's start
    std::chrono::milliseconds base_delay{100};
    std::chrono::milliseconds max_delay{5'000};

    friend bool operator==(const allowance_limits&, const allowance_limits&) noexcept = default;
};

class retry_allowance {
public:
    using clock = std::chrono::steady_clock;

    explicit retry_allowance(allowance_limits limits = {}, std::uint64_t jitter_seed = 0) noexcept;
    // A copy spends on its own from where the original stood.
    retry_allowance(const retry_allowance& other);
    retry_allowance& operator=(const retry_allowance& other);

    [[nodiscard]] const allowance_limits& limits() const noexcept { return limits_; }

    // Attempts made so far (recorded failures plus the one in progress).
    [[nodiscard]] int attempts_made() const noexcept;
    // Time left of the elapsed budget.
    [[nodiscard]] std::chrono::milliseconds remaining() const noexcept;
    // True when no further attempt fits: the attempts are used up or the time is.
    [[nodiscard]] bool spent() const noexcept;

    // Keeps a failed attempt's failure, for the report of an exhausted request. Allocates;
    // a failure that cannot be kept is counted all the same.
    void record(failure f) noexcept;
    [[nodiscard]] std::span<const failure> attempts() const noexcept { return failures_; }

    // Takes the next attempt: the wait before it, or none when the allowance cannot cover it
    // (no attempt left, no time left, or a `retry_after` longer than the time left).
    [[nodiscard]] std::optional<std::chrono::milliseconds> next_delay(
        std::optional<std::chrono::milliseconds> retry_after = std::nullopt) noexcept;

    // The failure to return when the allowance ran out after `last`: `last`'s kind and
    // evidence, a reason saying how many attempts were made, caused by `last`.
    [[nodiscard]] failure exhausted(const failure& last) const noexcept;

    // The report of `final` (what `exhausted` returned) with every recorded attempt beside it
    // as an observed event: what a boundary forwards, so that no attempt is lost.
    [[nodiscard]] failure_report report(const failure& final) const;

private:
    [[nodiscard]] std::chrono::milliseconds remaining_now() const noexcept;

    allowance_limits limits_;
    clock::time_point started_;
    mutable std::mutex mutex_;  // guards what follows
    int attempts_made_ = 1;
    std::uint64_t jitter_state_;
    std::vector<failure> failures_;
};

}  // namespace ngfail::policy
