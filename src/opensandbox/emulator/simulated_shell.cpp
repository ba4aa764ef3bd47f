#include "simulated_shell.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cctype>
#include <cstdlib>
#include <span>

namespace ngfail::opensandbox::testing::detail {
namespace {

// How deep `$(...)` nests. Each level parses its text again, so a line costs at most this
// many passes over it; past it the substitution fails and nothing deeper runs.
constexpr int max_substitution_depth = 32;

// Directories every image has, whether or not its tree was told of them: a fresh sandbox's
// tree holds only /, /home, /root and /tmp, and `cd /usr` must not fail for that.
constexpr std::array<std::string_view, 20> image_directories{
    "/",    "/bin", "/boot", "/dev",  "/etc", "/home", "/lib",      "/media",     "/mnt",    "/opt",
    "/proc", "/root", "/run", "/sbin", "/srv", "/sys",  "/tmp", "/usr", "/var", "/workspace",
};

// What one program sees: the files, the session's state (a scratch one outside a session, a
// copy in a subshell), and the run it prints into, which holds at most `limit`.
struct run_context {
    const file_reader& files;
    shell_state& shell;
    simulated_run& run;
    std::size_t limit = max_run_output;  // a subshell's is what its parent has left
    int depth = 0;                       // of `$(...)`
    bool full = false;                   // the run has printed all it may
    bool too_deep = false;               // a substitution nested past its bound: the run stops
    bool exiting = false;                // `exit` ran: the rest of the line does not

