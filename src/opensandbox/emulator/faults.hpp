// Scripted faults: a queue per server, taken one request at a time.
#pragma once

#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace ngfail::opensandbox::testing::detail {

// Why `f` would never act: an operation no route has, or an action that does nothing to
// its operation; none when it acts. A fault that would silently never fire is refused.
[[nodiscard]] std::optional<std::string> never_acts(const fault& f);

// Whether `operation` streams a run (exec, a session's run, a code run): the stream acts out a
// crash or an OOM kill itself, and the stream faults act on these only.
[[nodiscard]] bool streams_a_run(std::string_view operation) noexcept;

// Faults waiting for their operations, at most `most` at once (a chaos test queues a few; a
// stranger's loop must not grow the server without bound).
class fault_queue {
public:
    explicit fault_queue(std::size_t most) : most_(most) {}
    // False, and nothing queued, when `most` are waiting.
    [[nodiscard]] bool push(fault f);
    // The first fault queued for `operation`, counted against its `times`.
    [[nodiscard]] std::optional<fault> take(std::string_view operation);

private:
    std::size_t most_;
    std::mutex mutex_;
    std::deque<fault> faults_;
};

}  // namespace ngfail::opensandbox::testing::detail
