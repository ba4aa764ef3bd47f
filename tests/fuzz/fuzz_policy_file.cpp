// Any bytes as a policy file: a policy or one protocol_violation naming the source, never a
// crash; what is accepted decides every core kind without refusing a supported fail.
#include <ngfail/policy/choose_action.hpp>
#include <ngfail/policy/policy_file.hpp>

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto policy = ngfail::policy::parse_outcome_policy(text, "fuzz.yaml");
    if (!policy) {
        if (policy.error().code() != ngfail::kind::protocol_violation) std::abort();
        if (policy.error().reason().substr(0, 9) != "fuzz.yaml") std::abort();
        return 0;
    }
    for (const ngfail::kind k : ngfail::all_kinds()) {
        for (const int status : {0, 404, 429, 503}) {
            const auto d = ngfail::policy::choose_action(
                policy.value(), {.kind = make_error_code(k), .http_status = status ? std::optional(status) : std::nullopt});
            if (d.refused != ngfail::policy::refusal::none && d.action != ngfail::policy::outcome_action::fail) std::abort();
            if (d.counts_as_zero != (d.action == ngfail::policy::outcome_action::count_as_zero)) std::abort();
        }
    }
    return 0;
}
