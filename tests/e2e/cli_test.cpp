// Drives the built `ngfail` binary the way a script would.
#include "support/cli_run.hpp"

#include <ngfail/event_id.hpp>
#include <ngfail/kind.hpp>

#include <boost/json.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <unistd.h>

namespace {

using ngfail_test::capture;
using ngfail_test::outcome;
using ngfail_test::run_cli;

TEST(cli_kinds, json_lists_every_kind_with_domain_code_and_description) {
    const auto [status, out] = run_cli("kinds --json");
    ASSERT_EQ(status, 0);
    const auto doc = boost::json::parse(out).as_object();
    EXPECT_EQ(doc.at("category").as_string(), "ngfail.kind");
    const auto& rows = doc.at("kinds").as_array();
    ASSERT_EQ(rows.size(), ngfail::all_kinds().size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& row = rows[i].as_object();
        const auto k = ngfail::all_kinds()[i];
        EXPECT_EQ(row.at("name").as_string(), ngfail::name(k));
        EXPECT_EQ(row.at("code").as_int64(), static_cast<int>(k));
        EXPECT_EQ(row.at("description").as_string(), ngfail::description(k));
        const auto d = ngfail::domain_of(k);
        EXPECT_EQ(row.contains("domain"), d.has_value());
        if (d) {
            EXPECT_EQ(row.at("domain").as_string(), ngfail::name(*d));
        }
    }
}

TEST(cli_kinds, table_has_a_header_and_one_line_per_kind) {
    const auto [status, out] = run_cli("kinds");
    ASSERT_EQ(status, 0);
    EXPECT_THAT(out, testing::StartsWith("KIND"));
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), static_cast<long>(ngfail::all_kinds().size()) + 1);
    EXPECT_THAT(out, testing::ContainsRegex("provider_oom_killed +provider +17  the provider reported"));
    EXPECT_THAT(out, testing::ContainsRegex("undetermined +- +32  "));
}

TEST(cli_kinds, help_describes_the_command) {
    const auto [status, out] = run_cli("kinds --help");
    EXPECT_EQ(status, 0);
    EXPECT_THAT(out, testing::HasSubstr("usage: ngfail kinds [--json]"));
}

TEST(cli, unexpected_argument_is_bad_input_with_a_message_on_stderr) {
    const auto quiet = run_cli("kinds --bogus");
    EXPECT_EQ(quiet.status, 2);
    EXPECT_EQ(quiet.out, "") << "nothing on stdout";
    EXPECT_THAT(run_cli("kinds --bogus", true).out, testing::HasSubstr("ngfail kinds: unknown option '--bogus'"));
}

TEST(cli, unknown_command_is_bad_input) {
    EXPECT_EQ(run_cli("no-such-command").status, 2);
    EXPECT_EQ(run_cli("").status, 2);
}

TEST(cli, top_level_help_lists_the_commands) {
    const auto [status, out] = run_cli("--help");
    EXPECT_EQ(status, 0);
    for (const char* c : {"kinds", "classify", "decode", "stats", "demo", "sandbox"}) EXPECT_THAT(out, testing::HasSubstr(c));
}

TEST(cli, every_command_has_help) {
    for (const std::string& c : {std::string("kinds"), std::string("classify"), std::string("decode"),
                                 std::string("stats"), std::string("demo"), std::string("sandbox")}) {
        const auto [status, out] = run_cli(c + " --help");
        EXPECT_EQ(status, 0) << c;
        EXPECT_THAT(out, testing::StartsWith("usage: ngfail " + c)) << c;
    }
}

// ---- classify: one case per evidence-table row ----------------------------------------------------------

struct row_case {
    std::string rule;
    std::string flags;
    std::string kind;
    std::string delivery;  // "" when not established
};

