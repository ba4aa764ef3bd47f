// The emulator's simulated kernels: what a code context keeps between runs, and what code
// that raises reports.
#include "opensandbox/emulator/simulated_interpreter.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

// This binary counts the bytes it allocates, to show what a run copies.
namespace {
std::atomic<std::size_t> allocated_bytes{0};
}  // namespace

void* operator new(std::size_t size) {
    allocated_bytes += size;
    if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

namespace emulator = ngfail::opensandbox::testing::detail;
using emulator::has_kernel;
using emulator::interpret;
using emulator::kernel_state;
using emulator::max_kernel_bytes;

const emulator::file_reader no_files{};

TEST(simulated_interpreter, names_persist_between_runs_and_the_last_expression_is_the_result) {
    kernel_state kernel{.language = "python"};
    const auto first = interpret("x = 40\nprint(x + 2)", kernel, no_files);
    EXPECT_EQ(first.stdout_text, "42\n");
    EXPECT_FALSE(first.result_text) << "an assignment-free print yields nothing";
    EXPECT_EQ(first.execution_count, 1);
    EXPECT_TRUE(first.in_kernel);
    const auto second = interpret("greeting = 'hi'; greeting + ' there'\n\n", kernel, no_files);
    EXPECT_EQ(second.result_text, "'hi there'") << "a string's repr, as Python shows it";
    EXPECT_EQ(second.execution_count, 2);
    EXPECT_EQ(interpret("x", kernel, no_files).result_text, "40");
}

TEST(simulated_interpreter, errors_stop_the_run_with_their_name_value_and_traceback) {
    kernel_state kernel{.language = "python"};
    const auto undefined = interpret("print('before')\nnope\nprint('after')", kernel, no_files);
    EXPECT_EQ(undefined.stdout_text, "before\n") << "what ran before the error is kept";
    ASSERT_TRUE(undefined.raised);
    EXPECT_EQ(undefined.raised->name, "NameError");
    EXPECT_EQ(undefined.raised->value, "name 'nope' is not defined");
    EXPECT_EQ(undefined.raised->traceback.back(), "NameError: name 'nope' is not defined");
    EXPECT_EQ(undefined.exit_code, 0) << "a kernel's run has no exit code";
    const auto raised = interpret("raise ValueError(\"bad input\")", kernel, no_files);
    ASSERT_TRUE(raised.raised);
    EXPECT_EQ(raised.raised->name, "ValueError");
    EXPECT_EQ(raised.raised->value, "bad input");
    EXPECT_EQ(interpret("1 + 'a'", kernel, no_files).raised->name, "TypeError");
    EXPECT_EQ(interpret("def f(:", kernel, no_files).raised->name, "SyntaxError");
    EXPECT_EQ(interpret("9223372036854775807 + 1", kernel, no_files).raised->name, "OverflowError");
    EXPECT_EQ(kernel.execution_count, 5) << "a cell that raised is counted too";
}

TEST(simulated_interpreter, sleep_makes_the_run_take_time_and_imports_do_nothing) {
    kernel_state kernel{.language = "python"};
    const auto slept = interpret("import time\ntime.sleep(1.5)", kernel, no_files);
    EXPECT_FALSE(slept.raised);
    EXPECT_EQ(slept.runs_for, std::chrono::milliseconds(1500));
    EXPECT_EQ(interpret("time.sleep(-1)", kernel, no_files).raised->name, "ValueError");
}

TEST(simulated_interpreter, what_a_kernel_holds_is_bounded) {
    kernel_state kernel{.language = "python"};
    EXPECT_FALSE(interpret("s = 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'", kernel, no_files).raised);
    bool refused = false;
    for (int i = 0; i < 20 && !refused; ++i) {  // doubling: 32 bytes * 2^12 passes the bound
        const auto grown = interpret("s = s + s", kernel, no_files);
        refused = grown.raised && grown.raised->name == "MemoryError";
    }
    EXPECT_TRUE(refused);
    EXPECT_LE(std::get<std::string>(kernel.names.at("s")).size(), max_kernel_bytes) << "the refused binding is not made";
}

TEST(simulated_interpreter, what_a_run_prints_is_bounded_and_long_code_costs_no_more_than_itself) {
    kernel_state kernel{.language = "python"};
    EXPECT_FALSE(interpret("s = '" + std::string(60000, 'x') + "'", kernel, no_files).raised);
    std::string code;
    for (int i = 0; i < 40; ++i) code += "print(s);";  // 40 x 60 kB would be 2.4 MB
    const auto loud = interpret(code, kernel, no_files);
    ASSERT_TRUE(loud.raised);
    EXPECT_EQ(loud.raised->name, "MemoryError");
    EXPECT_LE(loud.stdout_text.size(), emulator::max_kernel_output);
    const std::string many(1 << 20, ';');  // a million empty statements, then one
    EXPECT_EQ(interpret(many + "1 + 1", kernel, no_files).result_text, "2");
    std::string terms = "0";
    for (int i = 0; i < 100000; ++i) terms += "+1";
    EXPECT_EQ(interpret(terms, kernel, no_files).result_text, "100000");
}

TEST(simulated_interpreter, a_bash_kernel_is_the_simulated_shell_with_its_state_kept) {
    kernel_state kernel{.language = "bash"};
    EXPECT_EQ(interpret("cd /workspace && export A=1", kernel, no_files).stdout_text, "");
    EXPECT_EQ(interpret("pwd; echo $A", kernel, no_files).stdout_text, "/workspace\n1\n");
    const auto failed = interpret("exit 3", kernel, no_files);
    ASSERT_TRUE(failed.raised) << "bash_kernel reports a failed cell as an error";
    EXPECT_EQ(failed.raised->name, "");
    EXPECT_EQ(failed.raised->value, "3");
}

TEST(simulated_interpreter, the_image_has_kernels_for_its_languages_only) {
    for (const char* language : {"python", "bash", "java", "javascript", "typescript", "go"}) {
        EXPECT_TRUE(has_kernel(language)) << language;
    }
    for (const char* language : {"", "command", "sql", "cobol", "Python"}) EXPECT_FALSE(has_kernel(language)) << language;
}

// ---- bounds: work linear in the code, memory bounded ----------------------------------------

TEST(simulated_interpreter, using_a_name_copies_nothing) {
    kernel_state kernel{.language = "python"};
    const std::string value(60'000, 'v');
    ASSERT_FALSE(interpret("x = '" + value + "'", kernel, no_files).raised);
    // Each use of a name copied its value: 8 million uses of a 60 KB name were 480 GB of
    // copying. A use now borrows the kernel's value; only the result is made.
    std::string code;
    for (int i = 0; i < 1000; ++i) code += "x\n";
    const std::size_t before = allocated_bytes.load();
    const auto ran = interpret(code, kernel, no_files);
    EXPECT_LT(allocated_bytes.load() - before, 4u * value.size()) << "1,000 uses copied 60 MB";
    EXPECT_FALSE(ran.raised);
    EXPECT_EQ(ran.result_text, "'" + value + "'");
}

TEST(simulated_interpreter, the_sleeps_of_a_run_saturate_instead_of_wrapping) {
    kernel_state kernel{.language = "python"};
    std::string code;
    for (int i = 0; i < 110'000; ++i) code += "time.sleep(86400)\n";
    EXPECT_EQ(interpret(code, kernel, no_files).runs_for, emulator::longest_wait);
}

TEST(simulated_interpreter, a_bash_kernels_variables_are_bounded_as_the_docs_say) {
    kernel_state kernel{.language = "bash"};
    std::string code = "export A=x";
    for (int i = 0; i < 40; ++i) code += "; export A=$A$A";
    const auto ran = interpret(code, kernel, no_files);
    EXPECT_LE(kernel.shell.env().at("A").size(), max_kernel_bytes);
    EXPECT_NE(ran.stderr_text.find("at most 64 KiB"), std::string::npos);
}

TEST(simulated_interpreter, many_bindings_keep_a_running_total) {
    kernel_state kernel{.language = "python"};
    // Each binding summed every name the kernel held: 10,000 names were 10^8 steps a run.
    std::string code;
    for (int i = 0; i < 5000; ++i) code += "n" + std::to_string(i) + " = " + std::to_string(i) + "\n";
    EXPECT_FALSE(interpret(code, kernel, no_files).raised);
    EXPECT_EQ(kernel.names.size(), 5000u);
    const auto over = interpret("big = '" + std::string(max_kernel_bytes, 'b') + "'", kernel, no_files);
    ASSERT_TRUE(over.raised);
    EXPECT_EQ(over.raised->name, "MemoryError");
    EXPECT_EQ(interpret("n4999", kernel, no_files).result_text, "4999") << "what it held is kept";
}

}  // namespace
