// <ngfail/limits.hpp> — the bounds every reader and writer of wire input enforces.
//
// Over a limit on input: a clear `protocol_violation` failure naming the limit. Over a limit
// on output: deterministic truncation (see `encode_header`).
#pragma once

#include <ngfail/detail/cplusplus.hpp>

#include <cstddef>

namespace ngfail {

struct limits {
    std::size_t max_reason_bytes = 2000;    // an event's reason
    std::size_t max_header_bytes = 4096;    // the X-NG-Failure-Report value (fits every common HTTP stack's header limits)
    std::size_t max_events = 64;            // events in one report
    std::size_t max_chain_depth = 32;       // levels in one cause chain
    std::size_t max_string_bytes = 4096;    // any other string field
    std::size_t max_json_depth = 16;        // nesting of any JSON document read
    std::size_t max_json_bytes = 1 << 20;   // one JSON document read (a report, a rollout row)
};

}  // namespace ngfail