TEST(cli_classify, one_case_per_evidence_row) {
    const std::vector<row_case> cases{
        {"explicit_kind", "--operation exec --failure-kind agent_timeout", "agent_timeout", ""},
        {"oom_killed", "--operation exec --provider-status-reason OOMKilled --execution-id e1", "provider_oom_killed", "delivered"},
        {"killed_by_signal", "--operation exec --exit-code -1", "provider_command_terminated", "delivered"},
        {"killed_by_signal", "--operation exec --signal SIGKILL", "provider_command_terminated", "delivered"},
        {"start_failed", "--operation create --http-status 504 --provider-code KUBERNETES::POD_READY_TIMEOUT", "provider_start_failed", ""},
        {"credentials_rejected", "--operation get --http-status 401", "provider_credentials_rejected", "not_sent"},
        {"quota_exhausted", "--operation create --http-status 429 --retry-after 7", "provider_quota_exhausted", "not_sent"},
        {"sandbox_lost", "--operation get --http-status 404 --provider-code DOCKER::SANDBOX_NOT_FOUND", "provider_sandbox_lost", "not_sent"},
        {"provider_not_ready", "--operation endpoint --http-status 404 --provider-code KUBERNETES::POD_IP_NOT_AVAILABLE", "provider_unavailable", "not_sent"},
        {"backend_unreachable", "--operation exec --http-status 502 --provider-code BACKEND_CONNECTION_FAILED", "transport_unreachable", "not_sent"},
        {"terminal_taken_over", "--operation attach_terminal --close-code 4001 --execution-id t --input-written", "provider_state_conflict", "possibly_delivered"},
        {"terminal_policy_close", "--operation attach_terminal --close-code 1008 --execution-id t", "provider_request_rejected", "delivered"},
        {"terminal_held", "--operation attach_terminal --http-status 409 --provider-code ALREADY_CONNECTED", "provider_state_conflict", "not_sent"},
        {"terminal_gone", "--operation terminal_status --http-status 404 --provider-code CONTEXT_NOT_FOUND", "session_lost", "not_sent"},
        {"state_conflict", "--operation renew --http-status 409", "provider_state_conflict", "not_sent"},
        {"request_rejected", "--operation create --http-status 400", "provider_request_rejected", "not_sent"},
        {"server_fault", "--operation exec --http-status 500", "provider_unavailable", "possibly_delivered"},
        {"unreachable_at_connect", "--operation create --transport-error connection_refused --transport-phase connect", "transport_unreachable", "not_sent"},
        {"local_resource", "--operation exec --transport-error too_many_files_open --transport-phase connect", "transport_local_resource", "not_sent"},
        {"malformed_reply", "--operation get --transport-error malformed_response --transport-phase receive", "protocol_violation", "possibly_delivered"},
        {"peer_dropped", "--operation exec --transport-error connection_reset --transport-phase receive --execution-id e2", "transport_peer_drop", "delivered"},
        {"timed_out", "--operation get --transport-error timed_out --transport-phase receive", "transport_timeout", "possibly_delivered"},
        {"nothing_matched", "--operation exec --exit-code 137", "undetermined", ""},
    };
    for (const auto& c : cases) {
        const auto [status, out] = run_cli("classify " + c.flags + " --json");
        ASSERT_EQ(status, 0) << c.rule;
        const auto record = boost::json::parse(out).as_object();
        EXPECT_EQ(record.at("failure_kind").as_string(), c.kind) << c.rule;
        const auto& details = record.at("details").as_object();
        EXPECT_EQ(details.at("type").as_string(), "sandbox");
        if (c.delivery.empty()) {
            EXPECT_FALSE(details.contains("delivery")) << c.rule;
        } else {
            EXPECT_EQ(details.at("delivery").as_string(), c.delivery) << c.rule;
        }
        EXPECT_TRUE(ngfail::parse_event_id(record.at("event_id").as_string()).has_value());
        EXPECT_THAT(run_cli("classify " + c.flags).out, testing::HasSubstr("rule      " + c.rule)) << c.rule;
    }
}

TEST(cli_classify, prints_a_readable_summary_without_json) {
    const auto [status, out] = run_cli("classify --operation create --http-status 429 --retry-after 7");
    EXPECT_EQ(status, 0);
    EXPECT_THAT(out, testing::HasSubstr("provider_quota_exhausted"));
    EXPECT_THAT(out, testing::HasSubstr("not_sent"));
    EXPECT_THAT(out, testing::HasSubstr("after 7 s"));
}

TEST(cli_classify, bad_input_is_exit_2_with_a_reason) {
    for (const char* bad : {"classify", "classify --operation get --http-status abc",
                                  "classify --operation get --transport-error no_such_error",
                                  "classify --operation get --transport-phase sideways", "classify --operation",
                                  "classify --operation exce --exit-code -1"}) {
        const auto quiet = run_cli(bad);
        EXPECT_EQ(quiet.status, 2) << bad;
        EXPECT_EQ(quiet.out, "") << bad;
        EXPECT_THAT(run_cli(bad, true).out, testing::StartsWith("ngfail classify: ")) << bad;
    }
}

TEST(cli_classify, an_unknown_operation_lists_the_known_ones) {
    const auto typo = run_cli("classify --operation exce --exit-code -1", true);
    EXPECT_EQ(typo.status, 2);
    EXPECT_THAT(typo.out, testing::HasSubstr("unknown --operation 'exce'; one of: create, get, list,"));
    EXPECT_THAT(typo.out, testing::HasSubstr("exec_status"));
}

TEST(cli_classify, transport_errors_take_errno_names_and_an_unknown_one_lists_them) {
    const auto by_errno = run_cli("classify --json --operation exec --transport-error ECONNRESET --transport-phase receive");
    ASSERT_EQ(by_errno.status, 0);
    EXPECT_THAT(by_errno.out, testing::HasSubstr("transport_peer_drop"));
    const auto unknown = run_cli("classify --operation get --transport-error EWHATEVER", true);
    EXPECT_EQ(unknown.status, 2);
    EXPECT_THAT(unknown.out, testing::HasSubstr("one of: connection_refused (ECONNREFUSED), connection_reset (ECONNRESET)"));
}