    [[nodiscard]] std::size_t room() const noexcept {
        return limit - std::min(limit, run.stdout_text.size() + run.stderr_text.size());
    }
    void print(std::string_view text, std::string simulated_run::*stream = &simulated_run::stdout_text) {
        if (text.size() > room()) {
            text = text.substr(0, room());
            full = true;
        }
        (run.*stream).append(text);
    }
    int fail(std::string_view message, int status = 1) {
        print(message, &simulated_run::stderr_text);
        return status;
    }
    [[nodiscard]] std::shared_ptr<const std::string> read(const std::string& path) const {
        return files.read_file ? files.read_file(path) : nullptr;
    }
    [[nodiscard]] bool is_directory(const std::string& path) const {
        return std::find(image_directories.begin(), image_directories.end(), path) != image_directories.end() ||
               (files.is_directory && files.is_directory(path));
    }
};

// A program gets its arguments (its name left out), prints through its context and returns
// its exit status.
using arguments = std::span<const std::string>;
using program = int (*)(arguments, run_context& at);

// A word as bash quotes it in a message, bounded (it may be a whole expanded variable).
std::string quoted_word(std::string_view word) { return std::string(word.substr(0, max_path_bytes)); }

int echo(arguments args, run_context& at) {
    const bool newline = args.empty() || args.front() != "-n";
    for (std::size_t i = newline ? 0 : 1; i < args.size(); ++i) {
        if (i > (newline ? 0u : 1u)) at.print(" ");
        at.print(args[i]);
    }
    if (newline) at.print("\n");
    return 0;
}

int succeed(arguments, run_context&) { return 0; }
int fail_quietly(arguments, run_context&) { return 1; }

// bash's exit: the last status without an argument, the argument modulo 256 with one (as the
// kernel keeps only a byte), 2 for a word that is no number.
int exit_with(arguments args, run_context& at) {
    if (args.size() > 1) return at.fail("bash: exit: too many arguments\n");  // and bash stays
    at.exiting = true;
    if (args.empty()) return at.shell.last_status;
    const std::string& word = args.front();
    long long n = 0;
    const char* first = word.data() + (word.starts_with('+') ? 1 : 0);
    const auto [end, error] = std::from_chars(first, word.data() + word.size(), n);
    if (word.empty() || error != std::errc{} || end != word.data() + word.size()) {
        return at.fail("bash: exit: " + quoted_word(word) + ": numeric argument required\n", 2);
    }
    return static_cast<int>(static_cast<unsigned long long>(n) & 0xff);
}

int sleep_for(arguments args, run_context& at) {
    if (args.empty()) return at.fail("sleep: missing operand\n");
    const std::string text(std::string_view(args.front()).substr(0, 64));
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || !std::isfinite(value) || value < 0) {
        return at.fail("sleep: invalid time interval '" + text + "'\n");
    }
    at.run.take_longer(std::chrono::milliseconds(static_cast<long long>(std::min(value, 86400.0) * 1000)));
    return 0;
}

// `path` from the session's working directory, made normal as bash's logical `cd` makes it;
// none past `max_path_bytes`.
std::optional<std::string> absolute(std::string_view path, const shell_state& shell) {
    const std::size_t length = path.starts_with('/') ? path.size() : shell.cwd.size() + 1 + path.size();
    if (length > max_path_bytes) return std::nullopt;
    return file_tree::normal(path.starts_with('/') ? std::string(path) : shell.cwd + "/" + std::string(path));
}

int cat(arguments args, run_context& at) {
    int status = 0;
    for (const std::string& path : args) {
        const auto full_path = absolute(path, at.shell);
        if (full_path && at.is_directory(*full_path)) {
            status = at.fail("cat: " + quoted_word(path) + ": Is a directory\n");
        } else if (const auto content = full_path ? at.read(*full_path) : nullptr) {
            at.print(*content);
        } else {
            status = at.fail("cat: " + quoted_word(path) + ": No such file or directory\n");
        }
    }
    return status;
}

int cd(arguments args, run_context& at) {
    if (args.size() > 1) return at.fail("bash: cd: too many arguments\n");
    const std::string_view dir = args.empty() ? "/root" : std::string_view(args.front());  // a bare cd goes home
    auto to = absolute(dir, at.shell);
    if (!to) return at.fail("bash: cd: File name too long\n");
    if (!at.is_directory(*to)) {
        const char* why = at.read(*to) ? "Not a directory" : "No such file or directory";
        return at.fail("bash: cd: " + quoted_word(dir) + ": " + why + "\n");
    }
    at.shell.cwd = std::move(*to);
    return 0;
}

int pwd(arguments, run_context& at) {
    at.print(at.shell.cwd);
    at.print("\n");
    return 0;
}

// `export NAME=VALUE...`; a bare NAME is already as exported as it gets here.
int export_variables(arguments args, run_context& at) {
    int status = 0;
    for (const std::string& assignment : args) {
        const auto eq = std::min(assignment.find('='), assignment.size());
        if (!is_shell_name(std::string_view(assignment).substr(0, eq))) {
            status = at.fail("bash: export: `" + quoted_word(assignment) + "': not a valid identifier\n");
        } else if (eq < assignment.size() && !at.shell.set(assignment.substr(0, eq), assignment.substr(eq + 1))) {
            status = at.fail("bash: export: the simulated shell keeps at most 64 KiB of variables\n");
        }
    }
    return status;
}

struct command_row {
    std::string_view name;
    program run;
};

constexpr std::array programs{
    command_row{"echo", echo},   command_row{"exit", exit_with}, command_row{"sleep", sleep_for},
    command_row{"cat", cat},     command_row{"cd", cd},          command_row{"pwd", pwd},
    command_row{"export", export_variables},
    command_row{"true", succeed}, command_row{"false", fail_quietly}, command_row{":", succeed},
};

// ---- the line: words, quotes, expansions and separators, in one pass ---------------------------

// What ends a command, and whether the next one runs after a status.
enum class joint { end, then, and_then, or_else };
struct joint_row {
    std::string_view text;
    joint kind;
};
// Longest first: `&&` before a lone `&`.
constexpr std::array joints{joint_row{"&&", joint::and_then}, joint_row{"||", joint::or_else},
                            joint_row{";", joint::then}, joint_row{"\n", joint::then}};
// What the simulated shell does not do (pipes, redirections, background, subshells, backquotes):
// a command using it is only echoed.
constexpr std::string_view unsupported_syntax = "|&<>()`";

// Where the `)` closing a `$(` is, its text starting at `from`; npos when it is not closed.
// A loop, not recursion, so that a line a million `$(` deep needs no million frames.
std::size_t closing_paren(std::string_view s, std::size_t from) {
    enum mode : char { code, in_double_quotes };
    std::vector<mode> open{code};  // each `(` or `"` not yet closed
    for (std::size_t i = from; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '\\') {
            ++i;
        } else if (open.back() == in_double_quotes) {
            if (c == '"') open.pop_back();
            if (c == '$' && i + 1 < s.size() && s[i + 1] == '(') open.push_back(code), ++i;
        } else if (c == '\'') {
            if ((i = s.find('\'', i + 1)) == std::string_view::npos) return i;
        } else if (c == '"') {
            open.push_back(in_double_quotes);
        } else if (c == '(') {
            open.push_back(code);
        } else if (c == ')') {
            open.pop_back();
            if (open.empty()) return i;
        }
    }
    return std::string_view::npos;
}

