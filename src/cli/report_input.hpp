// A failure report as the CLI's commands take it: an X-NG-Failure-Report header value (the
// whole `X-NG-Failure-Report: …` line, as copied from a log, will do), or a report as JSON
// from a file or standard input. Input past the wire's limits is refused, not loaded.
#pragma once

#include "command.hpp"

#include <ngfail/report.hpp>

#include <optional>
#include <string_view>

namespace ngfail::cli {

// Reads the report from `header_value` when given, else from the file at `path` when given,
// else from standard input; on a problem, says it on `io.err` after "ngfail COMMAND: " and
// gives none.
[[nodiscard]] std::optional<failure_report> read_report(std::string_view command,
                                                        std::optional<std::string_view> header_value,
                                                        std::optional<std::string_view> path, const streams& io);

}  // namespace ngfail::cli
