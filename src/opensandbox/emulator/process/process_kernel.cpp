#include "opensandbox/emulator/process/process_kernel.hpp"

#include "opensandbox/emulator/process/process_runs.hpp"

#include "text/utf8.hpp"

#include <ngfail/event_id.hpp>

#include <boost/json/parse.hpp>

#include <algorithm>
#include <array>
#include <csignal>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

namespace ngfail::opensandbox::testing::detail {
namespace {

namespace json = boost::json;

// Each driver bounds what its line carries (a result's text, an error's) to 64 Ki characters,
// so that its line stays under `kernel_output::max_line` escaped as JSON.

// Every driver takes its marker out of its argv and writes its own line to a descriptor of
// its own (a copy of stdout made first), so that a cell that closes or redirects its
// stdout, or prints what it reads of its arguments, does not lose or fake the line; a cell
// set on breaking its kernel still can (it runs with the same rights), and the server then
// kills the kernel when an interrupt does not end the cell.

// Python: the cell parsed, its last statement evaluated apart when it is an expression
// (its repr is the result, as a notebook shows it), in the real `__main__`'s namespace (what
// a cell defines pickles, as in Jupyter), the driver's own names kept in a function; any
// exception, KeyboardInterrupt and SystemExit included, is the cell's error, its traceback
// from the cell down. SIGINT is held while a cell is read, so an interrupt never cuts one in half.
constexpr std::string_view python_driver = R"PY(def __ngfail_kernel():
    import ast, json, os, signal, sys, traceback
    marker = sys.argv.pop(1)
    out = os.dup(1)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    names = sys.modules["__main__"].__dict__
    LIMIT = 65536
    def cut(text):
        return text if len(text) <= LIMIT else text[:LIMIT] + "\u2026"
    def cell():
        code = bytearray()
        while not code.endswith(b"\0"):
            piece = os.read(3, 65536)
            if not piece:
                os._exit(0)
            code += piece
        return code[:-1].decode("utf-8", "replace")
    def run(code):
        outcome = {}
        try:
            tree = ast.parse(code, "<cell>")
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, "<cell>", "exec"), names)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), names)
                if value is not None:
                    outcome["result"] = cut(repr(value))
        except BaseException as e:
            outcome["ename"] = type(e).__name__
            outcome["evalue"] = cut(str(e))
            frames = e.__traceback__.tb_next if e.__traceback__ else None
            outcome["traceback"] = cut("".join(traceback.format_exception(type(e), e, frames))).splitlines()
        return outcome
    count = 0
    while True:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        code = cell()
        count += 1
        try:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
            outcome = run(code)
        except KeyboardInterrupt:
            outcome = {"ename": "KeyboardInterrupt", "evalue": "", "traceback": ["KeyboardInterrupt"]}
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        outcome["count"] = count
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        line = ("\n" + marker + json.dumps(outcome) + "\n").encode()
        while line:
            line = line[os.write(out, line):]
__ngfail_kernel()
)PY";

// Bash: each cell `eval`ed in the one shell, so variables, functions and the directory stay;
// inside a loop of one round of its own, so that a cell's `break` or `continue` ends the
// cell, not the driver's loop. An interrupt ends the command the cell runs, and the cell
// then ends with status 130 (what a shell says of a SIGINT).
constexpr std::string_view bash_driver = R"SH(readonly __ngfail_marker=$1
shift
exec {__ngfail_out}>&1
readonly __ngfail_out
__ngfail_count=0
trap '__ngfail_interrupted=1' INT
while :; do
    IFS= read -r -d '' -u 3 __ngfail_code
    __ngfail_read=$?
    if [ "$__ngfail_read" -gt 128 ]; then continue; fi
    if [ "$__ngfail_read" -ne 0 ]; then exit 0; fi
    __ngfail_count=$((__ngfail_count + 1))
    __ngfail_interrupted=
    for __ngfail_once in 1; do eval "$__ngfail_code"; done
    __ngfail_status=$?
    if [ -n "$__ngfail_interrupted" ]; then __ngfail_status=130; fi
    builtin printf '\n%s{"count":%d,"status":%d}\n' "$__ngfail_marker" "$__ngfail_count" "$__ngfail_status" >&"$__ngfail_out"
