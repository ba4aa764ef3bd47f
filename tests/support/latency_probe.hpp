// How long another sandbox's requests wait while one sandbox works: a thread that GETs a
// target on fresh connections, one after another, and keeps the longest wait it saw.
#pragma once

#include "emulator_calls.hpp"
#include "peak_memory.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace ngfail_test {

class latency_probe {
public:
    latency_probe(unsigned short port, std::string target) : target_(std::move(target)) {
        thread_ = std::thread([this, port] {
            while (!done_) {
                const auto start = std::chrono::steady_clock::now();
                const reply r = call(port, http::verb::get, target_);
                const auto took = std::chrono::steady_clock::now() - start;
                if (r.status != 200) ++failed_;
                if (took > longest_) longest_ = took;
                ++count_;
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
        });
    }
    ~latency_probe() { stop(); }

    // Stops probing; the longest wait of all the GETs made.
    std::chrono::milliseconds stop() {
        done_ = true;
        if (thread_.joinable()) thread_.join();
        return std::chrono::duration_cast<std::chrono::milliseconds>(longest_);
    }
    [[nodiscard]] int count() const noexcept { return count_; }
    [[nodiscard]] int failed() const noexcept { return failed_; }

private:
    std::string target_;
    std::atomic<bool> done_{false};
    std::chrono::steady_clock::duration longest_{};  // the probe's thread's, read once it has ended
    std::atomic<int> count_{0};
    std::atomic<int> failed_{0};
    std::thread thread_;
};

// The longest another sandbox's GET may wait beyond what it waits with nothing running: 250
// ms, more under a sanitizer (whose own work slows every request several times over). The
// work a test runs takes seconds, so a sandbox that held another's requests for it fails by
// far; the quiet wait is measured over 300 ms, the work's over seconds, and on a CI machine
// compiling beside it one hiccup more in those seconds was 140 ms (at a bound of 100).
inline constexpr std::chrono::milliseconds longest_allowed_wait{instrumented ? 400 : 250};

// The longest wait probes of `targets` see over `how_long` while the server does nothing
// else: what the machine adds (another test, a compiler), measured in the same run, so that
// a bound on the wait one sandbox's work causes is not a bound on the machine's load.
inline std::chrono::milliseconds quiet_wait(unsigned short port, const std::vector<std::string>& targets,
                                            std::chrono::milliseconds how_long = std::chrono::milliseconds(300)) {
    std::vector<std::unique_ptr<latency_probe>> probes;
    for (const std::string& target : targets) probes.push_back(std::make_unique<latency_probe>(port, target));
    std::this_thread::sleep_for(how_long);
    std::chrono::milliseconds longest{0};
    for (auto& p : probes) longest = std::max(longest, p->stop());
    return longest;
}

}  // namespace ngfail_test
