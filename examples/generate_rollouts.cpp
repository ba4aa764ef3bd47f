// Writes rollout rows (JSONL) with a realistic mix of outcomes, as NeMo Gym's collection
// stores them: `_ng_failure_id` and `_ng_failure_events` beside each rollout's fields.
// Deterministic for a given seed. Usage: generate_rollouts [ROWS [SEED]] > rollouts.jsonl
#include <ngfail/json.hpp>
#include <ngfail/sandbox.hpp>

#include <boost/json.hpp>

#include <iostream>
#include <random>
#include <string>

namespace {

using ngfail::kind;

class generator {
public:
    explicit generator(unsigned seed) : rng_(seed) {}

    boost::json::object row(int index) {
        boost::json::object row{{"task_id", "task-" + std::to_string(index % 250)},
                                {"rollout", index},
                                {"reward", 0.0}};
        const int dice = pick(0, 99);
        ngfail::failure_report report;
        if (dice < 55) {
            row["reward"] = pick(0, 1) == 1 ? 1.0 : 0.0;  // a plain success
        } else if (dice < 65) {
            report = recovered();  // a success that a retry rescued
            row["reward"] = 1.0;
        } else {
            report = ngfail::report_for(failed());
        }
        ngfail::set_rollout_report(row, report);
        return row;
    }

private:
    int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
    std::string sandbox() { return "sbx-" + std::to_string(pick(1000, 9999)); }

    ngfail::failure sandbox_failure(std::string operation, kind k, std::optional<ngfail::delivery> d,
                                    ngfail::cause cause = {}, std::optional<int> status = {}) {
        return ngfail::make_sandbox_failure({.operation = std::move(operation),
                                             .kind = k,
                                             .sandbox_id = sandbox(),
                                             .cause = std::move(cause),
                                             .provider = "opensandbox",
                                             .http_status = status,
                                             .delivery = d,
                                             .boundary = ngfail::boundary::resources_server,
                                             .stage = ngfail::stage::agent});
    }

    ngfail::failure sdk_root(std::string type, std::string message) {
        return ngfail::failure(ngfail::event_info{.kind = kind::undetermined, .reason = message},
                               ngfail::sdk_error_details{.error_type = std::move(type), .message = std::move(message)});
    }

    ngfail::failure agent_over(ngfail::failure cause) {
        return ngfail::failure(ngfail::event_info{.kind = kind::agent_run_error,
                                                  .reason = "the agent run failed",
                                                  .boundary = ngfail::boundary::agent,
                                                  .stage = ngfail::stage::agent,
                                                  .http_status = 500,
                                                  .cause = std::move(cause)});
    }

    ngfail::failure failed() {
        switch (pick(0, 11)) {
            case 0:
            case 1:
                return agent_over(sandbox_failure("exec", kind::provider_oom_killed, ngfail::delivery::delivered));
            case 2:
                return agent_over(sandbox_failure("exec", kind::provider_command_terminated, ngfail::delivery::delivered));
            case 3:
            case 4:
                return agent_over(sandbox_failure("exec", kind::transport_peer_drop, ngfail::delivery::possibly_delivered,
                                                  sdk_root("boost::system::system_error", "End of file")));
            case 5:
                return sandbox_failure("create", kind::provider_quota_exhausted, ngfail::delivery::not_sent,
                                       sdk_root("ngfail::opensandbox::api_error", "HTTP 429: pool is full"), 429);
            case 6:
                return sandbox_failure("create", kind::provider_start_failed, std::nullopt);
            case 7:
                return agent_over(sandbox_failure("get", kind::provider_sandbox_lost, ngfail::delivery::not_sent,
                                                  sdk_root("ngfail::opensandbox::api_error", "HTTP 404: not found"), 404));
            case 8:
                return ngfail::failure(ngfail::event_info{.kind = kind::judge_unparseable,
                                                          .reason = "the judge's verdict could not be read",
                                                          .boundary = ngfail::boundary::environment,
                                                          .stage = ngfail::stage::verification});
            case 9:
                return ngfail::failure(ngfail::event_info{.kind = kind::agent_timeout,
                                                          .reason = "the agent run exceeded 600 s",
                                                          .boundary = ngfail::boundary::harness,
                                                          .stage = ngfail::stage::agent},
                                       ngfail::model_details{.operation = "chat", .model = "policy", .attempt = 3});
            case 10:
                return agent_over(sandbox_failure("exec", kind::transport_timeout, ngfail::delivery::possibly_delivered));
            default:
                return ngfail::failure(ngfail::event_info{.kind = kind::transport_unreachable,
                                                          .reason = "the resources server could not be reached",
                                                          .boundary = ngfail::boundary::collection,
                                                          .stage = ngfail::stage::admission});
        }
    }

    ngfail::failure_report recovered() {
        ngfail::failure_report report;
        const int attempts = pick(1, 2);
        for (int i = 0; i < attempts; ++i) {
            auto observed = ngfail::report_for(sandbox_failure("create", kind::transport_unreachable, ngfail::delivery::not_sent,
                                                               sdk_root("ngfail::opensandbox::api_error",
                                                                        "HTTP 502 BACKEND_CONNECTION_FAILED"),
                                                               502));
            observed.failure_id.reset();
            ngfail::merge(report, observed).value();  // fresh ids: never a twin
        }
        return report;
    }

    std::mt19937 rng_;
};

}  // namespace

int main(int argc, char** argv) {
    const int rows = argc > 1 ? std::stoi(argv[1]) : 1000;
    const unsigned seed = argc > 2 ? static_cast<unsigned>(std::stoul(argv[2])) : 2026;
    generator g(seed);
    for (int i = 0; i < rows; ++i) std::cout << boost::json::serialize(g.row(i)) << '\n';
}
