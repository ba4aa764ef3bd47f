// ngfail sandbox create|exec|files|terminal|diagnostics|kill --server URL [--api-key K] [--json] …
// Any OpenSandbox server (the real one or `ngfail serve`) driven through ngfail's client, as
// `opensandbox-cli` drives one for Python users: results on stdout, a failure as its kind,
// delivery, evidence row and chain.
#include "args.hpp"
#include "failure_summary.hpp"
#include "telemetry.hpp"
#include "tree.hpp"

#include <ngfail/json.hpp>
#include <ngfail/one_line.hpp>
#include <ngfail/opensandbox/client.hpp>
#include <ngfail/request_failure_log.hpp>

#include <boost/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

namespace ngfail::cli {
namespace {

namespace os = opensandbox;
namespace json = boost::json;

// What every action is given: the client, its arguments and where it prints.
struct session {
    os::client& sandboxes;
    const parsed_args& args;
    arguments given;          // the options as given (files reads them again, by its action's)
    arguments command_words;  // what follows `--` (exec's command)
    const streams& io;
    std::string action;       // "exec", "files get", …: messages name it

    [[nodiscard]] bool json() const { return args.has("json"); }
    [[nodiscard]] const std::string& sandbox_id() const { return args.positionals.front(); }

    int bad_input(std::string_view problem) const {
        io.err << "ngfail sandbox " << action << ": " << problem << '\n';
        return exit_bad_input;
    }
    // A classified failure: with --json its report on stdout (what `ngfail decode --json`
    // prints), else its summary and chain on stderr.
    int failed(const failure& f) const {
        if (json()) {
            io.out << to_json(report_for(f)) << '\n';
            return exit_failure;
        }
        const style s = style::for_stderr();
        io.err << "ngfail sandbox " << action << ": failed\n";
        print_failure_summary(io.err, f, s);
        print_report_tree(io.err, report_for(f), s);
        return exit_failure;
    }
    // --OPTION's whole number above 0 into `to` (kept when not given); false once it has
    // said what is wrong.
    bool count_of(std::string_view option, std::optional<int>& to) const {
        const auto text = args.value(option);
        if (!text) return true;
        const auto n = to_int(*text);
        if (!n || *n <= 0) {
            bad_input("--" + std::string(option) + " takes a whole number above 0, not '" + one_line(*text, 32) + "'");
            return false;
        }
        to = *n;
        return true;
    }
    // Every KEY=VALUE of a repeatable --OPTION into `to` (a later key wins); false once it has
    // said what is wrong, quoting none of them (an --env value may be a secret).
    bool pairs_of(std::string_view option, std::map<std::string, std::string>& to) const {
        for (const std::string& text : args.all(option)) {
            const auto eq = text.find('=');
            if (eq == 0 || eq == std::string::npos) {
                bad_input("--" + std::string(option) + " takes KEY=VALUE");
                return false;
            }
            to[text.substr(0, eq)] = text.substr(eq + 1);
        }
        return true;
    }
    int print(const json::value& v) const {
        io.out << serialize_ascii(v) << '\n';
        return exit_ok;
    }
    // A note for people beside a result (stdout keeps the result alone, for `$(…)`).
    void note(std::string_view text) const { io.err << "ngfail sandbox " << action << ": " << text << '\n'; }
};

// ---- arguments ------------------------------------------------------------------------------

// Options every action takes.
arg_spec with_common(arg_spec spec) {
    spec.with_value.insert({"server", "api-key"});
    spec.flags.insert({"json", "use-server-proxy", "no-failure-diagnostics"});
    return spec;
}

// ---- results as JSON ------------------------------------------------------------------------

void put_optional(json::object& o, std::string_view key, const std::optional<std::string>& value) {
    if (value) o[key] = *value;
}

json::object sandbox_json(const os::sandbox_info& box) {
    json::object o{{"id", box.id}, {"state", box.state}};
    put_optional(o, "reason", box.reason);
    put_optional(o, "expires_at", box.expires_at);
    put_optional(o, "snapshot_id", box.snapshot_id);
    json::object metadata;
    for (const auto& [k, v] : box.metadata) metadata[k] = v;
    o["metadata"] = std::move(metadata);
    return o;
}

json::object entry_json(const os::entry_info& e) {
    return {{"path", e.path},   {"type", e.type},   {"size", e.size},
            {"mode", e.mode},   {"owner", e.owner}, {"group", e.group},
            {"modified_at", e.modified_at}, {"created_at", e.created_at}};
}

json::value exit_code_json(const std::optional<int>& code) {
    return code ? json::value(*code) : json::value(nullptr);
}

// ---- create ---------------------------------------------------------------------------------

int create(const session& s) {
    os::create_request request{.image = s.args.value("image").value_or(std::string(os::default_image))};
    if (auto words = s.args.all("entrypoint"); !words.empty()) request.entrypoint = std::move(words);
    if (!s.count_of("timeout", request.timeout_s)) return exit_bad_input;
    if (!s.pairs_of("metadata", request.metadata) || !s.pairs_of("resource", request.resource_limits)) return exit_bad_input;
    const auto made = s.sandboxes.try_create(request);
    if (!made) return s.failed(made.error());
    const os::sandbox_info& box = made.value();
    if (s.json()) return s.print(sandbox_json(box));
    s.io.out << one_line(box.id) << '\n';
    s.note(one_line(box.id) + " is " + one_line(box.state) + (box.expires_at ? ", expires at " + one_line(*box.expires_at) : ""));
    return exit_ok;
}

// ---- exec -----------------------------------------------------------------------------------

// The words after `--` as one command line, joined by blanks as ssh joins them: bash reads it.
std::string command_line(arguments words) {
    std::string line;
    for (const std::string_view w : words) line.append(line.empty() ? "" : " ").append(w);
    return line;
}

constexpr std::size_t max_cli_body_bytes = std::size_t{256} << 20;

int exec(const session& s) {
    const auto given = s.args.value("command");
    if (given.has_value() == !s.command_words.empty()) return s.bad_input("give the command after -- or as --command, once");
    os::command cmd{.command = given ? *given : command_line(s.command_words), .cwd = s.args.value("cwd")};
    if (cmd.command.empty()) return s.bad_input("the command is empty");
    if (!s.pairs_of("env", cmd.envs)) return exit_bad_input;
    std::optional<int> seconds;
    if (!s.count_of("timeout", seconds)) return exit_bad_input;
    // The whole run: the start's request too (a stalled server), not only the stream's time.
    os::call_options within;
    if (seconds) cmd.total_timeout = within.timeout = std::chrono::seconds(*seconds);
    const bool detached = s.args.has("detached");
    if (detached) cmd.detached = true;
    // Output as it arrives, each stream to its own; with --json it is in the result instead.
    if (!s.json()) {
        cmd.on_stdout = [&](std::string_view bytes) { s.io.out.write(bytes.data(), std::ssize(bytes)).flush(); };
        cmd.on_stderr = [&](std::string_view bytes) { s.io.err.write(bytes.data(), std::ssize(bytes)).flush(); };
    }
    const auto ran = s.sandboxes.try_exec(s.sandbox_id(), cmd, within);
    if (!ran) return s.failed(ran.error());
    const os::exec_result& r = ran.value();
    if (s.json()) {
        json::object o{{"sandbox_id", s.sandbox_id()}, {"execution_id", r.execution_id},
                       {"exit_code", exit_code_json(r.exit_code)}, {"stdout", r.stdout_text},
                       {"stderr", r.stderr_text}, {"output_truncated", r.output_truncated}, {"detached", detached}};
        put_optional(o, "error", r.error_value);
        return s.print(o);
    }
    s.note(r.exit_code ? "exit code " + std::to_string(*r.exit_code)
                       : "exit code unknown" + (r.error_value ? " (" + one_line(*r.error_value) + ")" : std::string()));
    return exit_ok;
}

// ---- files ----------------------------------------------------------------------------------

using operands = std::span<const std::string>;

int list_files(const session& s, operands paths) {
    std::optional<int> depth = 1;
    if (!s.count_of("depth", depth)) return exit_bad_input;
    const auto listed = s.sandboxes.try_list_directory(s.sandbox_id(), paths.front(), *depth);
    if (!listed) return s.failed(listed.error());
    if (s.json()) {
        json::array entries;
        for (const auto& e : listed.value()) entries.push_back(entry_json(e));
        return s.print(entries);
    }
    for (const auto& e : listed.value()) {
        s.io.out << one_line(e.type, 16) << '\t' << e.size << '\t' << e.mode << '\t' << one_line(e.modified_at, 40)
                 << '\t' << one_line(e.path, 4096) << '\n';
    }
    return exit_ok;
}

int get_file(const session& s, operands paths) {
    const std::string& remote = paths.front();
    const auto local = s.args.value("out");
    const auto got = s.sandboxes.try_download(s.sandbox_id(), remote);
    if (!got) return s.failed(got.error());
    const std::string& content = got.value();
    if (local) {
        std::ofstream file(*local, std::ios::binary);
        if (!file.write(content.data(), std::ssize(content)).flush()) return s.bad_input("cannot write '" + one_line(*local) + "'");
    }
    if (s.json()) {
        json::object o{{"path", remote}, {"size", content.size()}};
        if (local) {
            o["out"] = *local;
        } else {
            o["content"] = content;
        }
        return s.print(o);
    }
    if (!local) s.io.out.write(content.data(), std::ssize(content)).flush();
    return exit_ok;
}

int put_file(const session& s, operands paths) {
    const std::string& local = paths[0];
    const std::string& remote = paths[1];
    // Read with read(2), whose errors (a directory, a closed stdin) a stream would swallow
    // into an empty upload.
    const int fd = local == "-" ? STDIN_FILENO : ::open(local.c_str(), O_RDONLY | O_CLOEXEC);
    std::string content;
    bool read_whole = fd >= 0;
    for (std::array<char, 1 << 16> block{}; read_whole;) {
        const ssize_t n = ::read(fd, block.data(), block.size());
        if (n == 0) break;
        if (n < 0 && errno == EINTR) continue;
        read_whole = n > 0 && content.size() + static_cast<std::size_t>(n) <= max_cli_body_bytes;
        if (read_whole) content.append(block.data(), static_cast<std::size_t>(n));
    }
    if (fd >= 0 && fd != STDIN_FILENO) ::close(fd);
    if (!read_whole) return s.bad_input("cannot read '" + one_line(local) + "' (or it is over 256 MiB)");
    const auto put = s.sandboxes.try_upload(s.sandbox_id(), remote, content);
    if (!put) return s.failed(put.error());
    return s.json() ? s.print({{"path", remote}, {"size", content.size()}}) : exit_ok;
}

int remove_files(const session& s, operands paths) {
    const std::vector<std::string> all(paths.begin(), paths.end());
    const auto removed = s.args.has("recursive") ? s.sandboxes.try_delete_directories(s.sandbox_id(), all)
                                                 : s.sandboxes.try_delete_files(s.sandbox_id(), all);
    if (!removed) return s.failed(removed.error());
    return s.json() ? s.print({{"removed", json::array(all.begin(), all.end())}}) : exit_ok;
}

int make_directories(const session& s, operands paths) {
    const std::vector<std::string> all(paths.begin(), paths.end());
    const auto made = s.sandboxes.try_create_directories(s.sandbox_id(), all);
    if (!made) return s.failed(made.error());
    return s.json() ? s.print({{"created", json::array(all.begin(), all.end())}}) : exit_ok;
}

struct file_action {
    std::string_view name;
    arg_spec spec;  // beyond the common options
    std::size_t fewest, most;  // operands after ID and the action's name
    std::string_view shape;  // what they are, for a message
    int (*run)(const session&, operands);
};

const std::array<file_action, 5>& file_actions() {
    static const std::array<file_action, 5> table{{
        {"ls", {.with_value = {"depth"}}, 1, 1, "PATH", list_files},
        {"get", {.with_value = {"out"}}, 1, 1, "REMOTE", get_file},
        {"put", {}, 2, 2, "LOCAL REMOTE", put_file},
        {"rm", {.flags = {"recursive"}}, 1, 256, "PATH...", remove_files},
        {"mkdir", {}, 1, 256, "PATH...", make_directories},
    }};
    return table;
}

// Every option any file action takes: enough to find the action among the positionals.
arg_spec any_file_action() {
    arg_spec all{.max_positionals = 2 + 256};
    for (const file_action& f : file_actions()) {
        all.with_value.insert(f.spec.with_value.begin(), f.spec.with_value.end());
        all.flags.insert(f.spec.flags.begin(), f.spec.flags.end());
    }
    return all;
}

std::string file_action_names() {
    std::string names;
    for (const file_action& f : file_actions()) names += (names.empty() ? "" : ", ") + std::string(f.name);
    return names;
}

// `files ID ACTION …`: the arguments are read again with the action's own options.
int files(const session& s) {
    if (s.args.positionals.size() < 2) return s.bad_input("give ID and one of " + file_action_names());
    const std::string& name = s.args.positionals[1];
    const auto f = std::ranges::find(file_actions(), std::string_view(name), &file_action::name);
    if (f == file_actions().end()) return s.bad_input("unknown action '" + one_line(name, 32) + "'; one of " + file_action_names());
    arg_spec spec = with_common(f->spec);
    spec.max_positionals = 2 + f->most;
    const std::string action = "files " + std::string(f->name);
    const auto parsed = parse_or_complain("sandbox " + action, s.given, spec, s.io);
    if (!parsed) return exit_bad_input;
    const session own{s.sandboxes, *parsed, s.given, s.command_words, s.io, action};
    const operands given = std::span(parsed->positionals).subspan(2);
    if (given.size() < f->fewest) return own.bad_input("takes ID " + std::string(f->name) + " " + std::string(f->shape));
    return f->run(own, given);
}

// ---- terminal -------------------------------------------------------------------------------

// What a terminal printed, kept for --json up to what the client keeps of a command's output.
struct kept_output {
    std::size_t limit = os::client_options{}.max_body_bytes;
    std::string text{};
    bool truncated = false;

