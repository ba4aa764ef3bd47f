// Drives the built `ngfail` binary the way a script would.
#include <ngfail/kind.hpp>

#include <boost/json.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace {

struct outcome {
    int status;
    std::string out;  // stdout only; stderr is sent to /dev/null unless asked for
};

outcome run_cli(const std::string& args, bool merge_stderr = false) {
    const std::string command =
        std::string(NGFAIL_CLI_PATH) + ' ' + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
    FILE* pipe = ::popen(command.c_str(), "r");
    if (!pipe) throw std::runtime_error("popen failed");
    std::string out;
    std::array<char, 4096> buffer{};
    for (std::size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) out.append(buffer.data(), n);
    const int raw = ::pclose(pipe);
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, out};
}

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
    EXPECT_THAT(run_cli("kinds --bogus", true).out, testing::HasSubstr("unexpected argument '--bogus'"));
}

TEST(cli, unknown_command_is_bad_input) {
    EXPECT_EQ(run_cli("no-such-command").status, 2);
    EXPECT_EQ(run_cli("").status, 2);
}

TEST(cli, top_level_help_lists_the_commands) {
    const auto [status, out] = run_cli("--help");
    EXPECT_EQ(status, 0);
    EXPECT_THAT(out, testing::HasSubstr("kinds"));
}

}  // namespace
