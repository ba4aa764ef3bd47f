// The execd endpoints of sandboxes, remembered so that an exec costs no endpoint lookup:
// bounded (the least recently used entry goes first), each entry for at most its time to
// live, and forgotten when the sandbox is killed, paused or resumed, or its endpoint fails
// to connect. Thread-safe.
#pragma once

#include <ngfail/opensandbox/client.hpp>

#include "reply.hpp"

#include <chrono>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace ngfail::opensandbox::detail {

// An endpoint as the server gave it (its headers go on every request) and where it leads,
// parsed once: shared, so that an exec takes it with one reference count, not a copy.
struct execd_route {
    endpoint_info endpoint;
    target where;
};
using shared_route = std::shared_ptr<const execd_route>;

class endpoint_cache {
public:
    endpoint_cache(std::size_t capacity, std::chrono::milliseconds time_to_live)
        : capacity_(capacity), time_to_live_(time_to_live) {}

    [[nodiscard]] shared_route find(std::string_view sandbox_id, int port);  // null when absent
    void store(std::string_view sandbox_id, int port, shared_route route);
    void forget(std::string_view sandbox_id);

private:
    using clock = std::chrono::steady_clock;
    using key = std::pair<std::string, int>;
    struct entry {
        shared_route route;
        clock::time_point expires;
        std::list<key>::iterator use;  // its place in the recency order
    };

    std::size_t capacity_;
    std::chrono::milliseconds time_to_live_;
    std::mutex mutex_;
    std::map<key, entry, std::less<>> entries_;
    std::list<key> recency_;  // most recently used first
};

}  // namespace ngfail::opensandbox::detail
