#include "report_input.hpp"

#include <ngfail/failure_header.hpp>
#include <ngfail/json.hpp>
#include <ngfail/one_line.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iostream>
#include <ostream>
#include <string>

namespace ngfail::cli {
namespace {

// The value of a whole `X-NG-Failure-Report: …` line; anything else as given.
std::string_view header_value_of(std::string_view text) {
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

std::optional<failure_report> read_report(std::string_view command, std::optional<std::string_view> header_value,
                                          std::optional<std::string_view> path, const streams& io) {
    const limits lim;
    result<failure_report> report = failure_report{};
    if (header_value) {
        report = decode_header(header_value_of(*header_value), lim);
    } else {
        std::string text;
        if (path) {
            std::ifstream in(std::string(*path), std::ios::binary);
            if (!in) {
                io.err << "ngfail " << command << ": cannot open '" << one_line(*path) << "'\n";
                return std::nullopt;
            }
            text = read_bounded(in, lim.max_json_bytes);
        } else {
            text = read_bounded(std::cin, lim.max_json_bytes);
        }
        if (text.size() > lim.max_json_bytes) {
            io.err << "ngfail " << command << ": the input is over " << lim.max_json_bytes << " bytes\n";
            return std::nullopt;
        }
        report = report_from_json(trim(text), lim);
    }
    if (!report) {
        io.err << "ngfail " << command << ": " << one_line(report.error().reason(), 400) << '\n';
        return std::nullopt;
    }
    return std::move(report).value();
}

}  // namespace ngfail::cli