void run_line(std::string_view line, run_context& at);

// `$(text)`: run in a subshell (a copy of the state: its `cd` and `export` stay in it), its
// output with trailing newlines removed; its errors are the run's. The copy is at most
// `max_shell_variable_bytes` and a path, as one `export` may write; the output at most what
// the run has left to print. None past `max_substitution_depth`.
std::optional<std::string> substitute(std::string_view text, run_context& at, std::size_t held) {
    if (at.depth >= max_substitution_depth) {
        at.fail("ngfail serve: the simulated shell nests at most 32 command substitutions; the run was stopped there\n");
        at.too_deep = true;
        return std::nullopt;
    }
    shell_state copy = at.shell;
    simulated_run inner;
    run_context sub{at.files, copy, inner, at.room() - std::min(at.room(), held), at.depth + 1};
    run_line(text, sub);
    at.print(inner.stderr_text, &simulated_run::stderr_text);
    at.full = at.full || sub.full;
    at.too_deep = at.too_deep || sub.too_deep;
    if (at.too_deep) return std::nullopt;
    std::string& out = inner.stdout_text;
    out.erase(out.find_last_not_of('\n') + 1);
    return std::move(out);
}

// One command of a line, read from `at` on: its words expanded (when it runs), up to the
// joint after it.
class command_reader {
public:
    command_reader(std::string_view line, std::size_t from, run_context* runs) : line_(line), i_(from), at_(runs) {}

    std::vector<std::string> words{};
    bool unsupported = false;
    std::optional<std::string> syntax_error{};  // what bash says of an unclosed quote
    bool stopped = false;                      // an expansion failed or filled the run

    // Reads to the joint; returns it and where the next command starts.
    std::pair<joint, std::size_t> read() {
        while (i_ < line_.size() && !syntax_error && !stopped) {
            const char c = line_[i_];
            if (const auto j = joint_here()) {
                finish_word();
                return {j->kind, i_ + j->text.size()};
            }
            if (c == ' ' || c == '\t') {
                finish_word();
                ++i_;
            } else if (c == '#' && !in_word_) {
                i_ = std::min(line_.find('\n', i_), line_.size());  // a comment, to the line's end
            } else if (c == '\\') {
                if (i_ + 1 < line_.size() && line_[i_ + 1] != '\n') literal(line_.substr(i_ + 1, 1));
                i_ += 2;
            } else if (c == '\'') {
                const std::size_t close = line_.find('\'', i_ + 1);
                if (close == std::string_view::npos) return unclosed("'");
                literal(line_.substr(i_ + 1, close - i_ - 1));
                i_ = close + 1;
            } else if (c == '"') {
                if (!double_quoted()) return unclosed("\"");
            } else if (c == '$') {
                if (!dollar(false)) return unclosed(")");
            } else if (c == '~' && !in_word_ &&
                       (i_ + 1 == line_.size() || std::string_view("/;&|)").find(line_[i_ + 1]) != std::string_view::npos ||
                        blank(line_[i_ + 1]))) {  // a word of its own: `cd ~; pwd`
                literal("/root");
                ++i_;
            } else {
                if (unsupported_syntax.find(c) != std::string_view::npos) unsupported = true;
                literal(line_.substr(i_, 1));
                ++i_;
            }
        }
        finish_word();
        return {joint::end, line_.size()};
    }

private:
    static bool blank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

