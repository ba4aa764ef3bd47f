#include "style.hpp"

#include <cstdlib>
#include <unistd.h>

namespace ngfail::cli {

style style::for_stdout() { return style(::isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr); }

}  // namespace ngfail::cli
