// Scripted faults: a queue per server, taken one request at a time.
#pragma once

#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <deque>
#include <mutex>
#include <optional>
#include <string_view>

namespace ngfail::opensandbox::emulator {

class fault_queue {
public:
    void push(fault f);
    // The first fault queued for `operation`, counted against its `times`.
    [[nodiscard]] std::optional<fault> take(std::string_view operation);

private:
    std::mutex mutex_;
    std::deque<fault> faults_;
};

}  // namespace ngfail::opensandbox::emulator
