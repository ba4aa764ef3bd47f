// The report's JSON as written, for writers that have already made it valid
// (`truncate_to_limits`): `to_json` without its validation pass.
#pragma once

#include <ngfail/report.hpp>

#include <string>

namespace ngfail::detail {

[[nodiscard]] std::string write_report(const failure_report& report);

}  // namespace ngfail::detail
