#include "style.hpp"

#include <cstdlib>
#include <unistd.h>

namespace ngfail::cli {
namespace {

bool colours_on(int fd) { return ::isatty(fd) == 1 && std::getenv("NO_COLOR") == nullptr; }

}  // namespace

style style::for_stdout() { return style(colours_on(STDOUT_FILENO)); }
style style::for_stderr() { return style(colours_on(STDERR_FILENO)); }

}  // namespace ngfail::cli
