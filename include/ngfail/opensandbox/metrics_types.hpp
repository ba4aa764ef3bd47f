// <ngfail/opensandbox/metrics_types.hpp> — a sandbox's resource use, as `get_metrics` and
// `watch_metrics` give it (target ngfail::opensandbox_client; no Asio).
#pragma once

#include <ngfail/detail/cplusplus.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace ngfail::opensandbox {

// A sandbox's resource use as execd reports it (`get_metrics`, `watch_metrics`).
struct metrics_sample {
    double cpu_count = 0;
    double cpu_used_pct = 0;
    double mem_total_mib = 0;
    double mem_used_mib = 0;
    std::int64_t timestamp_ms = 0;  // when execd read it, Unix milliseconds
    // A watched sample execd could not read, as it said (its numbers are then 0): the watch
    // goes on, as execd's does.
    std::optional<std::string> error{};
};

// Receives each sample of `watch_metrics`; returning false ends the watch.
using metrics_callback = std::function<bool(const metrics_sample&)>;

}  // namespace ngfail::opensandbox
