// How the process runtime reads a code kernel's output: the cell's text as it printed it, the
// kernel's own line (and the newline before it) taken out wherever the reads cut it, and the
// outcome that line carries. The kernels themselves run in tests/e2e/process_runtime_test.
#include "opensandbox/emulator/process/process_kernel.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using ngfail::opensandbox::testing::detail::kernel_output;
using ngfail::opensandbox::testing::detail::outcome_of;
using testing::ElementsAre;
using testing::IsEmpty;

const std::string marker = "__ngfail_kernel_test:";
const std::string kernel_line = "\n" + marker + R"({"count": 3, "result": "42"})" + "\n";

// Every event of stdout, fed in `pieces`, then finished.
std::vector<std::string> stdout_events(kernel_output& out, std::initializer_list<std::string_view> pieces) {
    std::vector<std::string> events;
    for (const std::string_view piece : pieces) {
        for (std::string& e : out.add(true, piece)) events.push_back(std::move(e));
    }
    for (std::string& e : out.finish(true)) events.push_back(std::move(e));
    return events;
}

TEST(kernel_output, lines_keep_their_newline_and_the_kernels_line_is_taken_out) {
    kernel_output out(marker);
    EXPECT_THAT(stdout_events(out, {"a\nb\n" + kernel_line}), ElementsAre("a\n", "b\n"));
    ASSERT_TRUE(out.complete());
    EXPECT_EQ(out.outcome()->execution_count, 3);
    EXPECT_EQ(out.outcome()->result, "42");
}

TEST(kernel_output, output_without_an_end_loses_only_the_kernels_newline) {
    kernel_output out(marker);
    EXPECT_THAT(stdout_events(out, {"no end" + kernel_line}), ElementsAre("no end"));
    kernel_output blank(marker);
    EXPECT_THAT(stdout_events(blank, {"a\n\n" + kernel_line}), ElementsAre("a\n", "\n")) << "a blank line of its own stays";
}

TEST(kernel_output, the_kernels_line_is_found_wherever_the_reads_cut_it) {
    const std::string whole = "x\n" + kernel_line;
    for (std::size_t cut = 0; cut <= whole.size(); ++cut) {
        kernel_output out(marker);
        const std::string first = whole.substr(0, cut), second = whole.substr(cut);
        std::string joined;
        for (const std::string& e : stdout_events(out, {first, second})) joined += e;
        EXPECT_EQ(joined, "x\n") << "cut at " << cut;
        EXPECT_TRUE(out.complete()) << "cut at " << cut;
    }
}

TEST(kernel_output, a_quiet_kernel_lets_held_output_go_but_never_half_of_its_line) {
    kernel_output out(marker);
    EXPECT_THAT(out.add(true, "step 1\n"), IsEmpty()) << "it may end in the kernel's newline";
    EXPECT_THAT(out.idle(true), ElementsAre("step 1\n"));
    EXPECT_THAT(out.add(true, "50%"), IsEmpty());
    EXPECT_THAT(out.idle(true), ElementsAre("50%")) << "a progress line without its end goes out too";
    EXPECT_THAT(out.add(true, "\n" + marker.substr(0, 8)), IsEmpty());
    EXPECT_THAT(out.idle(true), IsEmpty()) << "the newline before the start of the kernel's line is the kernel's";
    EXPECT_THAT(out.add(true, marker.substr(8) + R"({"count": 1})" + "\n"), IsEmpty());
    EXPECT_TRUE(out.complete());
}

TEST(kernel_output, stderr_goes_out_a_line_at_a_time_and_a_long_line_in_pieces) {
    kernel_output out(marker);
    EXPECT_THAT(out.add(false, "warning\npartial"), ElementsAre("warning\n"));
    EXPECT_THAT(out.finish(false), ElementsAre("partial"));
    const std::string long_line(kernel_output::max_line + 10, 'y');
    const auto pieces = out.add(false, long_line);
    ASSERT_EQ(pieces.size(), 1u);
    EXPECT_EQ(pieces[0].size(), long_line.size()) << "bounded: a piece once past max_line";
}

TEST(kernel_output, what_a_cell_left_running_prints_after_the_kernels_line_is_not_the_cells) {
    kernel_output out(marker);
    EXPECT_THAT(stdout_events(out, {"mine\n" + kernel_line + "a child's\n"}), ElementsAre("mine\n"));
}

TEST(kernel_output, a_line_that_looks_like_the_kernels_but_is_not_its_json_is_output) {
    kernel_output out(marker);
    EXPECT_THAT(stdout_events(out, {marker + "not json\n"}), ElementsAre(marker + "not json\n"));
    EXPECT_FALSE(out.complete());
}

TEST(outcome_of, reads_each_kernels_line) {
    const auto raised = outcome_of(R"({"count": 2, "ename": "ZeroDivisionError", "evalue": "division by zero",
                                      "traceback": ["Traceback", "ZeroDivisionError: division by zero"]})");
    ASSERT_TRUE(raised && raised->raised);
    EXPECT_EQ(raised->execution_count, 2);
    EXPECT_EQ(raised->raised->name, "ZeroDivisionError");
    EXPECT_EQ(raised->raised->value, "division by zero");
    EXPECT_EQ(raised->raised->traceback.size(), 2u);
    const auto failed_bash = outcome_of(R"({"count":4,"status":3})");
    ASSERT_TRUE(failed_bash && failed_bash->raised);
    EXPECT_EQ(failed_bash->raised->name, "") << "bash_kernel's failed cell: no name, its status the value";
    EXPECT_EQ(failed_bash->raised->value, "3");
    const auto ok_bash = outcome_of(R"({"count":5,"status":0})");
    ASSERT_TRUE(ok_bash);
    EXPECT_FALSE(ok_bash->raised);
    for (const std::string_view bad : {"", "[]", "{}", R"({"count": "1"})", "{\"count\": 1"}) {
        EXPECT_FALSE(outcome_of(bad)) << bad;
    }
}

}  // namespace