// ---- decode --------------------------------------------------------------------------------------

const std::string sample_report =
    R"({"failure_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17","events":{)"
    R"("0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e16":{"event_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e16",)"
    R"("failure_kind":"transport_peer_drop","failure_reason":"stream dropped"},)"
    R"("0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17":{"event_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17",)"
    R"("failure_kind":"agent_run_error","failure_reason":"agent failed","boundary":"agent","stage":"agent",)"
    R"("http_status":500,"cause_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e16"}}})";

std::string shell_quote(const std::string& s) { return "'" + s + "'"; }

std::string temp_file(const std::string& name, const std::string& content) {
    const std::string path = testing::TempDir() + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
}

TEST(cli_decode, prints_the_chain_as_a_tree) {
    const auto [status, out] = run_cli("decode " + shell_quote(sample_report));
    ASSERT_EQ(status, 0);
    EXPECT_THAT(out, testing::HasSubstr("failure\n"
                                        "  2b8f6c0d4e17  agent_run_error  [boundary agent, stage agent, http 500]  agent failed\n"
                                        "  └─ 2b8f6c0d4e16  transport_peer_drop    stream dropped\n"));
}

TEST(cli_decode, a_whole_header_line_reads_as_its_value) {
    for (const std::string prefix : {"X-NG-Failure-Report: ", "x-ng-failure-report:"}) {
        const auto [status, out] = run_cli("decode --json " + shell_quote(prefix + sample_report + "\r"));
        ASSERT_EQ(status, 0) << prefix;
        EXPECT_EQ(out, sample_report + "\n");
    }
}

TEST(cli_decode, json_prints_the_validated_report) {
    const auto [status, out] = run_cli("decode --json " + shell_quote(sample_report));
    ASSERT_EQ(status, 0);
    EXPECT_EQ(out, sample_report + "\n");
}

TEST(cli_decode, reads_a_file_and_standard_input) {
    const std::string pretty = boost::json::serialize(boost::json::parse(sample_report)) + "\n\n";
    const auto path = temp_file("report.json", pretty);
    EXPECT_EQ(run_cli("decode --json --file " + path).out, sample_report + "\n");
    EXPECT_EQ(run_cli("decode --json < " + path).out, sample_report + "\n");
}

TEST(cli_decode, invalid_input_is_exit_2_with_one_line) {
    for (const std::string& bad : {std::string("'{\"events\":'"), std::string("'not json'"),
                                  shell_quote(R"({"failure_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17","events":{}})"),
                                  std::string("--file /nonexistent/report.json")}) {
        const auto quiet = run_cli("decode " + bad);
        EXPECT_EQ(quiet.status, 2) << bad;
        EXPECT_EQ(quiet.out, "") << bad;
        const auto loud = run_cli("decode " + bad, true);
        EXPECT_EQ(std::count(loud.out.begin(), loud.out.end(), '\n'), 1) << loud.out;
        EXPECT_THAT(loud.out, testing::StartsWith("ngfail decode: "));
    }
}

// ---- stats ---------------------------------------------------------------------------------------

TEST(cli_stats, counts_the_sample_file_as_an_independent_count_does) {
    const std::string path = NGFAIL_EXAMPLES_DATA "/rollouts.jsonl";
    std::ifstream in(path);
    std::size_t rows = 0, failures = 0;
    std::map<std::string, std::int64_t> by_kind;
    for (std::string line; std::getline(in, line);) {
        ++rows;
        const auto row = boost::json::parse(line).as_object();
        const auto* id = row.if_contains("_ng_failure_id");
        if (!id || id->is_null()) continue;
        ++failures;
        ++by_kind[std::string(row.at("_ng_failure_events").at(id->as_string()).at("failure_kind").as_string())];
    }
    ASSERT_GE(rows, 1000u);

    const auto [status, out] = run_cli("stats --json " + path);
    ASSERT_EQ(status, 0);
    const auto stats = boost::json::parse(out).as_object();
    EXPECT_EQ(stats.at("rows").as_int64(), static_cast<std::int64_t>(rows));
    EXPECT_EQ(stats.at("failures").as_int64(), static_cast<std::int64_t>(failures));
    EXPECT_EQ(stats.at("successes").as_int64(), static_cast<std::int64_t>(rows - failures));
    EXPECT_EQ(stats.at("invalid_rows").as_int64(), 0);
    const auto& kinds = stats.at("by_kind").as_object();
    EXPECT_EQ(kinds.size(), by_kind.size());
    for (const auto& [k, n] : by_kind) EXPECT_EQ(kinds.at(k).as_int64(), static_cast<std::int64_t>(n)) << k;
}

