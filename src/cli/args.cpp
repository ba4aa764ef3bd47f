#include "args.hpp"

#include <algorithm>
#include <charconv>
#include <ostream>

namespace ngfail::cli {

std::variant<parsed_args, std::string> parse_args(arguments args, const arg_spec& spec) {
    parsed_args out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view arg = args[i];
        // An argument is never repeated in a complaint: a misplaced one may be a key.
        if (arg.size() > 1 && arg[0] == '-' && arg[1] != '-') {
            return "unknown option '" + std::string(arg.substr(0, std::min(arg.find('='), std::size_t{32}))) +
                   "' (options begin with --)";
        }
        if (!arg.starts_with("--")) {
            if (out.positionals.size() >= spec.max_positionals) {
                return "one argument too many, the " + std::to_string(out.positionals.size() + 1) +
                       "th of its kind (not repeated here: it may be a secret)";
            }
            out.positionals.emplace_back(arg);
            continue;
        }
        const auto equals = arg.find('=');
        const std::string_view name = arg.substr(2, equals == std::string_view::npos ? std::string_view::npos : equals - 2);
        if (spec.flags.contains(name) && equals == std::string_view::npos) {
            out.flags.emplace(name);
        } else if (spec.with_value.contains(name)) {
            if (equals == std::string_view::npos && i + 1 >= args.size()) return "--" + std::string(name) + " needs a value";
            const std::string value(equals != std::string_view::npos ? arg.substr(equals + 1) : args[++i]);
            out.values[std::string(name)] = value;
            out.every_value[std::string(name)].push_back(value);
        } else if (spec.flags.contains(name)) {
            return "--" + std::string(name) + " takes no value";
        } else {
            return "unknown option '--" + std::string(name) + "'";  // its value may be a secret: never echoed
        }
    }
    return out;
}

std::optional<parsed_args> parse_or_complain(std::string_view command, arguments args, const arg_spec& spec,
                                             const streams& io) {
    auto parsed = parse_args(args, spec);
    if (auto* problem = std::get_if<std::string>(&parsed)) {
        io.err << "ngfail " << command << ": " << *problem << '\n';
        return std::nullopt;
    }
    return std::get<parsed_args>(std::move(parsed));
}

std::optional<int> to_int(std::string_view text) {
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && end == text.data() + text.size() && !text.empty() ? std::optional(value) : std::nullopt;
}

}  // namespace ngfail::cli
