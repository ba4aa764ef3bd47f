#include <ngfail/policy/outcome_action.hpp>

#include <ostream>

namespace ngfail::policy {

std::ostream& operator<<(std::ostream& out, outcome_action a) { return out << name(a); }

}  // namespace ngfail::policy
