#include <ngfail/result.hpp>

namespace ngfail::detail {

failure current_failure(const std::error_code& foreign_kind) noexcept {
    try {
        throw;
    } catch (const failure_event& event) {
        return failure_of(event);
    } catch (...) {
        try {
            return failure_of(foreign_failure(std::current_exception(), foreign_kind));
        } catch (...) {  // out of memory while describing it: the kind alone
            return failure(foreign_kind);
        }
    }
}

}  // namespace ngfail::detail
