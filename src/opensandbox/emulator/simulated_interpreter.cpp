#include "simulated_interpreter.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>

namespace ngfail::opensandbox::testing::detail {
namespace {

constexpr std::array kernel_languages{std::string_view("python"), std::string_view("bash"),
                                      std::string_view("java"),   std::string_view("javascript"),
                                      std::string_view("typescript"), std::string_view("go")};

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

// Calls `each` with every part of `text` between separators (any of `separators`) that
// stand outside quotes, in order; nothing is collected, so a long text costs no memory.
template <class Each>
void each_part(std::string_view text, std::string_view separators, Each&& each) {
    char quote = 0;
    std::size_t from = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        if (quote) {
            if (ch == quote) quote = 0;
        } else if (ch == '\'' || ch == '"') {
            quote = ch;
        } else if (separators.find(ch) != std::string_view::npos) {
            each(text.substr(from, i - from));
            from = i + 1;
        }
    }
    each(text.substr(from));
}

bool is_identifier(std::string_view s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s.front()))) return false;
    return std::all_of(s.begin(), s.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
}

// What a statement raised.
struct raise_now {
    raised_error error;
};

raise_now raising(std::string name, std::string value) {
    std::string last = value.empty() ? name : name + ": " + value;
    return {{std::move(name), std::move(value), {"Traceback (most recent call last):", std::move(last)}}};
}

std::string str(const kernel_value& v) {
    if (const auto* n = std::get_if<std::int64_t>(&v)) return std::to_string(*n);
    return std::get<std::string>(v);
}

// The length of str(v), without making it.
std::size_t text_size(const kernel_value& v) {
    if (const auto* n = std::get_if<std::int64_t>(&v)) {
        char digits[24];
        return static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, *n).ptr - digits);
    }
    return std::get<std::string>(v).size();
}

// A value as an expression yields it: borrowed from the kernel when it is a name's (a use
// copies nothing: 8 million uses of a 60 KB name used to copy 480 GB), made when computed.
class term {
public:
    static term named(const kernel_value& value) {
        term t;
        t.named_ = &value;
        return t;
    }
    static term made(kernel_value value) {
        term t;
        t.made_ = std::move(value);
        return t;
    }
    [[nodiscard]] const kernel_value& get() const noexcept { return named_ ? *named_ : made_; }
    [[nodiscard]] kernel_value take() && { return named_ ? *named_ : std::move(made_); }

private:
    const kernel_value* named_ = nullptr;
    kernel_value made_{};
};

std::string repr(const kernel_value& v) {
    if (std::holds_alternative<std::int64_t>(v)) return str(v);
    return "'" + std::get<std::string>(v) + "'";
}

class interpreter {
public:
    interpreter(kernel_state& kernel, simulated_run& run) : kernel_(kernel), run_(run) {}

    // Runs one statement; what the last one yields is the run's result.
    void statement(std::string_view text, bool last) {
        text = trim(text);
        if (text.empty() || text.starts_with('#') || text.starts_with("import ") || text.starts_with("from ")) return;
        if (text.starts_with("print(") && text.ends_with(')')) {
            const std::string_view inner = trim(text.substr(6, text.size() - 7));
            const std::string line = (inner.empty() ? std::string() : str(evaluate(inner).get())) + "\n";
            // What a run prints is bounded too: each print may print all a kernel holds.
            if (run_.stdout_text.size() + line.size() > max_kernel_output) {
                throw raising("MemoryError", "a run of the simulated kernel prints at most 1 MiB");
            }
            run_.stdout_text += line;
            return;
        }
        if ((text.starts_with("time.sleep(") || text.starts_with("sleep(")) && text.ends_with(')')) {
            sleep(text.substr(text.find('(') + 1, text.size() - text.find('(') - 2));
            return;
        }
        if (text.starts_with("raise ")) throw raise_statement(trim(text.substr(6)));
        if (const auto eq = text.find('='); eq != std::string_view::npos && text.substr(eq).starts_with("==") == false) {
            const std::string_view name = trim(text.substr(0, eq));
            if (is_identifier(name)) {
                bind(std::string(name), evaluate(trim(text.substr(eq + 1))).take());
                return;
            }
        }
        const term value = evaluate(text);
        if (last) run_.result_text = repr(value.get());
    }

private:
    term evaluate(std::string_view expression) {
        std::optional<term> first;
        std::optional<kernel_value> total;  // once there is a second term
        each_part(expression, "+", [&](std::string_view part) {
            const term next = atom(trim(part));
            if (!first) {
                first = next;
                return;
            }
            if (!total) total = std::move(*first).take();
            const kernel_value& add = next.get();
            if (auto* sum = std::get_if<std::int64_t>(&*total); sum && std::holds_alternative<std::int64_t>(add)) {
                if (__builtin_add_overflow(*sum, std::get<std::int64_t>(add), sum)) {
                    throw raising("OverflowError", "int too large for the simulated kernel");
                }
            } else if (auto* text = std::get_if<std::string>(&*total); text && std::holds_alternative<std::string>(add)) {
                if (text->size() + std::get<std::string>(add).size() > max_kernel_bytes) {
                    throw raising("MemoryError", "");
                }
                *text += std::get<std::string>(add);
            } else {
                throw raising("TypeError", "unsupported operand type(s) for +");
            }
        });
        return total ? term::made(std::move(*total)) : std::move(*first);
    }