done
)SH";

// Node: each cell a script in the one global context (`vm.runInThisContext`), whose
// completion value is the result (util.inspect, a promise awaited first); SIGINT breaks a
// running script and is ignored between cells; an error thrown later (a timer's) is
// printed, not the kernel's end. Its line goes out through stdout opened anew.
constexpr std::string_view node_driver = R"JS(const fs = require("fs"), util = require("util"), vm = require("vm");
const marker = process.argv.splice(1, 1)[0];
const out = fs.openSync("/proc/self/fd/1", "w");
const LIMIT = 65536;
const cut = (text) => (text.length <= LIMIT ? text : text.slice(0, LIMIT) + "\u2026");
process.on("SIGINT", () => {});
const report = (e) => process.stderr.write(String((e && e.stack) || e) + "\n");
process.on("uncaughtException", report);
process.on("unhandledRejection", report);
async function run(code) {
    const outcome = {};
    try {
        let value = vm.runInThisContext(code, { filename: "<cell>", breakOnSigint: true });
        if (value && typeof value.then === "function") value = await value;
        if (value !== undefined) outcome.result = cut(util.inspect(value));
    } catch (e) {
        const error = e instanceof Error ? e : { name: "Error", message: String(e), stack: String(e) };
        outcome.ename = String(error.name);
        outcome.evalue = cut(String(error.message));
        outcome.traceback = cut(String(error.stack || "")).split("\n");
    }
    return outcome;
}
let pending = Buffer.alloc(0), busy = false, count = 0;
async function next() {
    let end;
    while (!busy && (end = pending.indexOf(0)) >= 0) {
        busy = true;
        const code = pending.subarray(0, end).toString("utf8");
        pending = pending.subarray(end + 1);
        const outcome = await run(code);
        outcome.count = ++count;
        fs.writeSync(out, "\n" + marker + JSON.stringify(outcome) + "\n");
        busy = false;
    }
}
const input = fs.createReadStream(null, { fd: 3 });
input.on("data", (piece) => { pending = Buffer.concat([pending, piece]); next(); });
input.on("end", () => process.exit(0));
)JS";

struct kernel_kind {
    std::string_view language;
    std::string_view program;
    // How `program` runs the driver given next, then its arguments before the marker (bash -c
    // takes its $0 first).
    std::string_view run_driver;
    std::string_view driver;
    std::string_view before_marker;
};
constexpr std::array kernels{
    kernel_kind{"python", "python3", "python3 -u -c", python_driver, ""},
    kernel_kind{"bash", "bash", "bash --noprofile --norc -c", bash_driver, "ngfail-kernel "},
    kernel_kind{"javascript", "node", "node -e", node_driver, ""},
};

const kernel_kind* kind_of(std::string_view language) noexcept {
    for (const kernel_kind& k : kernels) {
        if (k.language == language) return &k;
    }
    return nullptr;
}

std::optional<std::string> string_at(const json::object& o, std::string_view name) {
    const json::value* v = o.if_contains(name);
    if (!v || !v->is_string()) return std::nullopt;
    return std::string(v->as_string());
}

}  // namespace

std::optional<std::string_view> kernel_program(std::string_view language) noexcept {
    const kernel_kind* k = kind_of(language);
    return k ? std::optional(k->program) : std::nullopt;
}

bool has_process_kernel(std::string_view language) {
    const auto program = kernel_program(language);
    if (!program) return false;
    for (const std::string_view folder : {"/usr/local/bin/", "/usr/bin/"}) {
        if (::access((std::string(folder) + std::string(*program)).c_str(), X_OK) == 0) return true;
    }
    return false;
}