    void add(std::string_view bytes) {
        const std::size_t room = limit - std::min(text.size(), limit);
        truncated = truncated || bytes.size() > room;
        text.append(bytes.substr(0, room));
    }
};

// Types each line of stdin into the terminal (`enter` after it), and `exit` at its end, until
// the terminal has ended; stdin is polled so that an ended terminal is noticed.
void type_lines(os::terminal_session& term, const std::atomic<bool>& ended, std::string_view enter) {
    std::string pending;
    std::array<char, 4096> buffer{};
    const auto type = [&](std::string_view line) { return term.try_write(std::string(line).append(enter)).has_value(); };
    while (!ended) {
        pollfd input{.fd = STDIN_FILENO, .events = POLLIN, .revents = 0};
        const int ready = ::poll(&input, 1, 100);
        if (ready == 0 || (ready < 0 && errno == EINTR)) continue;
        const ssize_t n = ready < 0 ? 0 : ::read(STDIN_FILENO, buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {  // the end of stdin (or an error reading it) ends the shell
            if (!pending.empty() && !type(pending)) return;
            (void)type("exit");
            return;
        }
        pending.append(buffer.data(), static_cast<std::size_t>(n));
        for (auto end = pending.find('\n'); end != std::string::npos; end = pending.find('\n')) {
            std::string_view line(pending.data(), end);
            if (line.ends_with('\r')) line.remove_suffix(1);
            if (!type(line)) return;
            pending.erase(0, end + 1);
        }
    }
}

int terminal(const session& s) {
    const auto given = s.args.value("terminal-id");
    if (given && s.args.value("cwd")) return s.bad_input("--cwd is for a new terminal, not one given by --terminal-id");
    const bool pipe = s.args.has("pipe");
    std::string id;
    if (given) {
        id = *given;
    } else {
        os::terminal_request request{.cwd = s.args.value("cwd")};
        auto made = s.sandboxes.try_create_terminal(s.sandbox_id(), request);
        if (!made) return s.failed(made.error());
        id = std::move(made).value();
    }
    auto attached = s.sandboxes.try_attach_terminal(s.sandbox_id(), id, {.pipe = pipe});
    if (!attached) {
        if (!given) (void)s.sandboxes.try_delete_terminal(s.sandbox_id(), id);  // none is left behind unused
        return s.failed(attached.error());
    }
    os::terminal_session& term = attached.value();
    if (!s.json()) s.note("terminal " + one_line(id) + " (" + one_line(term.mode()) + ")");

    std::atomic<bool> ended{false};
    std::thread typist([&] { type_lines(term, ended, pipe ? "\n" : "\r"); });
    kept_output out, err;
    std::optional<int> exit_code;
    failure lost;
    while (!exit_code && !lost) {
        auto event = term.try_read();
        if (!event) {
            lost = event.error();
        } else if (const auto* done = std::get_if<os::terminal_exit>(&event.value())) {
            exit_code = done->exit_code;
        } else {
            const auto& o = std::get<os::terminal_output>(event.value());
            const bool to_err = o.stream == os::terminal_stream::stderr_bytes;
            if (s.json()) {
                (to_err ? err : out).add(o.bytes);
            } else {
                (to_err ? s.io.err : s.io.out).write(o.bytes.data(), std::ssize(o.bytes)).flush();
            }
        }
    }
    ended = true;
    typist.join();
    if (lost) return s.failed(lost);
    // A terminal this command made goes with its shell; one given by --terminal-id stays.
    if (!given) (void)s.sandboxes.try_delete_terminal(s.sandbox_id(), id);
    if (s.json()) {
        return s.print({{"sandbox_id", s.sandbox_id()}, {"terminal_id", id}, {"exit_code", *exit_code},
                        {"stdout", out.text}, {"stderr", err.text},
                        {"output_truncated", out.truncated || err.truncated}});
    }
    s.note("exit code " + std::to_string(*exit_code));
    return exit_ok;
}

// ---- diagnostics ----------------------------------------------------------------------------

int diagnostics(const session& s) {
    const std::string kind = s.args.value("kind").value_or("logs");
    if (kind != "logs" && kind != "events") return s.bad_input("--kind is logs or events, not '" + one_line(kind, 32) + "'");
    const std::string scope = s.args.value("scope").value_or("all");
    if (scope.empty()) return s.bad_input("--scope is empty");
    const auto got = kind == "logs" ? s.sandboxes.try_diagnostic_logs(s.sandbox_id(), scope)
                                    : s.sandboxes.try_diagnostic_events(s.sandbox_id(), scope);
    if (!got) return s.failed(got.error());
    const os::diagnostic_content& d = got.value();
    if (s.json()) {
        json::object o{{"sandbox_id", d.sandbox_id}, {"kind", d.kind},       {"scope", d.scope},
                       {"delivery", d.delivery},     {"content_type", d.content_type}, {"truncated", d.truncated},
                       {"warnings", json::array(d.warnings.begin(), d.warnings.end())}};
        put_optional(o, "content", d.content);
        put_optional(o, "content_url", d.content_url);
        if (d.content_length) o["content_length"] = *d.content_length;
        put_optional(o, "expires_at", d.expires_at);
        return s.print(o);
    }
    // The text as it came, as `files get` gives a file; a URL delivery is named, not followed.
    if (d.content) s.io.out.write(d.content->data(), std::ssize(*d.content)).flush();
    if (d.content_url) {
        s.io.out << one_line(*d.content_url, 8192) << '\n';
        if (d.expires_at) s.note("the URL is valid until " + one_line(*d.expires_at, 64));
    }
    if (d.truncated) s.note("the server cut the text short");
    for (const std::string& warning : d.warnings) s.note("warning: " + one_line(warning));
    return exit_ok;
}

// ---- kill -----------------------------------------------------------------------------------

int kill(const session& s) {
    request_failure_log log;
    const auto killed = s.sandboxes.try_kill(s.sandbox_id(), {.log = &log});
    if (!killed) return s.failed(killed.error());
    // The client counts a sandbox the server says is gone as killed, and logs that answer.
    const auto observed = log.finish();
    const bool already_gone = std::ranges::any_of(
        observed.events, [](const auto& e) { return e.second.code == kind::provider_sandbox_lost; });
    if (s.json()) return s.print({{"sandbox_id", s.sandbox_id()}, {"killed", true}, {"already_gone", already_gone}});
    s.io.out << one_line(s.sandbox_id()) << '\n';
    if (already_gone) s.note(one_line(s.sandbox_id()) + " was already gone");
    return exit_ok;
}

// ---- the actions ----------------------------------------------------------------------------

struct action {
    std::string_view name;
    arg_spec spec;  // beyond the common options
    int (*run)(const session&);
};

const std::array<action, 6>& actions() {
    static const std::array<action, 6> table{{
        {"create", {.with_value = {"image", "timeout", "metadata", "resource", "entrypoint"}}, create},
        {"exec", {.with_value = {"command", "cwd", "env", "timeout"}, .flags = {"detached"}, .max_positionals = 1}, exec},
        {"files", any_file_action(), files},
        {"terminal", {.with_value = {"terminal-id", "cwd"}, .flags = {"pipe"}, .max_positionals = 1}, terminal},
        {"diagnostics", {.with_value = {"kind", "scope"}, .max_positionals = 1}, diagnostics},
        {"kill", {.max_positionals = 1}, kill},
    }};
    return table;
}

std::string action_names() {
    std::string names;
    for (const action& a : actions()) names += (names.empty() ? "" : ", ") + std::string(a.name);
    return names;
}

}  // namespace

int run_sandbox(arguments args, const streams& io) {
    const std::string_view name = args.empty() ? std::string_view{} : args.front();
    const auto a = std::ranges::find(actions(), name, &action::name);
    if (a == actions().end()) {
        io.err << "ngfail sandbox: give one of " << action_names() << " (see 'ngfail sandbox --help')\n";
        return exit_bad_input;
    }
    const std::string command = "sandbox " + std::string(a->name);
    // What follows `--` is exec's command, never options.
    const auto rest = args.subspan(1);
    const auto split = std::ranges::find(rest, std::string_view{"--"});
    const arguments options(rest.begin(), split);
    const arguments words = split == rest.end() ? arguments{} : arguments(split + 1, rest.end());
    if (split != rest.end() && a->name != "exec") {
        io.err << "ngfail " << command << ": '--' comes before a command, for exec only\n";
        return exit_bad_input;
    }
    const auto parsed = parse_or_complain(command, options, with_common(a->spec), io);
    if (!parsed) return exit_bad_input;
    const auto complain = [&](std::string_view problem) {
        io.err << "ngfail " << command << ": " << problem << '\n';
        return exit_bad_input;
    };
    if (a->name != "create" && parsed->positionals.empty()) return complain("give the sandbox's ID");
    // (an option misspelt with one dash is refused above, never sent as an id)
    if (a->name != "create" && parsed->positionals.front().empty()) return complain("the sandbox's ID is empty");
    const auto server = parsed->value("server");
    if (!server || server->empty()) return complain("--server URL is required (the OpenSandbox server, http://host:port)");
    // The environment keeps the key out of the process list, as the official SDKs read it.
    std::string key;
    if (const char* from_env = std::getenv("OPEN_SANDBOX_API_KEY")) key = from_env;
    if (const auto given = parsed->value("api-key")) key = *given;

    // A person reads what comes out: a failure the evidence leaves ambiguous brings the
    // server's diagnostics with it (two more requests, after a failure only).
    // Files are held whole in memory on their way (256 MiB at most, where the library's
    // default is 8 MiB for replies).
    // With OTEL_EXPORTER_OTLP_ENDPOINT set, the call's span and metrics go there, exported
    // before the command exits (`telemetry` ends after the client).
    const auto exported = telemetry::start("ngfail", false, io.err);
    os::client sandboxes({.base_url = *server,
                          .api_key = std::move(key),
                          .max_body_bytes = max_cli_body_bytes,
                          .use_server_proxy = parsed->has("use-server-proxy"),
                          .failure_diagnostics = {.fetch = !parsed->has("no-failure-diagnostics")},
                          .observer = exported ? exported->client_observer() : nullptr});
    const int status = a->run({sandboxes, *parsed, options, words, io, std::string(a->name)});
    // A result that could not be written is not done (a full disk, a closed pipe).
    if (!io.out.flush() && status != exit_bad_input) return complain("the output could not be written");
    return status;
}

std::string sandbox_usage() {
    return "usage: ngfail sandbox ACTION ... --server URL [--api-key K] [--use-server-proxy] [--json]\n"
           "\n"
           "Drives an OpenSandbox server (a real one, or `ngfail serve`) through ngfail's client.\n"
           "\n"
           "  create [--image IMG] [--timeout S] [--metadata K=V]... [--resource K=V]...\n"
           "         [--entrypoint WORD]...\n"
           "      Creates a sandbox and waits until it is ready; prints its id (its state on\n"
           "      stderr). --timeout: its lifetime in seconds; --resource: cpu=1, memory=1Gi;\n"
           "      --entrypoint: one word of its main process each (default tail -f /dev/null).\n"
           "  exec ID [--detached] [--timeout S] [--cwd DIR] [--env K=V]... (-- WORD... | --command TEXT)\n"
           "      Runs a command (bash -c; the words after -- joined by blanks, as ssh joins them):\n"
           "      its stdout to stdout and its stderr to stderr as they come, then 'exit code N' on\n"
           "      stderr. A command that ran is a success, whatever its exit code (with --json, read\n"
           "      exit_code). --detached starts it in the background and follows its log and status\n"
           "      to the end, so a cut connection loses no command (its stdout and stderr come as one\n"
           "      stream, on stdout). --timeout: the whole run may take S seconds.\n"
           "  files ID ls PATH [--depth N] | get REMOTE [--out LOCAL] | put LOCAL REMOTE\n"
           "           | rm PATH... [--recursive] | mkdir PATH...\n"
           "      Lists a directory (type, size, mode, modified, path; tab-separated), reads a file\n"
           "      (to stdout, or to LOCAL), writes one (LOCAL '-' is stdin), removes files (with\n"
           "      --recursive, directories and all they hold), makes directories (mkdir -p).\n"
           "  terminal ID [--terminal-id T | --cwd DIR] [--pipe]\n"
           "      A shell in the sandbox: each line of stdin is typed into it and its output goes\n"
           "      to stdout; at the end of stdin 'exit' is typed, and the shell's exit code follows\n"
           "      on stderr. A new terminal is made (and deleted when its shell ends) unless\n"
           "      --terminal-id names one. --pipe: pipes instead of a PTY (no echo, stderr apart).\n"
           "  diagnostics ID [--kind logs|events] [--scope S]\n"
           "      The server's logs (default) or events of the sandbox, as text for people (the\n"
           "      diagnostics API; --scope: all, the default, or one the server names: container,\n"
           "      lifecycle, runtime, ...). A server that hands a URL instead prints the URL.\n"
           "  kill ID\n"
           "      Deletes the sandbox and prints its id; one the server says is already gone counts\n"
           "      as killed.\n"
           "\n"
           "--server is the server's URL (http://host:port[/prefix], or https://...). The API key is\n"
           "--api-key or the environment's OPEN_SANDBOX_API_KEY; it is never printed.\n"
           "--use-server-proxy reaches the sandbox through the server, not its own endpoint.\n"
           "A failure the evidence leaves ambiguous (a 5xx on create, a cut stream) comes with the\n"
           "server's diagnostics around it; --no-failure-diagnostics spares those two requests.\n"
           "--json prints one JSON document on stdout: the result, or on a failure the failure's\n"
           "report, as `ngfail decode --json` prints it.\n"
           "With OTEL_EXPORTER_OTLP_ENDPOINT set, each call's span (its attempts as children) and\n"
           "metrics go there over OTLP/HTTP before it exits (docs/fleet.md).\n"
           "\n"
           "Exit status: 0 done; 1 a classified failure, printed on stderr as its kind, delivery,\n"
           "the evidence table's row that decided it (rule) and its chain; 2 bad arguments.\n";
}

}  // namespace ngfail::cli