    [[nodiscard]] std::optional<joint_row> joint_here() const {
        if (std::string_view("&|;\n").find(line_[i_]) == std::string_view::npos) return std::nullopt;  // most bytes
        for (const joint_row& j : joints) {
            if (line_.substr(i_).starts_with(j.text)) return j;
        }
        return std::nullopt;
    }
    std::pair<joint, std::size_t> unclosed(std::string_view quote) {
        syntax_error = "bash: unexpected EOF while looking for matching `" + std::string(quote) + "'\n";
        return {joint::end, line_.size()};
    }

    // Bytes added to the words; the words together hold at most what the run may still print.
    bool fits(std::size_t more) {
        if (!at_) return false;  // a command that does not run keeps no words
        if (held_ + more > at_->room()) {
            at_->full = true;
            stopped = true;
            return false;
        }
        held_ += more;
        return true;
    }
    void literal(std::string_view text) {
        in_word_ = true;
        if (fits(text.size())) word_ += text;
    }
    void finish_word() {
        if (in_word_) words.push_back(std::move(word_));
        word_.clear();
        in_word_ = false;
    }
    // An expansion's text: kept whole in double quotes, else split on blanks, as bash splits it.
    void expansion(std::string_view text, bool quoted) {
        if (quoted) return literal(text);
        // Split at blanks, a run of other bytes at a time (a byte at a time was most of a
        // 64 KiB variable's cost). Each blank's next place is found by memchr, again only once
        // passed: linear however the blanks mix.
        std::array<std::size_t, 3> next{text.find(' '), text.find('\t'), text.find('\n')};
        for (std::size_t from = 0; from < text.size() && !stopped;) {
            for (std::size_t k = 0; k < next.size(); ++k) {
                if (next[k] < from) next[k] = text.find(" \t\n"[k], from);
            }
            const std::size_t blank_at = std::min(*std::min_element(next.begin(), next.end()), text.size());
            if (blank_at > from) literal(text.substr(from, blank_at - from));
            if (blank_at == text.size()) break;
            finish_word();
            from = blank_at + 1;
        }
    }

    // From the opening `"` to past the closing one; false when it is not closed.
    bool double_quoted() {
        in_word_ = true;
        for (++i_; i_ < line_.size();) {
            const char c = line_[i_];
            if (c == '"') {
                ++i_;
                return true;
            }
            if (c == '\\' && i_ + 1 < line_.size() && std::string_view("$`\"\\\n").find(line_[i_ + 1]) != std::string_view::npos) {
                if (line_[i_ + 1] != '\n') literal(line_.substr(i_ + 1, 1));
                i_ += 2;
            } else if (c == '$') {
                if (!dollar(true)) return false;
            } else {
                literal(line_.substr(i_, 1));
                ++i_;
            }
            if (stopped) return true;
        }
        return false;
    }

