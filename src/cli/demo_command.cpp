// ngfail demo [--json]: the main job, on the embedded OpenSandbox server.
#include "args.hpp"
#include "telemetry.hpp"
#include "tree.hpp"

#include <ngfail/json.hpp>
#include <ngfail/opensandbox.hpp>
#include <ngfail/opensandbox/testing/embedded_server.hpp>

#include <boost/json.hpp>

#include <chrono>
#include <functional>
#include <iomanip>
#include <ostream>

namespace ngfail::cli {
namespace {

using namespace std::chrono_literals;
using opensandbox::client;
using opensandbox::testing::embedded_server;
using opensandbox::testing::fault;
using action = opensandbox::testing::fault::action;

constexpr std::string_view demo_key = "sk-demo-0000";  // the embedded server's key; never printed
constexpr std::size_t header_preview = 150;

// Everything one scenario needs: its faults, and the same call through both faces.
struct scenario {
    std::string title;
    std::string story;
    kind expected;
    std::function<void(embedded_server&)> arrange;
    std::function<void()> throwing;        // the client's throwing method
    std::function<failure()> trying;       // the try_ method's failure (empty on success)
};

// What one scenario showed.
struct outcome {
    std::string title{};
    kind expected{};
    std::string kind_name{};
    std::string delivery = "-";
    bool thrown = false;
    bool result_agrees = false;
    std::string header{};
    std::vector<std::string> chain{};

