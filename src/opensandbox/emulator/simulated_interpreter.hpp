// What code does in a simulated kernel of a code context (execd's Jupyter kernels). A bash
// kernel runs the code as the simulated shell does, keeping its directory and variables. Every
// other language runs a tiny Python-like language, line by line:
//
//   x = 40            # a name bound to a whole number or a 'string'
//   print(x + 2)      # stdout "42\n"; `+` adds numbers and joins strings
//   import time; time.sleep(1.5)   # imports do nothing; sleep makes the run take that long
//   raise ValueError("bad")        # the run ends with that error (ename, evalue, traceback)
//   x                 # the last line's value is the run's result: "40"
//
// A name never bound raises NameError, anything else SyntaxError, as a kernel reports them.
// Names persist between runs of the same context, within `max_kernel_bytes`; a run prints at
// most `max_kernel_output`. A run holds no more memory than its code and these.
#pragma once

#include "simulated_shell.hpp"

#include <cstddef>
#include <string_view>

namespace ngfail::opensandbox::testing::detail {

// What one kernel may hold in names, all values together: past it a run raises MemoryError
// and binds nothing.
inline constexpr std::size_t max_kernel_bytes = 64 * 1024;
// What one run may print: past it the run raises MemoryError.
inline constexpr std::size_t max_kernel_output = 1 << 20;

// The languages a simulated code-interpreter image has kernels for.
[[nodiscard]] bool has_kernel(std::string_view language) noexcept;

// Runs `code` in `kernel`: counts the cell, binds names, and says what the run prints,
// yields and raises (`simulated_run::in_kernel` set).
[[nodiscard]] simulated_run interpret(std::string_view code, kernel_state& kernel, const file_reader& files);

}  // namespace ngfail::opensandbox::testing::detail