    // `$NAME`, `${NAME}`, `$?`, `$(...)` or a lone `$`; false for an unclosed `$(`.
    bool dollar(bool quoted) {
        const std::string_view rest = line_.substr(i_ + 1);
        if (rest.starts_with('(')) {
            const std::size_t close = closing_paren(line_, i_ + 2);
            if (close == std::string_view::npos) return false;
            if (at_) {
                const auto text = substitute(line_.substr(i_ + 2, close - i_ - 2), *at_, held_);
                if (!text) stopped = true;
                expansion(text ? *text : std::string(), quoted);
            }
            i_ = close + 1;
            return true;
        }
        if (rest.starts_with('?')) {
            if (at_) expansion(std::to_string(at_->shell.last_status), quoted);
            i_ += 2;
            return true;
        }
        std::string_view name;
        std::size_t length = 1;  // of what follows the `$`
        if (rest.starts_with('{')) {
            const std::size_t close = rest.find('}');
            name = rest.substr(1, close == std::string_view::npos ? 0 : close - 1);
            if (close == std::string_view::npos || !is_shell_name(name)) unsupported = true;  // ${A:-x} and the like
            length = close == std::string_view::npos ? 1 : close + 1;
        } else {
            std::size_t end = 0;
            while (end < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[end])) != 0 || rest[end] == '_')) ++end;
            name = rest.substr(0, end);
            length = end;
        }
        if (name.empty() || length == 0) {
            literal("$");
            ++i_;
            return true;
        }
        if (at_) {
            const auto it = at_->shell.env().find(std::string(name));
            if (it != at_->shell.env().end()) expansion(it->second, quoted);
            if (quoted) in_word_ = true;
        }
        i_ += 1 + length;
        return true;
    }

    std::string_view line_;
    std::size_t i_;
    run_context* at_;  // none: the command is only read past, not run
    std::string word_{};
    bool in_word_ = false;
    std::size_t held_ = 0;
};

int run_command(const command_reader& command, std::string_view source, run_context& at) {
    if (command.words.empty()) return at.shell.last_status;
    if (!command.unsupported) {
        for (const command_row& row : programs) {
            if (row.name == command.words.front()) return row.run(arguments(command.words).subspan(1), at);
        }
    }
    at.print("ran: ");
    at.print(source);
    at.print("\n");
    return 0;
}

// Runs a line's commands in turn: after `a && b` b runs when a succeeded, after `a || b` when
// it failed, after `a; b` always; a skipped command leaves the status as it was. Each byte
// is read once at this depth: looking for each separator apart rescanned the rest of the
// line at every command (40,000 commands: 4 s).
void run_line(std::string_view line, run_context& at) {
    bool runs = true;
    for (std::size_t from = 0; from < line.size() && !at.exiting && !at.full && !at.too_deep;) {
        command_reader command(line, from, runs ? &at : nullptr);
        const auto [next, after] = command.read();
        if (command.syntax_error) {
            at.run.exit_code = at.shell.last_status = at.fail(*command.syntax_error, 2);
            at.exiting = true;  // bash runs nothing of a line it cannot parse
            break;
        }
        if (runs) {
            const std::size_t end = after - (next == joint::end ? 0 : 1);
            const std::size_t start = std::min(line.find_first_not_of(" \t\n", from), end);
            const std::string_view source = line.substr(start, end - start);
            const int status = command.stopped ? 1 : run_command(command, source, at);
            at.run.exit_code = at.shell.last_status = status;
        }
        runs = next == joint::then || next == joint::end || (next == joint::and_then) == (at.shell.last_status == 0);
        from = after;
    }
}

}  // namespace

bool is_shell_name(std::string_view name) noexcept {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front())) != 0) return false;
    return std::all_of(name.begin(), name.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
}

file_reader reader_of(const file_tree& tree) {
    return {.read_file = [&tree](const std::string& path) {
                const auto f = tree.file(path);
                return f ? f->content : nullptr;
            },
            .is_directory = [&tree](const std::string& path) { return tree.is_directory(path); }};
}

simulated_run simulate(std::string_view command, const file_reader& files, shell_state* shell) {
    shell_state scratch;
    simulated_run all;
    run_context at{files, shell ? *shell : scratch, all};
    all.exit_code = at.shell.last_status;
    run_line(command, at);
    if (at.full) all.stderr_text += "ngfail serve: a simulated run prints at most 16 MiB; this one was stopped there\n";
    if (at.full || at.too_deep) all.exit_code = at.shell.last_status = 1;
    return all;
}

}  // namespace ngfail::opensandbox::testing::detail
