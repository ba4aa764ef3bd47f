#include "deadline_watch.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>

namespace ngfail::opensandbox::detail {

deadline_watch& deadline_watch::shared() {
    // Never destroyed: a client that outlives static destruction still finds it.
    static deadline_watch* const watch = new deadline_watch;
    return *watch;
}

deadline_watch::deadline_watch() : thread_([this] { run(); }) {}

deadline_watch::~deadline_watch() {
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
}

std::shared_ptr<deadline_watch::entry> deadline_watch::track(boost::asio::ip::tcp::socket& socket) {
    return std::make_shared<entry>(socket);
}

void deadline_watch::forget(entry& e) noexcept {
    const std::lock_guard lock(mutex_);
    unlink(e);
    e.socket_ = nullptr;
}

void deadline_watch::start(const std::shared_ptr<entry>& e, clock::time_point deadline) {
    bool earlier = false;
    {
        const std::lock_guard lock(mutex_);
        e->deadline_ = deadline;
        e->expired_ = false;
        link(*e);
        if (deadline < waiting_until_) {
            waiting_until_ = deadline;
            ++rearms_;
            earlier = true;
        }
    }
    if (earlier) wake_.notify_one();
}

bool deadline_watch::finish(entry& e) noexcept {
    const std::lock_guard lock(mutex_);
    unlink(e);
    return e.expired_;
}

std::size_t deadline_watch::rearms() const {
    const std::lock_guard lock(mutex_);
    return rearms_;
}

bool deadline_watch::linked(const entry& e) const noexcept { return e.previous_ || first_ == &e; }

void deadline_watch::link(entry& e) noexcept {
    if (linked(e)) return;
    e.next_ = first_;
    if (first_) first_->previous_ = &e;
    first_ = &e;
}

void deadline_watch::unlink(entry& e) noexcept {
    if (!linked(e)) return;
    (e.previous_ ? e.previous_->next_ : first_) = e.next_;
    if (e.next_) e.next_->previous_ = e.previous_;
    e.previous_ = e.next_ = nullptr;
}

deadline_watch::clock::time_point deadline_watch::expire(clock::time_point now) {
    clock::time_point earliest = clock::time_point::max();
    for (entry* e = first_; e; e = e->next_) {
        if (e->expired_) continue;
        if (e->deadline_ > now) {
            earliest = std::min(earliest, e->deadline_);
            continue;
        }
        e->expired_ = true;
        // The socket belongs to its executor's thread; the entry is held until the close is done.
        boost::asio::post(e->executor_, [this, held = e->shared_from_this()] {
            const std::lock_guard lock(mutex_);
            if (held->socket_ && held->expired_) {
                boost::system::error_code ignored;
                held->socket_->close(ignored);
            }
        });
    }
    return earliest;
}

void deadline_watch::run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        // Until the time waited for comes, there is nothing to do: the deadlines that came
        // since are later (an earlier one would have moved the time).
        if (const auto now = clock::now(); now >= waiting_until_) waiting_until_ = expire(now);
        if (waiting_until_ == clock::time_point::max()) {
            wake_.wait(lock);
        } else {
            wake_.wait_until(lock, waiting_until_);
        }
    }
}

}  // namespace ngfail::opensandbox::detail
