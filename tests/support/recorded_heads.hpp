// A lifecycle server that answers every request with one Running sandbox ("sbx-1") and
// keeps each request's head: for tests of what the client puts on its requests.
#pragma once

#include "support/raw_server.hpp"

#include <mutex>
#include <string>
#include <vector>

namespace ngfail_test {

class recorded_heads {
public:
    recorded_heads()
        : server_([this](int fd, const std::string& head) {
              {
                  std::lock_guard lock(mutex_);
                  heads_.push_back(head);
              }
              const std::string body =
                  R"({"id":"sbx-1","status":{"state":"Running"},"expiresAt":"2030-01-01T00:00:00Z"})";
              raw_server::send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                                           std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
          }) {}

    [[nodiscard]] unsigned short port() const { return server_.port(); }

    // Each request's line and header lines, CRLF-separated, in the order they came.
    [[nodiscard]] std::vector<std::string> heads() {
        std::lock_guard lock(mutex_);
        return heads_;
    }

private:
    std::mutex mutex_;
    std::vector<std::string> heads_;
    raw_server server_;  // last: it stops before what its handler uses goes
};

}  // namespace ngfail_test