process_command kernel_command(std::string_view language, std::string_view marker, std::string cwd) {
    constexpr kernel_kind none{"", "", "false", "", ""};  // never asked for: the callers check the language
    const kernel_kind* found = kind_of(language);
    const kernel_kind& k = found ? *found : none;
    std::string line = "exec " + std::string(k.run_driver) + " " + single_quoted(k.driver) + " " +
                       std::string(k.before_marker) + single_quoted(marker) + " 3<&0 </dev/null";
    return {.command = std::move(line), .cwd = std::move(cwd), .streams = process_streams::with_stdin};
}

std::optional<cell_outcome> outcome_of(std::string_view text) noexcept {
    try {
        json::error_code ec;
        const json::value v = json::parse(text, ec);
        const json::object* o = ec ? nullptr : v.if_object();
        const json::value* count = o ? o->if_contains("count") : nullptr;
        if (!count || !count->is_int64()) return std::nullopt;
        cell_outcome outcome{.execution_count = static_cast<int>(count->as_int64())};
        outcome.result = string_at(*o, "result");
        if (const json::value* status = o->if_contains("status"); status && status->is_int64() && status->as_int64() != 0) {
            outcome.raised = raised_error{"", std::to_string(status->as_int64()), {}};
        }
        if (auto name = string_at(*o, "ename")) {
            raised_error raised{std::move(*name), string_at(*o, "evalue").value_or(""), {}};
            if (const json::value* lines = o->if_contains("traceback"); lines && lines->is_array()) {
                for (const json::value& line : lines->as_array()) {
                    if (line.is_string()) raised.traceback.emplace_back(line.as_string());
                }
            }
            outcome.raised = std::move(raised);
        }
        return outcome;
    } catch (...) {  // out of memory
        return std::nullopt;
    }
}

bool kernel_output::may_begin_marker(std::string_view bytes) const noexcept {
    const std::size_t n = std::min(bytes.size(), marker_.size());
    return bytes.substr(0, n) == std::string_view(marker_).substr(0, n);
}

std::vector<std::string> kernel_output::add(bool is_stdout, std::string_view bytes) {
    std::vector<std::string> events;
    stream& s = is_stdout ? out_ : err_;
    s.pending += bytes;
    std::size_t start = 0;
    for (std::size_t end; (end = s.pending.find('\n', start)) != std::string::npos; start = end + 1) {
        take_line(is_stdout, s.pending.substr(start, end + 1 - start), events);
    }
    s.pending.erase(0, start);
    // A held line followed by what cannot be the kernel's line was the cell's own.
    if (s.held && !s.pending.empty() && !may_begin_marker(s.pending)) events.push_back(*std::exchange(s.held, std::nullopt));
    if (s.pending.size() >= max_line) {
        if (s.held) events.push_back(*std::exchange(s.held, std::nullopt));
        std::size_t cut = text::complete_prefix(s.pending);
        if (cut == 0) cut = s.pending.size();
        events.push_back(s.pending.substr(0, cut));
        s.pending.erase(0, cut);
    }
    return events;
}

void kernel_output::take_line(bool is_stdout, std::string line, std::vector<std::string>& events) {
    if (!is_stdout) {
        events.push_back(std::move(line));
        return;
    }
    if (outcome_) return;  // what a process the cell left running prints after it: not this cell's
    if (line.starts_with(marker_)) {
        if (auto outcome = outcome_of(std::string_view(line).substr(marker_.size(), line.size() - marker_.size() - 1))) {
            outcome_ = std::move(outcome);
            // The newline that ends the held line was the kernel's.
            if (out_.held && out_.held->size() > 1) events.push_back(out_.held->substr(0, out_.held->size() - 1));
            out_.held.reset();
            return;
        }
    }
    if (out_.held) events.push_back(*std::exchange(out_.held, std::nullopt));
    out_.held = std::move(line);
}

