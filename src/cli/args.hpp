// Command-line arguments: `--flag`, `--name value`, `--name=value` and positionals.
#pragma once

#include "command.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ngfail::cli {

struct parsed_args {
    std::map<std::string, std::string, std::less<>> values;  // the last value given
    std::map<std::string, std::vector<std::string>, std::less<>> every_value;  // each, in order
    std::set<std::string, std::less<>> flags;
    std::vector<std::string> positionals;

    [[nodiscard]] bool has(std::string_view flag) const { return flags.contains(flag); }
    [[nodiscard]] std::optional<std::string> value(std::string_view name) const {
        const auto it = values.find(name);
        return it == values.end() ? std::nullopt : std::optional(it->second);
    }
    // Every value of a repeatable option, in the order given.
    [[nodiscard]] std::vector<std::string> all(std::string_view name) const {
        const auto it = every_value.find(name);
        return it == every_value.end() ? std::vector<std::string>{} : it->second;
    }
};

// What a command accepts: options that take a value, and boolean flags.
struct arg_spec {
    std::set<std::string_view> with_value{};
    std::set<std::string_view> flags{};
    std::size_t max_positionals = 0;
};

// The parsed arguments, or a one-line error naming the offending argument.
[[nodiscard]] std::variant<parsed_args, std::string> parse_args(arguments args, const arg_spec& spec);

// The parsed arguments, or nothing after telling stderr "ngfail COMMAND: <problem>".
[[nodiscard]] std::optional<parsed_args> parse_or_complain(std::string_view command, arguments args,
                                                           const arg_spec& spec, const streams& io);

// An integer argument, or nothing when `text` is not one.
[[nodiscard]] std::optional<int> to_int(std::string_view text);

}  // namespace ngfail::cli