TEST(cli_stats, draws_bars_and_chains_in_text) {
    const auto [status, out] = run_cli("stats " + std::string(NGFAIL_EXAMPLES_DATA "/rollouts.jsonl"));
    EXPECT_EQ(status, 0);
    EXPECT_THAT(out, testing::HasSubstr("█"));
    EXPECT_THAT(out, testing::HasSubstr(" → "));
    EXPECT_THAT(out, testing::HasSubstr("most common chains"));
}

TEST(cli_stats, counts_invalid_rows_and_names_them) {
    const auto path = temp_file("rows.jsonl", "{\"reward\":1}\nnot json\n{\"_ng_failure_id\":\"x\"}\n\n[1]\n");
    const auto out = boost::json::parse(run_cli("stats --json " + path).out).as_object();
    EXPECT_EQ(out.at("rows").as_int64(), 4);
    EXPECT_EQ(out.at("successes").as_int64(), 1);
    EXPECT_EQ(out.at("invalid_rows").as_int64(), 3);
    EXPECT_THAT(run_cli("stats --json " + path, capture::err).out, testing::HasSubstr("invalid row, line 2"));
    EXPECT_EQ(run_cli("stats /nonexistent.jsonl").status, 2);
}

// `source`'s lines cut into `shards` files in a fresh folder, in order (shard i holds the
// i-th part), named as NeMo Gym names them; the folder.
std::string sharded(const std::string& source, int shards, const std::string& name) {
    std::vector<std::string> lines;
    std::ifstream in(source);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    const std::string folder = testing::TempDir() + name + "-" + std::to_string(::getpid());
    std::filesystem::create_directories(folder);
    const std::size_t per = (lines.size() + static_cast<std::size_t>(shards) - 1) / static_cast<std::size_t>(shards);
    for (int i = 0; i < shards; ++i) {
        std::ofstream out(folder + "/worker" + std::to_string(i) + "_failures.jsonl");
        for (std::size_t n = static_cast<std::size_t>(i) * per; n < std::min(lines.size(), (i + 1) * per); ++n) {
            out << lines[n] << '\n';
        }
    }
    return folder;
}

TEST(cli_stats, shards_by_name_or_pattern_count_as_their_concatenation) {
    const std::string whole = NGFAIL_EXAMPLES_DATA "/rollouts.jsonl";
    const std::string folder = sharded(whole, 3, "stats-shards");
    const auto one = run_cli("stats --json " + whole);
    ASSERT_EQ(one.status, 0);
    const auto by_pattern = run_cli("stats --json '" + folder + "/*_failures.jsonl'");
    ASSERT_EQ(by_pattern.status, 0);
    EXPECT_EQ(boost::json::parse(by_pattern.out), boost::json::parse(one.out));
    const auto by_name = run_cli("stats --json " + folder + "/worker0_failures.jsonl " + folder +
                                 "/worker1_failures.jsonl " + folder + "/worker2_failures.jsonl");
    EXPECT_EQ(boost::json::parse(by_name.out), boost::json::parse(one.out));
    // A rollout's attempts in two shards are one rollout's: the policy's views agree too.
    const std::string policy_rows = NGFAIL_EXAMPLES_DATA "/policy_rollouts.jsonl";
    const std::string policy = " --policy " NGFAIL_EXAMPLES_DATA "/outcome_policy.yaml";
    const std::string policy_folder = sharded(policy_rows, 2, "stats-policy-shards");
    EXPECT_EQ(boost::json::parse(run_cli("stats --json '" + policy_folder + "/*_failures.jsonl'" + policy).out),
              boost::json::parse(run_cli("stats --json " + policy_rows + policy).out));
}

TEST(cli_stats, a_missing_shard_or_an_empty_pattern_is_refused_before_reading) {
    const std::string folder = sharded(NGFAIL_EXAMPLES_DATA "/rollouts.jsonl", 2, "stats-missing");
    const auto missing = run_cli("stats " + folder + "/worker0_failures.jsonl " + folder + "/worker9_failures.jsonl",
                                 capture::err);
    EXPECT_EQ(missing.status, 2);
    EXPECT_THAT(missing.out, testing::HasSubstr("cannot open '" + folder + "/worker9_failures.jsonl'"));
    const auto none = run_cli("stats '" + folder + "/*_nothing.jsonl'", capture::err);
    EXPECT_EQ(none.status, 2);
    EXPECT_THAT(none.out, testing::HasSubstr("matches no file"));
    // An invalid row is named with its shard.
    std::ofstream(folder + "/worker1_failures.jsonl", std::ios::app) << "not json\n";
    EXPECT_THAT(run_cli("stats '" + folder + "/*_failures.jsonl'", capture::err).out,
                testing::HasSubstr("invalid row, " + folder + "/worker1_failures.jsonl line "));
}