std::vector<std::string> kernel_output::idle(bool is_stdout) {
    std::vector<std::string> events;
    stream& s = is_stdout ? out_ : err_;
    // The start of the kernel's line may have come without its end: it goes nowhere.
    if (is_stdout && !s.pending.empty() && may_begin_marker(s.pending)) return events;
    if (s.held) events.push_back(*std::exchange(s.held, std::nullopt));
    const std::size_t ready = text::complete_prefix(s.pending);
    if (ready > 0) {
        events.push_back(s.pending.substr(0, ready));
        s.pending.erase(0, ready);
    }
    return events;
}

std::vector<std::string> kernel_output::finish(bool is_stdout) {
    std::vector<std::string> events;
    stream& s = is_stdout ? out_ : err_;
    if (s.held) events.push_back(*std::exchange(s.held, std::nullopt));
    if (!s.pending.empty() && !(is_stdout && outcome_)) events.push_back(std::move(s.pending));
    s.pending.clear();
    return events;
}

process_kernel::process_kernel(std::shared_ptr<process_sandbox> box, std::string language, std::string cwd,
                               std::unique_ptr<process_runtime::held_place> place)
    : box_(std::move(box)), language_(std::move(language)), cwd_(std::move(cwd)),
      marker_("__ngfail_kernel_" + to_string(event_id::generate()) + ":"), place_(std::move(place)) {}

bool process_kernel::started(const process_sandbox::started& process) {
    const std::lock_guard lock(mutex_);
    process_ = process;
    if (!dead_) return true;
    release_locked(true);
    return false;
}

bool process_kernel::is_started() const {
    const std::lock_guard lock(mutex_);
    return process_.has_value();
}

std::optional<process_sandbox::started> process_kernel::streams() const {
    const std::lock_guard lock(mutex_);
    if (!process_ || dead_) return std::nullopt;
    process_sandbox::started copy{.id = process_->id};
    std::array<std::pair<int, int*>, 4> fds{{{process_->stdin_fd, &copy.stdin_fd},
                                             {process_->stdout_fd, &copy.stdout_fd},
                                             {process_->stderr_fd, &copy.stderr_fd},
                                             {process_->exit_fd, &copy.exit_fd}}};
    for (auto& [from, to] : fds) {
        if ((*to = ::fcntl(from, F_DUPFD_CLOEXEC, 0)) >= 0) continue;
        const int error = errno;
        for (auto& [_, made] : fds) {
            if (*made >= 0) ::close(*made);
        }
        throw std::system_error(error, std::generic_category(), "dup");
    }
    return copy;
}

bool process_kernel::dead() const {
    const std::lock_guard lock(mutex_);
    return dead_;
}

bool process_kernel::has_ended() const {
    const std::lock_guard lock(mutex_);
    if (!process_ || dead_) return false;
    pollfd exit{.fd = process_->exit_fd, .events = POLLIN, .revents = 0};
    return ::poll(&exit, 1, 0) == 1;
}

std::optional<int> process_kernel::reap() {
    const std::lock_guard lock(mutex_);  // a kill's `forget` cannot come between
    if (!process_ || dead_) return std::nullopt;
    const int status = box_->wait_status(process_->id);  // at once: its exit has come
    release_locked(false);
    return status;
}

void process_kernel::release(bool kill) noexcept {
    const std::lock_guard lock(mutex_);
    release_locked(kill);
}

void process_kernel::release_locked(bool kill) noexcept {
    dead_ = true;
    if (!process_) return;
    if (kill) {
        try {
            box_->signal(process_->id, SIGKILL);
            box_->forget(process_->id);
        } catch (...) {  // out of memory: the sandbox's end kills it
        }
    }
    for (const int fd : {process_->stdin_fd, process_->stdout_fd, process_->stderr_fd, process_->exit_fd}) {
        if (fd >= 0) ::close(fd);
    }
    process_.reset();
}

process_kernel::~process_kernel() { kill(); }

}  // namespace ngfail::opensandbox::testing::detail
