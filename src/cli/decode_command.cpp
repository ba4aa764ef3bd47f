// ngfail decode [HEADER_VALUE | --file F] [--json]
#include "args.hpp"
#include "report_input.hpp"
#include "tree.hpp"

#include <ngfail/json.hpp>

#include <ostream>

namespace ngfail::cli {
namespace {

const arg_spec spec{.with_value = {"file"}, .flags = {"json"}, .max_positionals = 1};

}  // namespace

int run_decode(arguments args, const streams& io) {
    const auto parsed = parse_or_complain("decode", args, spec, io);
    if (!parsed) return exit_bad_input;
    const parsed_args& a = *parsed;
    if (!a.positionals.empty() && a.value("file")) {
        io.err << "ngfail decode: give a header value or --file, not both\n";
        return exit_bad_input;
    }
    const auto header = a.positionals.empty() ? std::nullopt : std::optional<std::string_view>(a.positionals.front());
    const auto report = read_report("decode", header, a.value("file"), io);
    if (!report) return exit_bad_input;
    if (a.has("json")) {
        io.out << to_json(*report) << '\n';
    } else {
        print_report_tree(io.out, *report, style::for_stdout());
    }
    return exit_ok;
}

std::string decode_usage() {
    return "usage: ngfail decode [HEADER_VALUE | --file F] [--json]\n"
           "\n"
           "Validates an X-NG-Failure-Report header value (the argument) or a report (a file, or\n"
           "standard input) and prints each failure chain as an indented tree: kind, boundary,\n"
           "stage, HTTP status, reason and short ids, the reply's own failure first. With --json,\n"
           "prints the validated report. Invalid input: a one-line reason on stderr, exit 2.\n";
}

}  // namespace ngfail::cli
