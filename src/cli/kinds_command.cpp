// ngfail kinds [--json]
#include "args.hpp"

#include <ngfail/kind.hpp>

#include <boost/json.hpp>

#include <iomanip>
#include <ostream>

namespace ngfail::cli {
namespace {

std::string_view domain_name(kind k) {
    const auto d = domain_of(k);
    return d ? name(*d) : std::string_view{"-"};
}

void print_json(std::ostream& out) {
    boost::json::array rows;
    for (const kind k : all_kinds()) {
        boost::json::object row;
        row["name"] = name(k);
        if (const auto d = domain_of(k)) row["domain"] = name(*d);
        row["code"] = static_cast<int>(k);
        row["description"] = description(k);
        rows.push_back(std::move(row));
    }
    out << boost::json::serialize(boost::json::object{{"category", kind_category().name()},
                                                      {"kinds", std::move(rows)}})
        << '\n';
}

void print_table(std::ostream& out) {
    out << std::left << std::setw(31) << "KIND" << std::setw(13) << "DOMAIN" << std::right
        << std::setw(4) << "CODE" << "  DESCRIPTION\n";
    for (const kind k : all_kinds()) {
        out << std::left << std::setw(31) << name(k) << std::setw(13) << domain_name(k)
            << std::right << std::setw(4) << static_cast<int>(k) << "  " << description(k) << '\n';
    }
}

}  // namespace

int run_kinds(arguments args, const streams& io) {
    const auto parsed = parse_or_complain("kinds", args, {.flags = {"json"}}, io);
    if (!parsed) return exit_bad_input;
    parsed->has("json") ? print_json(io.out) : print_table(io.out);
    return exit_ok;
}

std::string kinds_usage() {
    return "usage: ngfail kinds [--json]\n"
           "\n"
           "Lists every core failure kind with its domain, its code in the ngfail.kind\n"
           "category and a one-line description.\n"
           "\n"
           "  --json   print one JSON document instead of a table\n";
}

}  // namespace ngfail::cli
