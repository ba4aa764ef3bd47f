// ngfail serve [--host H] [--port N] [--api-key K] [--backend kubernetes|docker]
//              [--runtime simulated|process] [--state-dir DIR]
//              [--pending-ms N] [--transition-ms N] [--tls-cert PEM --tls-key PEM] [--fault JSON]...
//              [--no-diagnostics] [--otlp]
#include "args.hpp"
#include "telemetry.hpp"

#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <csignal>
#include <memory>
#include <cstdlib>
#include <ostream>
#include <pthread.h>

namespace ngfail::cli {
namespace {

const arg_spec spec{
    .with_value = {"host", "port", "api-key", "backend", "runtime", "state-dir", "pending-ms", "transition-ms", "fault",
                   "tls-cert", "tls-key"},
    .flags = {"no-diagnostics", "otlp"}};

bool is_loopback(std::string_view host) {
    return host == "localhost" || host.starts_with("127.") || host == "::1" || host == "[::1]";
}

// SIGINT and SIGTERM are blocked in every thread and taken here, so the server stops cleanly.
int wait_for_a_stop_signal() {
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    int received = 0;
    ::sigwait(&stop_signals, &received);
    return received;
}

void block_stop_signals() {
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
}

std::optional<opensandbox::testing::server_options> options_of(const parsed_args& a, const streams& io) {
    opensandbox::testing::server_options options{.host = a.value("host").value_or("127.0.0.1")};
    const auto complain = [&](std::string_view what) {
        io.err << "ngfail serve: " << what << '\n';
        return std::nullopt;
    };
    if (const auto port = a.value("port")) {
        const auto n = to_int(*port);
        if (!n || *n < 0 || *n > 65535) return complain("--port takes a number from 0 to 65535");
        options.port = static_cast<unsigned short>(*n);
    }
    if (const auto backend = a.value("backend")) {
        const auto b = opensandbox::testing::parse_backend(*backend);
        if (!b) return complain("--backend takes kubernetes or docker");
        options.backend = *b;
    }
    if (const auto runtime = a.value("runtime")) {
        const auto r = opensandbox::testing::parse_runtime(*runtime);
        if (!r) return complain("--runtime takes simulated or process");
        options.runtime = *r;
    }
    options.state_dir = a.value("state-dir").value_or("");
    options.diagnostics = !a.has("no-diagnostics");
    if (const auto pending = a.value("pending-ms")) {
        const auto n = to_int(*pending);
        if (!n || *n < 0) return complain("--pending-ms takes a number of milliseconds");
        options.pending_for = std::chrono::milliseconds(*n);
    }
    if (const auto transition = a.value("transition-ms")) {
        const auto n = to_int(*transition);
        if (!n || *n < 0) return complain("--transition-ms takes a number of milliseconds");
        options.transition_for = std::chrono::milliseconds(*n);
    }
    // The key from the environment keeps it out of the process list; --api-key wins.
    if (const char* from_env = std::getenv("OPEN_SANDBOX_API_KEY")) options.api_key = from_env;
    if (const auto key = a.value("api-key")) options.api_key = *key;
    options.tls_certificate_file = a.value("tls-cert").value_or("");
    options.tls_key_file = a.value("tls-key").value_or("");
    if (options.tls_certificate_file.empty() != options.tls_key_file.empty()) {
        return complain("--tls-cert and --tls-key go together");
    }
    // Real commands for anyone who reaches the port: only on this machine, or behind a key.
    if (options.runtime == opensandbox::testing::runtime::process && !is_loopback(options.host) &&
        options.api_key.empty()) {
        return complain("--runtime process on a non-loopback address needs --api-key (or OPEN_SANDBOX_API_KEY)");
    }
    return options;
}

}  // namespace

int run_serve(arguments args, const streams& io) {
    const auto parsed = parse_or_complain("serve", args, spec, io);
    if (!parsed) return exit_bad_input;
    auto options = options_of(*parsed, io);
    if (!options) return exit_bad_input;
    // execd's metrics and spans over OTLP, as real execd exports them; ends after the server,
    // exporting what is left.
    std::unique_ptr<telemetry> exported;
    if (parsed->has("otlp")) {
        if (!telemetry::available()) {
            io.err << "ngfail serve: --otlp: this ngfail was built without OpenTelemetry (scripts/setup installs "
                      "opentelemetry-cpp-dev; NGFAIL_WITH_OTEL=ON)\n";
            return exit_bad_input;
        }
        if (const auto problem = telemetry::configuration_problem()) {
            io.err << "ngfail serve: --otlp: " << *problem << '\n';
            return exit_bad_input;
        }
        exported = telemetry::start("ngfail-serve", true, io.err);
        if (exported) options->on_execd_request = exported->execd_metrics();  // (none: OTEL_SDK_DISABLED)
    }
    std::vector<opensandbox::testing::fault> faults;
    for (const std::string& text : parsed->all("fault")) {
        auto f = opensandbox::testing::parse_fault(text);
        if (!f) {
            io.err << "ngfail serve: --fault: " << f.error().reason() << '\n';
            return exit_bad_input;
        }
        faults.push_back(std::move(f).value());
    }
    if (faults.size() > options->max_faults) {
        io.err << "ngfail serve: --fault: at most " << options->max_faults << " faults may wait at once\n";
        return exit_bad_input;
    }
    block_stop_signals();  // before the server's threads start, so they inherit the mask
    const std::string scheme = options->tls_certificate_file.empty() ? "http://" : "https://";
    std::optional<opensandbox::testing::embedded_server> started;
    try {
        started.emplace(std::move(*options));
    } catch (const std::exception& e) {
        io.err << "ngfail serve: cannot serve: " << e.what() << '\n';
        return exit_bad_input;
    }
    opensandbox::testing::embedded_server& server = *started;
    for (auto& f : faults) {
        io.err << "ngfail serve: fault queued: " << opensandbox::testing::to_json(f) << '\n';
        server.inject(std::move(f));
    }
    const std::string& host = parsed->value("host").value_or("127.0.0.1");
    io.out << "listening on " << scheme << host << ':' << server.port() << '\n'
           << "direct endpoints on " << scheme << host << ':' << server.direct_port() << '\n'
           << std::flush;
    const int signal = wait_for_a_stop_signal();
    server.stop();
    io.out << "stopped (" << (signal == SIGINT ? "SIGINT" : "SIGTERM") << ") after " << server.requests()
           << " requests\n";
    return exit_ok;
}

std::string serve_usage() {
    return "usage: ngfail serve [--host H] [--port N] [--api-key K] [--backend kubernetes|docker]\n"
           "                    [--runtime simulated|process] [--state-dir DIR]\n"
           "                    [--pending-ms N] [--transition-ms N] [--tls-cert PEM --tls-key PEM] [--fault JSON]...\n"
           "                    [--no-diagnostics] [--otlp]\n"
           "\n"
           "Runs a local OpenSandbox: the lifecycle API (/v1/sandboxes...) and execd, reached through\n"
           "the server proxy (/sandboxes/{id}/proxy/{port}/...) or a direct endpoint on a second port.\n"
           "Point the official SDKs or curl at the first line it prints:\n"
           "\n"
           "  listening on http://HOST:PORT\n"
           "\n"
           "--port 0 (the default) picks a free port. --api-key (or OPEN_SANDBOX_API_KEY) makes the\n"
           "lifecycle API require OPEN-SANDBOX-API-KEY. --backend says which real backend its faults\n"
           "look like (default kubernetes). --pending-ms keeps new sandboxes Pending that long;\n"
           "--transition-ms makes a Kubernetes pause or resume take that long (Pausing, Resuming).\n"
           "--tls-cert and --tls-key (PEM files) serve both ports over HTTPS.\n"
           "--no-diagnostics answers the diagnostics API (/v1/sandboxes/{id}/diagnostics/...) with\n"
           "501, as a server without it does.\n"
           "--runtime process runs real commands in bubblewrap sandboxes (each with its own\n"
           "namespaces, a private /home, /tmp and /workspace under --state-dir, a cgroup bounding its\n"
           "memory, 512Mi unless the create request's resourceLimits.memory says otherwise); it needs\n"
           "bubblewrap and a writable cgroup (root), and --api-key on a non-loopback --host.\n"
           "--otlp exports execd's metrics (execd.http.request.duration, execd.execution.duration,\n"
           "execd.filesystem.operations.duration, in ms) and a span per execd request over OTLP/HTTP,\n"
           "as real execd does, configured by OTEL_EXPORTER_OTLP_ENDPOINT (default\n"
           "http://localhost:4318), OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf or http/json),\n"
           "OTEL_SERVICE_NAME, OTEL_METRIC_EXPORT_INTERVAL (ms, default 60000).\n"
           "--fault queues a fault, repeatable, e.g.\n"
           "  --fault '{\"operation\":\"create\",\"action\":\"http_error\",\"status\":502,\n"
           "            \"code\":\"BACKEND_CONNECTION_FAILED\",\"message\":\"...\",\"times\":1}'\n"
           "  --fault '{\"operation\":\"exec\",\"action\":\"oom_kill\"}'\n"
           "Actions: oom_kill, image_pull_failure, expire, crash, http_error, drop_before_init,\n"
           "drop_after_init, no_terminal_event, signal_exit, stall (stall_ms), malformed_json,\n"
           "sandbox_status (state, reason); on attach_terminal: taken_over, policy_close,\n"
           "drop_mid_frame; what users report: cut_stream (cut_after_bytes, cut_after_ms),\n"
           "lose_reply, oom_kill with \"surface\": \"bare_502\" (or \"ws_1011\" on attach_terminal),\n"
           "pod_ready_timeout on create (cause: quota, pool or image_pull; stall_ms before the 504).\n"
           "POST /_ngfail/faults adds one while it runs.\n"
           "Serves until SIGINT or SIGTERM, then exits 0.\n";
}

}  // namespace ngfail::cli
