// What `ngfail policy` and `ngfail stats --policy` share.
#pragma once

#include "command.hpp"

#include <ngfail/policy/outcome_policy.hpp>

#include <optional>
#include <string_view>

namespace ngfail::cli {

// The policy at `path`, or nothing after telling stderr "ngfail COMMAND: FILE:LINE: …".
[[nodiscard]] std::optional<policy::outcome_policy> load_policy_or_complain(std::string_view command,
                                                                            std::string_view path, const streams& io);

}  // namespace ngfail::cli
