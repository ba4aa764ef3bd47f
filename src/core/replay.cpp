#include <ngfail/replay.hpp>

#include <ostream>

namespace ngfail {

std::ostream& operator<<(std::ostream& out, replay_policy p) { return out << name(p); }

}  // namespace ngfail