    term atom(std::string_view text) {
        if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') && text.back() == text.front() &&
            text.substr(1, text.size() - 2).find(text.front()) == std::string_view::npos) {
            if (text.size() - 2 > max_kernel_bytes) throw raising("MemoryError", "");
            return term::made(std::string(text.substr(1, text.size() - 2)));
        }
        std::int64_t n = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
        if (ec == std::errc() && end == text.data() + text.size()) return term::made(n);
        if (ec == std::errc::result_out_of_range) throw raising("OverflowError", "int too large for the simulated kernel");
        if (is_identifier(text)) {
            const auto it = kernel_.names.find(std::string(text));
            if (it == kernel_.names.end()) {
                throw raising("NameError", "name '" + std::string(text.substr(0, 256)) + "' is not defined");
            }
            return term::named(it->second);
        }
        throw raising("SyntaxError", "invalid syntax");
    }

    // The kernel's total is kept as names change: summing every name at each binding made a
    // run of many bindings quadratic.
    void bind(std::string name, kernel_value value) {
        const auto it = kernel_.names.find(name);
        const std::size_t old = it == kernel_.names.end() ? 0 : name.size() + text_size(it->second);
        const std::size_t bytes = kernel_.name_bytes - old + name.size() + text_size(value);
        if (bytes > max_kernel_bytes) throw raising("MemoryError", "");
        kernel_.name_bytes = bytes;
        if (it == kernel_.names.end()) {
            kernel_.names.emplace(std::move(name), std::move(value));
        } else {
            it->second = std::move(value);
        }
    }

    void sleep(std::string_view seconds) {
        const std::string text(trim(seconds));
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !std::isfinite(value) || value < 0) {
            throw raising("ValueError", "sleep length must be a non-negative number");
        }
        run_.take_longer(std::chrono::milliseconds(static_cast<long long>(std::min(value, 86400.0) * 1000)));
    }

    // `raise Name`, `raise Name("value")`, `raise Name(value)`.
    raise_now raise_statement(std::string_view what) {
        const auto open = what.find('(');
        const std::string_view name = trim(what.substr(0, open));
        if (!is_identifier(name)) return raising("SyntaxError", "invalid syntax");
        if (open == std::string_view::npos) return raising(std::string(name), "");
        if (!what.ends_with(')')) return raising("SyntaxError", "invalid syntax");
        const std::string_view argument = trim(what.substr(open + 1, what.size() - open - 2));
        return raising(std::string(name), argument.empty() ? std::string() : str(evaluate(argument).get()));
    }

    kernel_state& kernel_;
    simulated_run& run_;
};

}  // namespace

bool has_kernel(std::string_view language) noexcept {
    return std::find(kernel_languages.begin(), kernel_languages.end(), language) != kernel_languages.end();
}

simulated_run interpret(std::string_view code, kernel_state& kernel, const file_reader& files) {
    simulated_run run;
    if (kernel.language == "bash") {
        run = simulate(code, files, &kernel.shell);
        // bash_kernel reports a failed cell as an error with no name, its exit status the value
        if (run.exit_code != 0) run.raised = raised_error{"", std::to_string(run.exit_code), {}};
    } else {
        interpreter in(kernel, run);
        // Each statement runs once the next is found, so that the last one is known to be last.
        std::optional<std::string_view> pending;
        try {
            each_part(code, "\n;", [&](std::string_view statement) {
                if (trim(statement).empty()) return;
                if (pending) in.statement(*pending, false);
                pending = statement;
            });
            if (pending) in.statement(*pending, true);
        } catch (raise_now& raised) {
            run.raised = std::move(raised.error);
            run.result_text.reset();
        }
    }
    run.in_kernel = true;
    run.exit_code = 0;  // a kernel's run ends with its error, if any, never an exit code
    run.execution_count = ++kernel.execution_count;
    return run;
}

}  // namespace ngfail::opensandbox::testing::detail
