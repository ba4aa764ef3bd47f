// ngfail policy check FILE [--json]
// ngfail policy decide (FILE | --defaults) (HEADER_VALUE | --file F | --row JSON
//                      | --kind K [--status N] [--stage S] [--delivery D])
//                      [--replay P] [--saved-answer] [--json]
#include "args.hpp"
#include "policy_view.hpp"
#include "report_input.hpp"

#include <ngfail/json.hpp>
#include <ngfail/one_line.hpp>
#include <ngfail/policy.hpp>

#include <boost/json.hpp>

#include <ostream>

namespace ngfail::cli {
namespace {

using namespace ngfail::policy;

const arg_spec check_spec{.flags = {"json"}, .max_positionals = 2};
const arg_spec decide_spec{.with_value = {"kind", "status", "stage", "delivery", "replay", "file", "row"},
                           .flags = {"json", "saved-answer", "defaults"},
                           .max_positionals = 3};

// A class name from the file is printed through one_line (`describe` does the same), JSON
// through serialize_ascii, which keeps the name whole.
std::string rule_text(const rule_key& key, const outcome_policy& p) { return describe(chosen_rule{.key = key}, p); }

std::string outcome_text(const rule_outcome& o) {
    std::string text(name(o.action));
    if (o.terminal) text += " (terminal)";
    if (o.line > 0) text += "  line " + std::to_string(o.line);
    return text;
}

boost::json::array table_json(const action_table& t, const outcome_policy& p) {
    boost::json::array rules;
    for (const auto& [key, o] : t.rules()) {
        rules.push_back({{"rule", rule_text(key, p)}, {"action", name(o.action)}, {"terminal", o.terminal}, {"line", o.line}});
    }
    return rules;
}

std::string condition_text(const class_rule& r) {
    std::string text;
    const auto add = [&](std::string part) { text += (text.empty() ? "" : ", ") + part; };
    if (r.stage) add("stage " + std::string(name(*r.stage)));
    if (r.status) add("status " + std::to_string(*r.status));
    if (r.status_class) add("status " + std::to_string(*r.status_class) + "xx");
    if (r.kind) add("kind " + std::string(kind_name(r.kind)));
    if (r.domain) add("domain " + std::string(name(*r.domain)));
    return text.empty() ? "any failure" : text;
}

std::string supported_text(action_set s) {
    std::string text;
    for (auto a : {outcome_action::retry, outcome_action::fail, outcome_action::count_as_zero, outcome_action::verify}) {
        if (s.contains(a)) text += (text.empty() ? "" : ", ") + std::string(name(a));
    }
    return text;
}

void print_tables(std::ostream& out, const outcome_policy& p) {
    out << "classification (first match wins; else the kind's name):\n";
    if (p.classification.empty()) out << "  (none)\n";
    for (const auto& r : p.classification) {
        out << "  " << one_line(p.class_name(r.target)) << "  <-  " << condition_text(r);
        if (r.line > 0) out << "  line " << r.line;
        out << '\n';
    }
    const auto print_table = [&](std::string_view title, const action_table& t) {
        out << title << ":\n";
        for (const auto& [key, o] : t.rules()) out << "  " << rule_text(key, p) << "  " << outcome_text(o) << '\n';
    };
    for (std::size_t s = 0; s < p.stages.size(); ++s) {
        if (p.stages[s]) print_table("stage " + std::string(name(static_cast<stage>(s))) + " table", *p.stages[s]);
    }
    print_table("shared table", p.shared);
    out << "supported: " << supported_text(p.supported) << '\n'
        << "allowance: " << p.allowance.attempts << " attempts within " << p.allowance.elapsed.count()
        << " ms, backoff " << p.allowance.base_delay.count() << "-" << p.allowance.max_delay.count() << " ms\n"
        << "rollout attempts: " << p.max_rollout_attempts << '\n'
        << "counted as zero in metrics:";
    for (class_id c : p.count_as_zero_classes) out << ' ' << one_line(p.class_name(c));
    if (p.count_missing_as_zero) out << " (and missing rollouts)";
    out << '\n';
}

boost::json::object tables_json(const outcome_policy& p) {
    boost::json::array classes;
    for (const auto& r : p.classification) {
        classes.push_back({{"class", p.class_name(r.target)}, {"when", condition_text(r)}, {"line", r.line}});
    }
    boost::json::object stages;
    for (std::size_t s = 0; s < p.stages.size(); ++s) {
        if (p.stages[s]) stages[name(static_cast<stage>(s))] = table_json(*p.stages[s], p);
    }
    boost::json::array zero;
    for (class_id c : p.count_as_zero_classes) zero.push_back(boost::json::string(p.class_name(c)));
    return {{"classification", std::move(classes)},
            {"stages", std::move(stages)},
            {"shared", table_json(p.shared, p)},
            {"supported", supported_text(p.supported)},
            {"allowance", {{"attempts", p.allowance.attempts},
                           {"elapsed_ms", p.allowance.elapsed.count()},
                           {"base_delay_ms", p.allowance.base_delay.count()},
                           {"max_delay_ms", p.allowance.max_delay.count()}}},
            {"max_rollout_attempts", p.max_rollout_attempts},
            {"count_failure_classes_as_zero", std::move(zero)},
            {"count_missing_rollouts_as_zero", p.count_missing_as_zero}};
}

int run_check(const parsed_args& a, const streams& io) {
    if (a.positionals.size() != 2) {
        io.err << "ngfail policy check: give a FILE (see 'ngfail policy --help')\n";
        return exit_bad_input;
    }
    const auto p = load_policy_or_complain("policy check", a.positionals[1], io);
    if (!p) return exit_bad_input;
    if (a.has("json")) {
        io.out << serialize_ascii(tables_json(*p)) << '\n';
    } else {
        io.out << a.positionals[1] << ": valid; the effective tables (the file over the defaults):\n";
        print_tables(io.out, *p);
    }
    return exit_ok;
}

template <class T>
bool read_named(const parsed_args& a, std::string_view option, std::optional<T> (*parse)(std::string_view) noexcept,
                std::optional<T>& into, std::string_view accepted, const streams& io) {
    const auto text = a.value(option);
    if (!text) return true;
    into = parse(*text);
    if (!into) io.err << "ngfail policy decide: --" << option << " '" << *text << "' is not one of " << accepted << '\n';
    return into.has_value();
}

// The failure to decide on: from a report (a header value, a report file, a rollout row) or
// from --kind and its companions; none, said on io.err, when the arguments are wrong.
struct decide_input {
    failure_evidence evidence;
    bool saved_answer = false;  // a row that kept the model's response
};

std::optional<decide_input> evidence_from_report(const failure_report& report, const streams& io) {
    if (!report.failure_id) {
        io.err << "ngfail policy decide: the report holds no failure (a success's report)\n";
        return std::nullopt;
    }
    return decide_input{.evidence = evidence_of(report.events.at(*report.failure_id))};
}

std::optional<decide_input> evidence_from_row(std::string_view text, const streams& io) {
    const limits lim;
    if (text.size() > lim.max_json_bytes) {
        io.err << "ngfail policy decide: --row is over " << lim.max_json_bytes << " bytes\n";
        return std::nullopt;
    }
    boost::json::error_code ec;
    const boost::json::value row = boost::json::parse(text, ec);
    if (ec || !row.is_object()) {
        io.err << "ngfail policy decide: --row is not a JSON object (a rollout row)\n";
        return std::nullopt;
    }
    const auto report = rollout_report(row.get_object(), lim);
    if (!report) {
        io.err << "ngfail policy decide: --row: " << one_line(report.error().reason(), 400) << '\n';
        return std::nullopt;
    }
    auto input = evidence_from_report(report.value(), io);
    if (input) input->saved_answer = row.get_object().contains("response");
    return input;
}

std::optional<decide_input> evidence_from_options(const parsed_args& a, const streams& io) {
    decide_input input;
    failure_evidence& e = input.evidence;
    const auto kind_code = registered_kind(*a.value("kind"));
    if (!kind_code) {
        io.err << "ngfail policy decide: --kind '" << one_line(*a.value("kind")) << "' is not a core or registered kind ('ngfail kinds' lists them)\n";
        return std::nullopt;
    }
    e.kind = *kind_code;
    if (const auto status = a.value("status")) {
        e.http_status = to_int(*status);
        if (!e.http_status) {
            io.err << "ngfail policy decide: --status '" << one_line(*status) << "' is not a number\n";
            return std::nullopt;
        }
    }
    if (!read_named(a, "stage", parse_stage, e.stage, "admission, seed, agent, verification, cleanup", io) ||
        !read_named(a, "delivery", parse_delivery, e.delivery, "not_sent, possibly_delivered, delivered", io)) {
        return std::nullopt;
    }
    return input;
}

int run_decide(const parsed_args& a, const streams& io) {
    const bool defaults = a.has("defaults");
    const std::size_t policy_args = defaults ? 1U : 2U;  // "decide" and FILE
    const bool header = a.positionals.size() == policy_args + 1;
    const int sources = int(header) + int(a.value("file").has_value()) + int(a.value("row").has_value()) +
                        int(a.value("kind").has_value());
    const bool evidence_options = a.value("status") || a.value("stage") || a.value("delivery");
    if (a.positionals.size() < policy_args || a.positionals.size() > policy_args + 1 || sources != 1 ||
        (evidence_options && !a.value("kind"))) {
        io.err << "ngfail policy decide: give a FILE (or --defaults) and one failure: a HEADER_VALUE, --file F, "
                  "--row JSON or --kind K (see 'ngfail policy --help')\n";
        return exit_bad_input;
    }
    std::optional<outcome_policy> loaded;
    if (!defaults) {
        loaded = load_policy_or_complain("policy decide", a.positionals[1], io);
        if (!loaded) return exit_bad_input;
    }
    const outcome_policy& p = defaults ? outcome_policy::defaults() : *loaded;

    std::optional<decide_input> input;
    if (a.value("kind")) {
        input = evidence_from_options(a, io);
    } else if (const auto row = a.value("row")) {
        input = evidence_from_row(*row, io);
    } else {
        const auto header_value = header ? std::optional<std::string_view>(a.positionals.back()) : std::nullopt;
        const auto report = read_report("policy decide", header_value, a.value("file"), io);
        if (report) input = evidence_from_report(*report, io);
    }
    if (!input) return exit_bad_input;
    const failure_evidence& e = input->evidence;
    decision_context context{.saved_answer = a.has("saved-answer") || input->saved_answer};
    if (!read_named(a, "replay", parse_replay_policy, context.replay, "before_delivery, idempotent, deduplicated, never", io)) {
        return exit_bad_input;
    }
    const outcome_decision d = choose_action(p, e, context);
    if (a.has("json")) {
        boost::json::object out{{"action", name(d.action)},
                                {"selected", name(d.selected)},
                                {"rule", describe(d.rule, p)},
                                {"table", d.rule.table ? name(*d.rule.table) : "shared"},
                                {"line", d.rule.line},
                                {"class", class_name(d, p)},
                                {"terminal", d.terminal},
                                {"counts_as_zero", d.counts_as_zero}};
        if (d.refused != refusal::none) out["refused"] = name(d.refused);
        io.out << serialize_ascii(out) << '\n';
    } else {
        io.out << describe(d, p) << "\nclass " << one_line(class_name(d, p)) << ", terminal " << (d.terminal ? "yes" : "no")
               << ", counts as zero " << (d.counts_as_zero ? "yes" : "no") << '\n';
    }
    return exit_ok;
}

}  // namespace

std::optional<outcome_policy> load_policy_or_complain(std::string_view command, std::string_view path, const streams& io) {
    auto p = load_outcome_policy(std::string(path));
    if (!p) {
        io.err << "ngfail " << command << ": " << p.error().reason() << '\n';
        return std::nullopt;
    }
    return std::move(p).value();
}

int run_policy(arguments args, const streams& io) {
    const std::string_view sub = args.empty() ? std::string_view{} : args.front();
    if (sub != "check" && sub != "decide") {
        io.err << "ngfail policy: give 'check' or 'decide' (see 'ngfail policy --help')\n";
        return exit_bad_input;
    }
    const auto parsed = parse_or_complain("policy " + std::string(sub), args, sub == "check" ? check_spec : decide_spec, io);
    if (!parsed) return exit_bad_input;
    return sub == "check" ? run_check(*parsed, io) : run_decide(*parsed, io);
}

std::string policy_usage() {
    return "usage: ngfail policy check FILE [--json]\n"
           "       ngfail policy decide (FILE | --defaults) (HEADER_VALUE | --file F | --row JSON\n"
           "                            | --kind K [--status N] [--stage S] [--delivery D])\n"
           "                            [--replay P] [--saved-answer] [--json]\n"
           "\n"
           "check reads an outcome policy (YAML or JSON) and prints the effective tables: the file\n"
           "over ngfail's defaults, key by key. A bad file gets one error naming its line and key.\n"
           "decide prints the action a boundary takes for one failure and the rule that chose it.\n"
           "The failure is a report's (an X-NG-Failure-Report header value, a report as JSON in a\n"
           "file, or a rollout row carrying its report, whose `response` counts as a saved answer)\n"
           "or the one --kind and its companions describe. The rule is found in\n"
           "the stage's table, then the shared one; in each a status rule (exact, then 4xx/5xx), a\n"
           "kind rule (exact, then its domain), a class rule, the default. A retry the delivery does\n"
           "not allow under --replay, or a verify without --saved-answer, falls back to fail, and\n"
           "the output says why. docs/policy.md explains the defaults.\n";
}

}  // namespace ngfail::cli
