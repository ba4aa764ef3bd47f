// A run streamed as execd streams it, shared by every route that runs something: commands
// (POST /command), bash session runs (POST /session/{id}/run) and code runs (POST /code).
// The stream is one `init`, a `ping`, the output, then `execution_complete` or `error`;
// faults act at the points their names say.
#pragma once

#include "context.hpp"
#include "simulated_shell.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ngfail::opensandbox::testing::detail {

[[nodiscard]] std::int64_t now_ms();

// The request's body as JSON (null when it is not JSON); a large body is parsed off the
// connection threads, as a run's work is.
boost::asio::awaitable<boost::json::value> body_json(context& c, const exchange& x);

// execd's 400 for a body it cannot use.
[[nodiscard]] response invalid_request(const context& c, const exchange& x, std::string_view message);

// execd's `timeout` (milliseconds): none when absent, null or not positive; a huge one
// saturates at the longest wait; std::nullopt when it is not a whole number.
[[nodiscard]] std::optional<std::optional<std::chrono::milliseconds>> exec_timeout(const boost::json::object& o);

// The sandbox's files, as `simulate` reads them.
[[nodiscard]] file_reader files_of(context& c, const call& k);

// Starts a run of `text`; answers the refusal itself (no sandbox, too many running) and
// gives none.
boost::asio::awaitable<std::optional<command_run>> start_run(context& c, exchange& x, const call& k,
                                                             std::string_view text, bool background);

// Streams the started `run`: `init` carries `init_text` (the run's id, a session's, a code
// context's); `plan_run` says what the run does, and is called only when the run gets that
// far (a fault may end the stream before). A background run ends the stream after `init`
// and runs on; a foreground one runs for the plan's time, until its timeout kills it or an
// interrupt ends it.
boost::asio::awaitable<void> stream_run(context& c, exchange& x, call& k, const command_run& run,
                                        std::string_view init_text, const std::function<simulated_run()>& plan_run,
                                        bool background, std::optional<std::chrono::milliseconds> timeout);

}  // namespace ngfail::opensandbox::testing::detail
