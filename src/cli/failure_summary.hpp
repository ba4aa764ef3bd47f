// What a classified failure says at a glance: its kind, its delivery, when to retry and the
// row of the evidence table that decided (docs/opensandbox.md), a line each; then what the
// server's diagnostics said around it, when the failure carries them.
#pragma once

#include "style.hpp"

#include <ngfail/failure.hpp>

#include <iosfwd>

namespace ngfail::cli {

void print_failure_summary(std::ostream& out, const failure& f, const style& s);

}  // namespace ngfail::cli