TEST(cli_stats, counts_the_deepest_classified_cause_beside_the_outermost_kind) {
    const std::string a = "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17", b = "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e16",
                      c = "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e15";
    const auto event = [](const std::string& id, const std::string& kind, const std::string& cause) {
        return "\"" + id + R"(":{"event_id":")" + id + R"(","failure_kind":")" + kind + "\"" +
               (cause.empty() ? "" : R"(,"cause_id":")" + cause + "\"") + "}";
    };
    const std::string row = R"({"_ng_failure_id":")" + a + R"(","_ng_failure_events":{)" +
                            event(a, "agent_run_error", b) + "," + event(b, "provider_oom_killed", c) + "," +
                            event(c, "undetermined", "") + "}}";
    const auto out = boost::json::parse(run_cli("stats --json " + temp_file("roots.jsonl", row + "\n")).out).as_object();
    EXPECT_EQ(out.at("by_kind").at("agent_run_error").as_int64(), 1);
    const auto& roots = out.at("by_root_cause").as_object();
    EXPECT_EQ(roots.size(), 1u);
    EXPECT_EQ(roots.at("provider_oom_killed").as_int64(), 1) << "the foreign exception below it is not the root cause";
}

TEST(cli_stats, a_failure_whose_event_holds_a_number_no_double_holds_is_counted) {
    const std::string id = "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17";
    const std::string row = R"({"reward":0,"_ng_failure_id":")" + id + R"(","_ng_failure_events":{")" + id +
                            R"(":{"event_id":")" + id + R"(","failure_kind":"cancelled","note":1e400}}})";
    const auto path = temp_file("huge.jsonl", row + "\n");
    const auto out = boost::json::parse(run_cli("stats --json " + path).out).as_object();
    EXPECT_EQ(out.at("failures").as_int64(), 1);
    EXPECT_EQ(out.at("invalid_rows").as_int64(), 0);
    EXPECT_EQ(out.at("by_kind").as_object().at("cancelled").as_int64(), 1);
}

TEST(cli_limits, decode_reads_a_file_up_to_1_mib_and_refuses_one_byte_more) {
    std::string report = R"({"events":{}})";
    report.append((std::size_t{1} << 20) - report.size(), ' ');
    EXPECT_EQ(run_cli("decode --file " + temp_file("at.json", report)).status, 0);
    EXPECT_EQ(run_cli("decode --file " + temp_file("past.json", report + " ")).status, 2);
}

TEST(cli_limits, stats_reads_rows_up_to_1_mib_and_counts_longer_ones_invalid) {
    std::string row = R"({"reward":1})";
    row.append((std::size_t{1} << 20) - row.size(), ' ');
    const auto path = temp_file("big-rows.jsonl", row + "\n" + row + " \n");
    const auto out = boost::json::parse(run_cli("stats --json " + path).out).as_object();
    EXPECT_EQ(out.at("successes").as_int64(), 1);
    EXPECT_EQ(out.at("invalid_rows").as_int64(), 1);
}

// ---- demo ----------------------------------------------------------------------------------------

TEST(cli_demo, meets_at_least_eight_kinds_and_classifies_each_as_expected) {
    const auto [status, out] = run_cli("demo --json");
    ASSERT_EQ(status, 0) << out;
    const auto doc = boost::json::parse(out).as_object();
    EXPECT_TRUE(doc.at("ok").as_bool());
    std::set<std::string> kinds;
    for (const auto& s : doc.at("scenarios").as_array()) {
        const auto& o = s.as_object();
        EXPECT_EQ(o.at("kind").as_string(), o.at("expected").as_string()) << o.at("name").as_string();
        EXPECT_TRUE(o.at("result_agrees").as_bool()) << o.at("name").as_string();
        EXPECT_FALSE(o.at("header").as_string().empty());
        kinds.emplace(o.at("kind").as_string());
        if (o.at("name").as_string() == "OOM kill (Kubernetes)") {
            // Kubernetes shows OOMKilled only inside a message: no structured evidence of an OOM.
            EXPECT_EQ(o.at("kind").as_string(), "provider_command_terminated");
        }
    }
    EXPECT_GE(kinds.size(), 8u);
    for (const char* k : {"provider_oom_killed", "provider_command_terminated", "provider_credentials_rejected",
                          "provider_start_failed",
                          "provider_quota_exhausted", "provider_sandbox_lost", "transport_unreachable",
                          "transport_peer_drop", "transport_timeout"}) {
        EXPECT_TRUE(kinds.contains(k)) << k;
    }
    EXPECT_THAT(out, testing::Not(testing::HasSubstr("sk-demo"))) << "the demo's API key is never printed";
}

TEST(cli_demo, prints_a_summary_without_json) {
    const auto [status, out] = run_cli("demo");
    EXPECT_EQ(status, 0);
    EXPECT_THAT(out, testing::HasSubstr("11 of 11 scenarios classified as expected"));
    EXPECT_THAT(out, testing::HasSubstr("X-NG-Failure-Report: {"));
    EXPECT_THAT(out, testing::Not(testing::HasSubstr("\x1b["))) << "no colours when stdout is not a terminal";
}

}  // namespace

