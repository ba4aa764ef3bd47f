#include <ngfail/policy/retry_allowance.hpp>

#include <algorithm>
#include <string>

namespace ngfail::policy {
namespace {

// splitmix64: a few instructions, good enough to spread retries; not for secrets.
std::uint64_t next_random(std::uint64_t& state) noexcept {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

std::uint64_t fresh_seed(const void* self) noexcept {
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
           reinterpret_cast<std::uintptr_t>(self);
}

}  // namespace

retry_allowance::retry_allowance(allowance_limits limits, std::uint64_t jitter_seed) noexcept
    : limits_(limits), started_(clock::now()), jitter_state_(jitter_seed != 0 ? jitter_seed : fresh_seed(this)) {}

retry_allowance::retry_allowance(const retry_allowance& other)
    : limits_(other.limits_), started_(other.started_) {
    const std::lock_guard lock(other.mutex_);
    attempts_made_ = other.attempts_made_;
    jitter_state_ = other.jitter_state_;
    failures_ = other.failures_;
}

retry_allowance& retry_allowance::operator=(const retry_allowance& other) {
    if (this == &other) return *this;
    const std::scoped_lock both(mutex_, other.mutex_);
    limits_ = other.limits_;
    started_ = other.started_;
    attempts_made_ = other.attempts_made_;
    jitter_state_ = other.jitter_state_;
    failures_ = other.failures_;
    return *this;
}

int retry_allowance::attempts_made() const noexcept {
    const std::lock_guard lock(mutex_);
    return attempts_made_;
}

// limits_ and started_ never change after construction but by assignment, which no thread
// may do while others use the allowance.
std::chrono::milliseconds retry_allowance::remaining_now() const noexcept {
    const auto used = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - started_);
    return std::max(limits_.elapsed - used, std::chrono::milliseconds::zero());
}

std::chrono::milliseconds retry_allowance::remaining() const noexcept { return remaining_now(); }

bool retry_allowance::spent() const noexcept {
    const std::lock_guard lock(mutex_);
    return attempts_made_ >= limits_.attempts || remaining_now() <= std::chrono::milliseconds::zero();
}

void retry_allowance::record(failure f) noexcept {
    const std::lock_guard lock(mutex_);
    try {
        failures_.push_back(std::move(f));
    } catch (...) {  // the attempt still counts; only its record is lost
    }
}

std::optional<std::chrono::milliseconds> retry_allowance::next_delay(
    std::optional<std::chrono::milliseconds> retry_after) noexcept {
    const std::lock_guard lock(mutex_);
    if (attempts_made_ >= limits_.attempts) return std::nullopt;
    const auto left = remaining_now();
    std::chrono::milliseconds wait{};
    if (retry_after) {
        wait = std::max(*retry_after, std::chrono::milliseconds::zero());
    } else {
        // Full jitter: uniform in [0, min(cap, base * 2^(retries so far))].
        const int shift = std::min(attempts_made_ - 1, 30);
        const auto ceiling = std::min(limits_.max_delay.count(), limits_.base_delay.count() << shift);
        wait = std::chrono::milliseconds(
            ceiling > 0 ? static_cast<std::int64_t>(next_random(jitter_state_) % static_cast<std::uint64_t>(ceiling + 1))
                        : 0);
    }
    if (wait >= left) return std::nullopt;  // the next attempt would start with no time to run
    ++attempts_made_;
    return wait;
}

failure retry_allowance::exhausted(const failure& last) const noexcept {
    const int attempts_made = this->attempts_made();
    try {
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - started_).count();
        return restated(last, "no retry left after " + std::to_string(attempts_made) + " attempt" +
                                  (attempts_made == 1 ? "" : "s") + " in " + std::to_string(ms) + " ms");
    } catch (...) {
        return last;
    }
}

failure_report retry_allowance::report(const failure& final) const {
    failure_report whole = report_for(final);
    const std::lock_guard lock(mutex_);
    for (const failure& attempt : failures_) {
        // An attempt already in the chain has the same record; merging adds only the others.
        (void)merge(whole, report_for(attempt));
    }
    return whole;
}

}  // namespace ngfail::policy
