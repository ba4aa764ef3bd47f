// The CLI's trees are the library's (<ngfail/report_tree.hpp>), coloured when stdout is a terminal.
#pragma once

#include "style.hpp"

#include <ngfail/report_tree.hpp>

#include <ostream>

namespace ngfail::cli {

inline void print_report_tree(std::ostream& out, const failure_report& report, const style& s) {
    print_tree(out, report, {.color = s.enabled()});
}

}  // namespace ngfail::cli