namespace {

// ---- what reaches a terminal ----------------------------------------------------------------

// A report whose every printable field holds terminal control sequences.
std::string hostile_report() {
    const std::string a = "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17";
    const std::string b = "0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e18";
    const std::string evil = R"(\u001b[2J\u001b]0;owned\u0007\r\n\u009b31m)";
    return R"({"failure_id":")" + a + R"(","events":{")" + a + R"(":{"event_id":")" + a +
           R"(","failure_kind":"acme:x)" + evil + R"(","failure_reason":")" + evil +
           R"(","details":{"type":"sandbox","operation":"op)" + evil + R"(","delivery":"delivered"}},")" + b +
           R"(":{"event_id":")" + b + R"(","failure_kind":"k)" + evil + R"(","cause_id":")" + a +
           R"(","details":{"type":"sdk_error","error_type":"t)" + evil + R"("}}}})";
}

bool has_terminal_control(const std::string& text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
        if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
            static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
            return true;
        }
    }
    return false;
}

TEST(cli_decode, every_printed_field_is_escaped) {
    const auto [status, out] = run_cli("decode " + shell_quote(hostile_report()));
    ASSERT_EQ(status, 0);
    EXPECT_FALSE(has_terminal_control(out)) << out;
    EXPECT_THAT(out, testing::HasSubstr("\\x1b[2J"));
}

TEST(cli_decode, an_observed_event_leading_into_the_failure_chain_is_printed_once) {
    const auto [status, out] = run_cli("decode " + shell_quote(hostile_report()));
    ASSERT_EQ(status, 0);
    std::size_t count = 0;
    for (std::size_t at = out.find("4e17  "); at != std::string::npos; at = out.find("4e17  ", at + 1)) ++count;
    EXPECT_EQ(count, 1u) << out;
    EXPECT_THAT(out, testing::HasSubstr("caused by 2b8f6c0d4e17, shown above"));
}

TEST(cli_stats, every_printed_field_is_escaped) {
    const std::string report = hostile_report();
    const std::size_t events_at = report.find("\"events\":") + 9;
    const std::string events = report.substr(events_at, report.size() - events_at - 1);
    const auto path = temp_file("hostile.jsonl", R"({"_ng_failure_id":"0192f1c4-7d2a-7c3e-9a51-2b8f6c0d4e17",)"
                                                 R"("_ng_failure_events":)" + events + "}\n");
    const auto [status, out] = run_cli("stats " + path);
    ASSERT_EQ(status, 0);
    EXPECT_THAT(out, testing::HasSubstr("1 failed"));
    EXPECT_FALSE(has_terminal_control(out)) << out;
}

}  // namespace

// ---- policy --------------------------------------------------------------------------------------

TEST(cli_policy, check_prints_the_effective_tables_and_decide_the_rule) {
    const std::string file = NGFAIL_EXAMPLES_DATA "/outcome_policy.yaml";
    const auto check = run_cli("policy check " + file);
    EXPECT_EQ(check.status, 0);
    EXPECT_THAT(check.out, testing::HasSubstr("kind provider_oom_killed  count_as_zero  line 17"));
    EXPECT_THAT(check.out, testing::HasSubstr("status 404  fail (terminal)")) << "defaults the file keeps";
    EXPECT_EQ(boost::json::parse(run_cli("policy check --json " + file).out).at("max_rollout_attempts"), 3);

    const auto decide = boost::json::parse(
        run_cli("policy decide " + file + " --kind transport_peer_drop --delivery possibly_delivered "
                "--replay before_delivery --json").out).as_object();
    EXPECT_EQ(decide.at("action"), "fail");
    EXPECT_EQ(decide.at("refused"), "replay_unsafe");
    EXPECT_EQ(decide.at("rule"), "domain transport");
    EXPECT_THAT(run_cli("policy decide --defaults --kind judge_failed --saved-answer").out,
                testing::StartsWith("verify: kind judge_failed, shared table"));
}

