// ngfail decode [HEADER_VALUE | --file F] [--json]
#include "args.hpp"
#include "tree.hpp"

#include <ngfail/failure_header.hpp>
#include <ngfail/json.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iostream>
#include <iterator>
#include <ostream>

namespace ngfail::cli {
namespace {

// The value of a whole `X-NG-Failure-Report: …` line, as one copies it from a log or curl
// -v; anything else as given.
std::string_view header_value(std::string_view text) {
    const std::string_view name = failure_header_name;
    const auto same = [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
    };
    if (text.size() <= name.size() || text[name.size()] != ':' ||
        !std::equal(name.begin(), name.end(), text.begin(), same)) {
        return text;
    }
    text.remove_prefix(name.size() + 1);
    constexpr std::string_view blanks = " \t\r\n";
    text.remove_prefix(std::min(text.find_first_not_of(blanks), text.size()));
    text.remove_suffix(text.size() - std::min(text.find_last_not_of(blanks) + 1, text.size()));
    return text;
}

const arg_spec spec{.with_value = {"file"}, .flags = {"json"}, .max_positionals = 1};

// Reads at most `limit + 1` bytes, so an oversized input is reported, not loaded.
std::string read_bounded(std::istream& in, std::size_t limit) {
    std::string text(limit + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
    while (!s.empty() && (s.front() == ' ' || s.front() == '\n')) s.remove_prefix(1);
    return s;
}

}  // namespace

int run_decode(arguments args, const streams& io) {
    const auto parsed = parse_or_complain("decode", args, spec, io);
    if (!parsed) return exit_bad_input;
    const parsed_args& a = *parsed;
    const limits lim;
    result<failure_report> report = failure_report{};
    if (!a.positionals.empty()) {
        if (a.value("file")) {
            io.err << "ngfail decode: give a header value or --file, not both\n";
            return exit_bad_input;
        }
        report = decode_header(header_value(a.positionals.front()), lim);
    } else {
        std::string text;
        if (const auto path = a.value("file")) {
            std::ifstream in(*path, std::ios::binary);
            if (!in) {
                io.err << "ngfail decode: cannot open '" << *path << "'\n";
                return exit_bad_input;
            }
            text = read_bounded(in, lim.max_json_bytes);
        } else {
            text = read_bounded(std::cin, lim.max_json_bytes);
        }
        if (text.size() > lim.max_json_bytes) {
            io.err << "ngfail decode: the input is over " << lim.max_json_bytes << " bytes\n";
            return exit_bad_input;
        }
        report = report_from_json(trim(text), lim);
    }
    if (!report) {
        io.err << "ngfail decode: " << one_line(report.error().reason(), 400) << '\n';
        return exit_bad_input;
    }
    if (a.has("json")) {
        io.out << to_json(report.value()) << '\n';
    } else {
        print_report_tree(io.out, report.value(), style::for_stdout());
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
