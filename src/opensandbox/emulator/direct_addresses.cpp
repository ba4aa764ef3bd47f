#include "direct_addresses.hpp"

#include <exception>
#include <vector>

namespace ngfail::opensandbox::testing::detail {

void direct_addresses::attach(opener open, closer close) {
    const std::lock_guard lock(mutex_);
    open_ = std::move(open);
    close_ = std::move(close);
}

void direct_addresses::open(const std::string& sandbox_id, address& a) {
    unsigned short port = 0;
    try {
        port = open_(a.port);  // the same address as before, when it is still free
    } catch (const std::exception&) {
        port = open_(0);
    }
    a.port = port;
    a.open = true;
    by_port_[port] = sandbox_id;
    ++open_count_;
}

std::optional<unsigned short> direct_addresses::port_for(const std::string& sandbox_id, bool running) {
    if (!running) return std::nullopt;
    const std::lock_guard lock(mutex_);
    if (!open_) return std::nullopt;
    auto it = by_sandbox_.find(sandbox_id);
    if (it != by_sandbox_.end() && it->second.open) return it->second.port;
    if (open_count_ >= max_open) return std::nullopt;
    if (it == by_sandbox_.end()) it = by_sandbox_.emplace(sandbox_id, address{}).first;
    try {
        open(sandbox_id, it->second);
    } catch (const std::exception&) {
        return std::nullopt;  // no port to be had (out of descriptors): the shared one stands in
    }
    return it->second.port;
}

void direct_addresses::reconcile(const running_check& running) {
    const std::lock_guard lock(mutex_);
    for (auto it = by_sandbox_.begin(); it != by_sandbox_.end();) {
        address& a = it->second;
        const std::optional<bool> runs = running(it->first);
        if (a.open && runs != true) {
            close_(a.port);
            a.open = false;
            --open_count_;
            by_port_.erase(a.port);  // until it opens again, the port is nobody's
        } else if (!a.open && runs == true && open_count_ < max_open) {
            try {
                open(it->first, a);
            } catch (const std::exception&) {
                // no port now: the next request for its endpoint tries again
            }
        }
        if (!runs) {  // gone, its port closed above
            it = by_sandbox_.erase(it);
        } else {
            ++it;
        }
    }
}

std::optional<std::string> direct_addresses::sandbox_at(unsigned short port) const {
    const std::lock_guard lock(mutex_);
    const auto it = by_port_.find(port);
    return it == by_port_.end() ? std::nullopt : std::optional(it->second);
}

}  // namespace ngfail::opensandbox::testing::detail