// A new user had a header value from a log and had to retype it as --kind, --status and
// --stage: decide takes the failure as the header, a report file or a rollout row carries it.
TEST(cli_policy, decide_reads_the_failure_from_a_header_a_report_file_or_a_rollout_row) {
    const auto by_options = run_cli("policy decide --defaults --kind agent_run_error --status 500 --stage agent --json");
    ASSERT_EQ(by_options.status, 0);
    const auto by_header = run_cli("policy decide --defaults " + shell_quote("X-NG-Failure-Report: " + sample_report) + " --json");
    EXPECT_EQ(by_header.status, 0);
    EXPECT_EQ(by_header.out, by_options.out);
    EXPECT_EQ(run_cli("policy decide --defaults --json --file " + temp_file("decide_report.json", sample_report)).out,
              by_options.out);
    const auto report = boost::json::parse(sample_report).as_object();
    boost::json::object row{{"task_id", "t"}, {"rollout", 0}, {"_ng_failure_id", report.at("failure_id")},
                            {"_ng_failure_events", report.at("events")}};
    EXPECT_EQ(run_cli("policy decide --defaults --json --row " + shell_quote(boost::json::serialize(row))).out,
              by_options.out);
    row["response"] = "42";
    EXPECT_EQ(run_cli("policy decide --defaults --json --row " + shell_quote(boost::json::serialize(row))).out,
              run_cli("policy decide --defaults --kind agent_run_error --status 500 --stage agent --saved-answer --json").out)
        << "a row's response is a saved answer to verify";

    const auto both = run_cli("policy decide --defaults " + shell_quote(sample_report) + " --kind cancelled", capture::err);
    EXPECT_EQ(both.status, 2);
    EXPECT_THAT(both.out, testing::HasSubstr("one failure: a HEADER_VALUE, --file F, --row JSON or --kind K"));
    const auto success = run_cli(R"(policy decide --defaults '{"events":{}}')", capture::err);
    EXPECT_EQ(success.status, 2);
    EXPECT_THAT(success.out, testing::HasSubstr("the report holds no failure"));
    EXPECT_EQ(run_cli("policy decide --defaults --row '[1]'").status, 2);
}

// A misspelt fault made a chaos run pass untested: serve refuses to start on one, at once.
TEST(cli_serve, a_misspelt_fault_is_refused_before_serving) {
    const auto typo = run_cli(R"(serve --fault '{"operation":"create","status":429,"retry_after":7}')", capture::err);
    EXPECT_EQ(typo.status, 2);
    EXPECT_THAT(typo.out, testing::HasSubstr("ngfail serve: --fault: fault: unknown field \"retry_after\""));
    const auto op = run_cli(R"(serve --fault '{"operation":"crate"}')", capture::err);
    EXPECT_EQ(op.status, 2);
    EXPECT_THAT(op.out, testing::HasSubstr("unknown operation \"crate\""));
    const auto unused = run_cli(R"(serve --fault '{"operation":"exec","action":"stall","stal_ms":9}')", capture::err);
    EXPECT_EQ(unused.status, 2);
    const auto dropped =
        run_cli(R"(serve --fault '{"operation":"exec","action":"http_error","stall_ms":500}')", capture::err);
    EXPECT_EQ(dropped.status, 2);
    EXPECT_THAT(dropped.out, testing::HasSubstr("field \"stall_ms\" does nothing to action \"http_error\""));
    const auto no_action = run_cli(R"(serve --fault '{"operation":"create","status":500}')", capture::err);
    EXPECT_EQ(no_action.status, 2);
    EXPECT_THAT(no_action.out, testing::HasSubstr("\"action\" is required"));
}

TEST(cli_policy, a_bad_file_or_flag_is_one_clear_error) {
    const auto bad = temp_file("bad_policy.yaml", "actions:\n  status:\n    429: retry\n    429: fail\n");
    const auto check = run_cli("policy check " + bad, capture::err);
    EXPECT_EQ(check.status, 2);
    EXPECT_EQ(check.out, "ngfail policy check: " + bad + ":4: actions.status.429: duplicate key\n");
    EXPECT_THAT(run_cli("policy decide --defaults --kind nope", capture::err).out,
                testing::HasSubstr("--kind 'nope' is not a core or registered kind"));
    EXPECT_THAT(run_cli("policy decide --defaults --kind cancelled --stage judging", capture::err).out,
                testing::HasSubstr("--stage 'judging' is not one of admission"));
    EXPECT_EQ(run_cli("policy frobnicate").status, 2);
}

// Names from a policy file reach the terminal escaped, whatever the command and format: ESC,
// DEL and C1 controls (as characters or as lone bytes) never pass raw.
bool has_raw_control(const std::string& text) {
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
        if ((c < 0x20 && c != '\n') || c == 0x7f || (c == 0xc2 && next >= 0x80 && next <= 0x9f)) return true;
        if (c >= 0x80 && c < 0xc0) return true;  // a lone continuation byte: a C1 control on 8-bit terminals
        i += c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    }
    return false;
}