    [[nodiscard]] bool as_expected() const { return kind_name == name(expected) && thrown && result_agrees; }
};

std::string delivery_text(const failure& f) {
    const auto d = delivery_of(f);
    return d ? std::string(name(*d)) : std::string("not established");
}

std::string level_text(const failure& level) {
    std::string text(level.kind_name());
    if (const auto* sdk = std::get_if<sdk_error_details>(&level.details())) text += " (" + sdk->error_type + ")";
    if (std::holds_alternative<sandbox_details>(level.details())) text += " (sandbox_failure)";
    return text;
}

outcome play(const scenario& s, embedded_server& server) {
    outcome o{.title = s.title, .expected = s.expected};
    s.arrange(server);
    failure thrown_failure;
    try {
        s.throwing();
    } catch (const failure_event& e) {
        o.thrown = true;
        thrown_failure = failure_of(e);
        for (const failure& level : cause_chain(e)) o.chain.push_back(level_text(level));
        o.header = encode_header(report_for(std::current_exception()));
    }
    const failure returned = s.trying();
    o.kind_name = std::string(thrown_failure.kind_name());
    o.delivery = thrown_failure ? delivery_text(thrown_failure) : "-";
    o.result_agrees = returned && returned.code() == thrown_failure.code() &&
                      delivery_text(returned) == o.delivery && returned.reason() == thrown_failure.reason();
    return o;
}

std::string preview(std::string_view header) {
    if (header.size() <= header_preview) return std::string(header);
    return std::string(header.substr(0, header_preview)) + "… (" + std::to_string(header.size()) + " bytes)";
}

// The scripted workload: each fault injected twice, once per face.
std::vector<scenario> workload(embedded_server& server, client& sandboxes, client& wrong_key, const std::string& box) {
    const auto twice = [](fault f) {
        f.times = 2;
        return f;
    };
    const auto exec = [&](const std::string& cmd) {
        return std::pair{std::function<void()>([&, cmd] { (void)sandboxes.exec(box, {.command = cmd}); }),
                         std::function<failure()>([&, cmd] {
                             auto r = sandboxes.try_exec(box, {.command = cmd});
                             return r ? failure{} : r.error();
                         })};
    };
    const auto on = [](auto&& call) {
        return std::function<failure()>([call] {
            auto r = call();
            return r ? failure{} : r.error();
        });
    };
    std::vector<scenario> all;
    // An OOM kill fails its sandbox: each face gets a fresh one.
    all.push_back({"OOM kill (Kubernetes)",
                   "the command dies by SIGKILL (exit -1); the sandbox turns Failed, reason FAILED, and "
                   "OOMKilled appears only in its message, which is never evidence",
                   kind::provider_command_terminated,
                   [](embedded_server& s) { s.inject({.operation = "exec", .what = action::oom_kill, .times = 2}); },
                   [&] { (void)sandboxes.exec(sandboxes.create({}).id, {.command = "python train.py"}); },
                   on([&] { return sandboxes.try_exec(sandboxes.create({}).id, {.command = "python train.py"}); })});
    {
        auto [t, r] = exec("python train.py");
        all.push_back({"OOM kill (structured reason)",
                       "exit -1, and the sandbox's status reason itself is OOMKilled (a backend that reports "
                       "the pod's reason as structured data): that is evidence of an OOM kill",
                       kind::provider_oom_killed,
                       [twice](embedded_server& s) {
                           s.inject(twice(fault::exec(action::signal_exit)));
                           s.inject(twice(fault::sandbox_status("get", "Running", "OOMKilled")));
                       },
                       t, r});
    }
    {
        auto [t, r] = exec("sleep 100000");
        all.push_back({"killed command", "execd reports exit -1: a signal ended the command, nothing says why",
                       kind::provider_command_terminated,
                       [twice](embedded_server& s) { s.inject(twice(fault::exec(action::signal_exit))); }, t, r});
    }
    all.push_back({"rejected credentials", "a client with the wrong API key calls the lifecycle API",
                   kind::provider_credentials_rejected, [](embedded_server&) {},
                   [&] { (void)wrong_key.get(box); }, on([&] { return wrong_key.try_get(box); })});
    all.push_back({"quota, retry after 7 s", "create meets 429 KUBERNETES::POOL_CAPACITY_EXHAUSTED with Retry-After: 7",
                   kind::provider_quota_exhausted,
                   [twice](embedded_server& s) {
                       s.inject(twice(fault::http_error("create", 429, "KUBERNETES::POOL_CAPACITY_EXHAUSTED",
                                                        "the pool has no capacity", 7)));
                   },
                   [&] { (void)sandboxes.create({}); }, on([&] { return sandboxes.try_create({}); })});
    all.push_back({"lost sandbox", "get on a sandbox that was deleted: 404 KUBERNETES::SANDBOX_NOT_FOUND",
                   kind::provider_sandbox_lost, [](embedded_server&) {},
                   [&] { (void)sandboxes.get("sbx-deleted"); }, on([&] { return sandboxes.try_get("sbx-deleted"); })});
    {
        auto [t, r] = exec("pytest -q");
        all.push_back({"dropped stream", "the exec stream closes after init, before any terminal event",
                       kind::transport_peer_drop,
                       [twice](embedded_server& s) { s.inject(twice(fault::exec(action::drop_after_init))); }, t, r});
    }
    all.push_back({"timeout", "get meets a server that never answers; the call gives up after 300 ms",
                   kind::transport_timeout,
                   [twice](embedded_server& s) { s.inject(twice(fault::stall("get", 5s))); },
                   [&] { (void)sandboxes.get(box, {.timeout = 300ms}); },
                   on([&] { return sandboxes.try_get(box, {.timeout = 300ms}); })});
    all.push_back({"image pull failure", "create answers with a sandbox in state Failed, reason ImagePullBackOff",
                   kind::provider_start_failed,
                   [twice](embedded_server& s) { s.inject(twice(fault::sandbox_status("create", "Failed", "ImagePullBackOff"))); },
                   [&] { (void)sandboxes.create({.image = "registry.invalid/nope:1"}); },
                   on([&] { return sandboxes.try_create({.image = "registry.invalid/nope:1"}); })});
    {
        auto [t, r] = exec("make");
        all.push_back({"server fault on exec", "POST /command answers 500 before the first event; never retried",
                       kind::provider_unavailable,
                       [twice](embedded_server& s) {
                           s.inject(twice(fault::http_error("exec", 500, "RUNTIME_ERROR", "runtime failed")));
                       },
                       t, r});
    }
    (void)server;
    return all;
}

// The unreachable backend that a retry recovers: a success whose report carries the attempt.
outcome play_recovered(embedded_server& server, client& retrying) {
    outcome o{.title = "unreachable backend, retried", .expected = kind::transport_unreachable};
    server.inject(fault::http_error("create", 502, "BACKEND_CONNECTION_FAILED",
                                    "Could not connect to the backend sandbox"));
    request_failure_log log;
    const auto created = retrying.try_create({}, {.log = &log});
    const failure_report report = log.finish();
    o.header = encode_header(report);
    const auto chains = chains_of(report);
    if (created && !report.failure_id && !chains.empty()) {
        const event_record& attempt = *chains.front().levels.front();
        o.kind_name = attempt.kind;
        if (const auto d = delivery_of(attempt.details)) o.delivery = name(*d);
        for (const event_record* r : chains.front().levels) o.chain.push_back(r->kind);
        o.thrown = true;         // nothing to throw: the call succeeded
        o.result_agrees = true;  // and try_create returned the sandbox
    }
    return o;
}

void print_outcome(std::ostream& out, std::size_t n, std::size_t total, const outcome& o, std::string_view story,
                   const style& s) {
    out << '\n' << s.bold("[" + std::to_string(n) + "/" + std::to_string(total) + "] " + o.title) << '\n';
    out << "  " << s.dim(std::string(story)) << '\n';
    out << "  classified  " << s.kind(o.kind_name) << "  delivery " << o.delivery << '\n';
    std::string chain;
    for (const auto& level : o.chain) chain += (chain.empty() ? "" : "  ←  ") + level;
    out << "  chain       " << chain << '\n';
    out << "  result      " << (o.result_agrees ? s.good("the noexcept face returns the same kind, delivery and reason")
                                                 : s.kind("the noexcept face disagrees")) << '\n';
    out << "  header      " << failure_header_name << ": " << preview(o.header) << '\n';
}

void print_summary(std::ostream& out, const std::vector<outcome>& all, double seconds, const style& s) {
    out << '\n' << s.bold("summary") << '\n';
    out << "  " << std::left << std::setw(30) << "scenario" << std::setw(32) << "kind" << std::setw(20) << "delivery"
        << "header  ok\n";
    std::size_t good = 0;
    for (const auto& o : all) {
        good += o.as_expected() ? 1 : 0;
        out << "  " << std::setw(30) << o.title << std::setw(32) << o.kind_name << std::setw(20) << o.delivery
            << std::setw(8) << (std::to_string(o.header.size()) + " B") << (o.as_expected() ? s.good("yes") : s.kind("NO"))
            << '\n';
    }
    out << std::right << "\n" << good << " of " << all.size() << " scenarios classified as expected in " << std::fixed
        << std::setprecision(1) << seconds << " s\n";
}

void print_json(std::ostream& out, const std::vector<outcome>& all) {
    boost::json::array scenarios;
    bool ok = true;
    for (const auto& o : all) {
        ok = ok && o.as_expected();
        boost::json::array chain(o.chain.begin(), o.chain.end());
        scenarios.push_back(boost::json::object{{"name", o.title},
                                                {"expected", name(o.expected)},
                                                {"kind", o.kind_name},
                                                {"delivery", o.delivery},
                                                {"chain", std::move(chain)},
                                                {"result_agrees", o.result_agrees},
                                                {"header", o.header},
                                                {"ok", o.as_expected()}});
    }
    out << boost::json::serialize(boost::json::object{{"scenarios", std::move(scenarios)}, {"ok", ok}}) << '\n';
}

}  // namespace

int run_demo(arguments args, const streams& io) {
    const auto parsed = parse_or_complain("demo", args, {.flags = {"json"}}, io);
    if (!parsed) return exit_bad_input;
    const bool json = parsed->has("json");
    const auto started = std::chrono::steady_clock::now();
    const style s = style::for_stdout();

    // With OTEL_EXPORTER_OTLP_ENDPOINT set, the clients' spans and metrics and the server's
    // execd metrics go there (exported when the demo ends: `exported` outlives both).
    const auto exported = telemetry::start("ngfail-demo", false, io.err);
    const auto observer = exported ? exported->client_observer() : nullptr;
    embedded_server server({.api_key = std::string(demo_key),
                            .on_execd_request = exported ? exported->execd_metrics() : nullptr});
    client sandboxes({.port = server.port(), .api_key = std::string(demo_key), .timeout = 5s, .observer = observer});
    client wrong_key({.port = server.port(), .api_key = "sk-wrong", .timeout = 5s, .observer = observer});
    client retrying({.port = server.port(), .api_key = std::string(demo_key), .timeout = 5s,
                     .retries = {.max_attempts = 3, .backoff = 20ms}, .observer = observer});
    if (!json) {
        io.out << s.bold("ngfail demo") << ": an embedded OpenSandbox server on 127.0.0.1:" << server.port()
               << ", a client that throws and returns classified failures\n";
    }
    const std::string box = sandboxes.create({.image = "python:3.11"}).id;

    std::vector<outcome> outcomes{play_recovered(server, retrying)};
    const auto scenarios = workload(server, sandboxes, wrong_key, box);
    const std::size_t total = scenarios.size() + 1;
    if (!json) {
        print_outcome(io.out, 1, total, outcomes.front(),
                      "create meets 502 BACKEND_CONNECTION_FAILED (not_sent, so safe to retry) and succeeds on the "
                      "retry; the success reply's header still carries the failed attempt",
                      s);
    }
    for (const auto& sc : scenarios) {
        outcomes.push_back(play(sc, server));
        if (!json) print_outcome(io.out, outcomes.size(), total, outcomes.back(), sc.story, s);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    json ? print_json(io.out, outcomes) : print_summary(io.out, outcomes, seconds, s);
    const bool ok = std::all_of(outcomes.begin(), outcomes.end(), [](const outcome& o) { return o.as_expected(); });
    return ok ? exit_ok : exit_failure;
}

std::string demo_usage() {
    return "usage: ngfail demo [--json]\n"
           "\n"
           "Starts the embedded OpenSandbox server on an ephemeral loopback port and runs a scripted\n"
           "workload through the client that meets ten kinds of failure (a retried unreachable\n"
           "backend, OOM kill, killed command, credentials, quota with Retry-After, lost sandbox,\n"
           "dropped stream, timeout, image pull failure, server fault). For each it shows the\n"
           "classified kind and delivery, the exception chain, the noexcept result and the header a\n"
           "server would send; then a summary. Exit status 1 if any scenario is misclassified.\n"
           "With OTEL_EXPORTER_OTLP_ENDPOINT set, the clients' spans and metrics and the server's\n"
           "execd metrics go there over OTLP/HTTP when it ends (docs/fleet.md).\n";
}

}  // namespace ngfail::cli
