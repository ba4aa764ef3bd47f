// ngfail classify --operation OP [evidence flags] [--json]
#include "args.hpp"
#include "failure_summary.hpp"

#include <ngfail/json.hpp>
#include <ngfail/opensandbox/classify.hpp>

#include <array>
#include <ostream>

namespace ngfail::cli {
namespace {

struct named_error {
    std::string_view name;
    std::string_view also_called;  // its errno name, or an older name ("" when it has none)
    std::error_code code;
};

// The transport errors --transport-error accepts: std::errc names or errno names, and a few
// that have no errno.
const std::array<named_error, 19>& transport_errors() {
    static const std::array<named_error, 19> table{{
        {"connection_refused", "ECONNREFUSED", std::make_error_code(std::errc::connection_refused)},
        {"connection_reset", "ECONNRESET", std::make_error_code(std::errc::connection_reset)},
        {"connection_aborted", "ECONNABORTED", std::make_error_code(std::errc::connection_aborted)},
        {"broken_pipe", "EPIPE", std::make_error_code(std::errc::broken_pipe)},
        {"timed_out", "ETIMEDOUT", std::make_error_code(std::errc::timed_out)},
        {"network_unreachable", "ENETUNREACH", std::make_error_code(std::errc::network_unreachable)},
        {"host_unreachable", "EHOSTUNREACH", std::make_error_code(std::errc::host_unreachable)},
        {"too_many_files_open", "EMFILE", std::make_error_code(std::errc::too_many_files_open)},
        {"too_many_files_open_in_system", "ENFILE", std::make_error_code(std::errc::too_many_files_open_in_system)},
        {"no_buffer_space", "ENOBUFS", std::make_error_code(std::errc::no_buffer_space)},
        {"not_enough_memory", "ENOMEM", std::make_error_code(std::errc::not_enough_memory)},
        {"address_not_available", "EADDRNOTAVAIL", std::make_error_code(std::errc::address_not_available)},
        {"connection_closed", "eof", make_error_code(opensandbox::errc::connection_closed)},
        {"host_not_found", "", make_error_code(opensandbox::errc::host_not_found)},
        {"tls_failed", "", make_error_code(opensandbox::errc::tls_failed)},
        {"cancelled", "", make_error_code(opensandbox::errc::cancelled)},
        {"stream_incomplete", "", make_error_code(opensandbox::errc::stream_incomplete)},
        {"readiness_timeout", "", make_error_code(opensandbox::errc::readiness_timeout)},
        {"malformed_response", "", make_error_code(opensandbox::errc::malformed_response)},
    }};
    return table;
}

// "connection_refused (ECONNREFUSED), …, malformed_response": what --transport-error takes.
std::string transport_error_names() {
    std::string names;
    for (const named_error& e : transport_errors()) {
        if (!names.empty()) names += ", ";
        names += e.name;
        if (!e.also_called.empty()) names += " (" + std::string(e.also_called) + ")";
    }
    return names;
}

// "create, get, …, download": what --operation takes.
std::string operation_names() {
    std::string names;
    for (const opensandbox::operation op : opensandbox::all_operations()) {
        if (!names.empty()) names += ", ";
        names += opensandbox::name(op);
    }
    return names;
}

constexpr std::array<std::pair<std::string_view, opensandbox::phase>, 3> phases{{
    {"connect", opensandbox::phase::connect},
    {"send", opensandbox::phase::send},
    {"receive", opensandbox::phase::receive},
}};

const arg_spec spec{.with_value = {"operation", "sandbox-id", "http-status", "provider-code", "provider-status-reason",
                                   "sandbox-state", "exit-code", "execution-id", "transport-error", "transport-phase",
                                   "failure-kind", "retry-after", "close-code", "signal"},
                    .flags = {"json", "input-written"}};

// The observation the flags describe, or a one-line error.
std::variant<opensandbox::observation, std::string> observation_of(const parsed_args& a) {
    opensandbox::observation seen;
    const auto op = a.value("operation");
    if (!op || op->empty()) return std::string("--operation is required");
    if (!opensandbox::parse_operation(*op)) return "unknown --operation '" + *op + "'; one of: " + operation_names();
    seen.operation = *op;
    seen.sandbox_id = a.value("sandbox-id");
    seen.provider_code = a.value("provider-code");
    seen.provider_status_reason = a.value("provider-status-reason");
    seen.sandbox_state = a.value("sandbox-state");
    seen.execution_id = a.value("execution-id");
    seen.failure_kind = a.value("failure-kind");
    seen.signal = a.value("signal");
    seen.input_written = a.has("input-written");
    for (const auto& [flag, field] : {std::pair{"http-status", &seen.http_status}, std::pair{"exit-code", &seen.exit_code},
                                      std::pair{"close-code", &seen.close_code}}) {
        if (const auto text = a.value(flag)) {
            *field = to_int(*text);
            if (!*field) return "--" + std::string(flag) + " needs an integer, not '" + *text + "'";
        }
    }
    if (const auto text = a.value("retry-after")) {
        const auto seconds = to_int(*text);
        if (!seconds || *seconds < 0) return "--retry-after needs whole seconds, not '" + *text + "'";
        seen.retry_after = std::chrono::seconds(*seconds);
    }
    if (const auto name = a.value("transport-error")) {
        const auto& table = transport_errors();
        const auto it = std::find_if(table.begin(), table.end(),
                                     [&](const auto& e) { return e.name == *name || (!e.also_called.empty() && e.also_called == *name); });
        if (it == table.end()) return "unknown --transport-error '" + *name + "'; one of: " + transport_error_names();
        seen.transport_error = it->code;
    }
    if (const auto name = a.value("transport-phase")) {
        const auto it = std::find_if(phases.begin(), phases.end(), [&](const auto& p) { return p.first == *name; });
        if (it == phases.end()) return "--transport-phase is connect, send or receive, not '" + *name + "'";
        seen.transport_phase = it->second;
    }
    return seen;
}

// The rule is the event's evidence row: the one `matching_rule` names.
void print_summary(std::ostream& out, const sandbox_failure& e, const style& s) {
    print_failure_summary(out, failure_of(e), s);
    out << "event     " << e.what() << '\n';
}

}  // namespace

int run_classify(arguments args, const streams& io) {
    const auto parsed = parse_or_complain("classify", args, spec, io);
    if (!parsed) return exit_bad_input;
    const parsed_args& a = *parsed;
    auto seen = observation_of(a);
    if (auto* error = std::get_if<std::string>(&seen)) {
        io.err << "ngfail classify: " << *error << '\n';
        return exit_bad_input;
    }
    const auto& observed = std::get<opensandbox::observation>(seen);
    const sandbox_failure event = opensandbox::opensandbox_failure(observed);
    if (a.has("json")) {
        io.out << to_json(record_of(failure_of(event))) << '\n';
    } else {
        print_summary(io.out, event, style::for_stdout());
    }
    return exit_ok;
}

std::string classify_usage() {
    return "usage: ngfail classify --operation OP [--http-status N] [--provider-code C]\n"
           "                       [--provider-status-reason R] [--sandbox-state S] [--exit-code N]\n"
           "                       [--signal NAME]\n"
           "                       [--execution-id ID] [--sandbox-id ID] [--retry-after SECONDS]\n"
           "                       [--transport-error NAME --transport-phase connect|send|receive]\n"
           "                       [--close-code N] [--input-written] [--failure-kind K] [--json]\n"
           "\n"
           "Runs the OpenSandbox evidence classifier on the structured evidence given and prints\n"
           "the kind and delivery it establishes (docs/opensandbox.md has the table). With --json,\n"
           "prints the event record as it travels on the wire. --close-code is a terminal's WebSocket\n"
           "close code (4001 taken over, 1008 policy); --input-written says input was written on it.\n"
           "--signal is the signal that ended the command, as the provider reported it.\n"
           "\n"
           "OP: " + operation_names() + "\n"
           "NAME: " + transport_error_names() + "\n";
}

}  // namespace ngfail::cli
