// <ngfail/opensandbox/connection_error.hpp> — the cause a transport failure carries (target
// ngfail::opensandbox_client): the `boost::system::error_code` and the phase it happened in.
#pragma once

#include <ngfail/opensandbox/classify.hpp>  // phase

#include <boost/system/system_error.hpp>

namespace ngfail::opensandbox {

// A transport failure, with the phase it happened in (connecting means nothing was sent).
class connection_error : public boost::system::system_error {
public:
    connection_error(boost::system::error_code ec, phase at)
        : boost::system::system_error(ec), at_(at) {}
    [[nodiscard]] phase at() const noexcept { return at_; }

private:
    phase at_;
};

}  // namespace ngfail::opensandbox
