#include "endpoint_cache.hpp"

#include <limits>

namespace ngfail::opensandbox::detail {

shared_route endpoint_cache::find(std::string_view sandbox_id, int port) {
    const std::lock_guard lock(mutex_);
    const auto found = entries_.find(key(sandbox_id, port));
    if (found == entries_.end()) return nullptr;
    if (clock::now() >= found->second.expires) {
        recency_.erase(found->second.use);
        entries_.erase(found);
        return nullptr;
    }
    recency_.splice(recency_.begin(), recency_, found->second.use);
    return found->second.route;
}

void endpoint_cache::store(std::string_view sandbox_id, int port, shared_route route) {
    if (capacity_ == 0) return;
    const std::lock_guard lock(mutex_);
    key k(sandbox_id, port);
    if (const auto found = entries_.find(k); found != entries_.end()) {
        recency_.erase(found->second.use);
        entries_.erase(found);
    }
    while (entries_.size() >= capacity_) {
        entries_.erase(recency_.back());
        recency_.pop_back();
    }
    recency_.push_front(k);
    const auto lives = std::min<clock::duration>(time_to_live_, std::chrono::hours(24 * 365));  // no overflow
    entries_.emplace(std::move(k), entry{std::move(route), clock::now() + lives, recency_.begin()});
}

void endpoint_cache::forget(std::string_view sandbox_id) {
    const std::lock_guard lock(mutex_);
    auto it = entries_.lower_bound(key(sandbox_id, std::numeric_limits<int>::min()));
    while (it != entries_.end() && it->first.first == sandbox_id) {
        recency_.erase(it->second.use);
        it = entries_.erase(it);
    }
}

}  // namespace ngfail::opensandbox::detail