TEST(cli_policy, names_from_the_file_are_printed_escaped) {
    const auto file = temp_file("control_names.yaml",
                                "classes:\n"
                                "  - {class: \"red\\x1b[31m\\x7f\", kind: cancelled}\n"
                                "  - {class: \"csi\\x9b2J\", domain: provider}\n"
                                "  - {class: \"raw \x1b[2J \x9b\", status: 418}\n"
                                "actions:\n"
                                "  class: {\"red\\x1b[31m\\x7f\": retry, \"csi\\x9b2J\": fail}\n"
                                "count_failure_classes_as_zero: [\"csi\\x9b2J\"]\n");
    for (const std::string& args : {"policy check " + file, "policy check --json " + file,
                                    "policy decide " + file + " --kind cancelled",
                                    "policy decide --json " + file + " --kind cancelled",
                                    "stats " NGFAIL_EXAMPLES_DATA "/policy_rollouts.jsonl --policy " + file,
                                    "stats --json " NGFAIL_EXAMPLES_DATA "/policy_rollouts.jsonl --policy " + file}) {
        const auto run = run_cli(args, capture::out_and_err);
        EXPECT_EQ(run.status, 0) << args << "\n" << run.out;
        EXPECT_FALSE(has_raw_control(run.out)) << args << "\n" << run.out;
    }
    EXPECT_THAT(run_cli("policy check " + file).out, testing::HasSubstr("red\\x1b[31m\\x7f  <-  kind cancelled"));
    EXPECT_THAT(run_cli("policy decide " + file + " --kind cancelled").out, testing::HasSubstr("class red\\x1b[31m\\x7f"));
    const auto json = boost::json::parse(run_cli("policy check --json " + file).out);
    EXPECT_EQ(json.at("classification").at(0).at("class"), "red\x1b[31m\x7f") << "JSON carries the name itself";

    // The loader's errors quote the file escaped, and cut.
    const auto key = temp_file("control_key.yaml", "actions:\n  \"\\x1b]0;pwned\\x07" + std::string(300, 'k') + "\": 1\n");
    const auto bad_key = run_cli("policy check " + key, capture::err);
    EXPECT_FALSE(has_raw_control(bad_key.out)) << bad_key.out;
    EXPECT_THAT(bad_key.out, testing::HasSubstr("actions.\\x1b]0;pwned\\x07kkk"));
    EXPECT_LT(bad_key.out.size(), 200U + 120U + key.size()) << bad_key.out;
    const auto value = temp_file("control_value.yaml", "max_rollout_attempts: \"\\x1b[2J\"\n");
    const auto bad_value = run_cli("policy decide " + value + " --kind cancelled", capture::err);
    EXPECT_FALSE(has_raw_control(bad_value.out)) << bad_value.out;
    EXPECT_THAT(bad_value.out, testing::HasSubstr("not '\\x1b[2J'"));
}

TEST(cli_stats, with_a_policy_prints_every_recovery_state_and_both_scores) {
    const std::string args = "stats " NGFAIL_EXAMPLES_DATA "/policy_rollouts.jsonl --policy " NGFAIL_EXAMPLES_DATA
                             "/outcome_policy.yaml";
    const auto text = run_cli(args);
    ASSERT_EQ(text.status, 0);
    for (const char* state : {"scored", "counted_zero", "retryable", "exhausted", "terminal", "masked", "missing"}) {
        EXPECT_THAT(text.out, testing::HasSubstr(std::string("  ") + state)) << state;
    }
    EXPECT_THAT(text.out, testing::HasSubstr("failures excluded           0.4000 over 5 rollouts"));
    EXPECT_THAT(text.out, testing::HasSubstr("counted classes as zero     0.3333 over 6 rollouts"));

    const auto json = run_cli(args + " --json");
    const auto document = boost::json::parse(json.out).as_object();  // one document: parse throws otherwise
    const auto& policy = document.at("policy").as_object();
    EXPECT_EQ(policy.at("by_recovery_state").at("exhausted"), 1);
    EXPECT_EQ(policy.at("score_counted_zeros").at("rollouts"), 6);
    EXPECT_EQ(policy.at("rollouts").as_array().size(), 12U);
    EXPECT_EQ(run_cli("stats " NGFAIL_EXAMPLES_DATA "/policy_rollouts.jsonl --rollouts-per-task 2").status, 2);
}

// Under a policy, a row whose saved action cannot be read was left out of the policy's
// counts alone, silently: it is an invalid row, named on stderr.
TEST(cli_stats, with_a_policy_a_row_it_cannot_place_is_invalid_and_named) {
    std::ifstream in(NGFAIL_EXAMPLES_DATA "/policy_rollouts.jsonl");
    std::string failed;
    while (std::getline(in, failed) && failed.find("_ng_failure_id") == std::string::npos) {
    }
    ASSERT_FALSE(failed.empty());
    auto row = boost::json::parse(failed).as_object();
    row["_ng_failure_action"] = "FAIL";
    const auto path = temp_file("saved.jsonl", R"({"task_id":"t","rollout":0,"reward":1.0})" "\n" +
                                                   boost::json::serialize(row) + "\n");
    const auto run = run_cli("stats " + path + " --policy " NGFAIL_EXAMPLES_DATA "/outcome_policy.yaml", capture::out_and_err);
    EXPECT_THAT(run.out, testing::HasSubstr("rows 2: 1 succeeded, 0 failed, 1 invalid"));
    EXPECT_THAT(run.out, testing::HasSubstr(R"(invalid row, line 2: _ng_failure_action: "FAIL" is not an action)"));
}
