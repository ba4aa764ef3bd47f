// A TCP server on 127.0.0.1 that answers however a test tells it to, byte by byte: for
// replies no well-behaved HTTP library would produce (endless headers, bodies that never
// end, lies about their length).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

namespace ngfail_test {

class raw_server {
public:
    // Called with the connection and the request's head: its request line ("GET /path
    // HTTP/1.1") and header lines, CRLF-separated; the body has been read too. Returning
    // closes the connection.
    using handler = std::function<void(int fd, const std::string& request_line)>;

    explicit raw_server(handler h) : handler_(std::move(h)) {
        listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
            ::listen(listener_, 16) != 0 ||
            ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
            throw std::runtime_error("raw_server: cannot listen");
        }
        port_ = ntohs(address.sin_port);
        thread_ = std::thread([this] { serve(); });
    }

    ~raw_server() {
        stopping_ = true;
        ::shutdown(listener_, SHUT_RDWR);
        thread_.join();
        ::close(listener_);
    }

    raw_server(const raw_server&) = delete;
    raw_server& operator=(const raw_server&) = delete;

    [[nodiscard]] unsigned short port() const { return port_; }

    // Sends all of `bytes`; false once the peer is gone.
    static bool send_all(int fd, std::string_view bytes) {
        while (!bytes.empty()) {
            const auto n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
            if (n <= 0) return false;
            bytes.remove_prefix(static_cast<std::size_t>(n));
        }
        return true;
    }

    // An HTTP/1.1 reply with a Content-Length body. It says `Connection: close`, as this server
    // closes every connection after one reply; without it a client may keep the connection
    // and race the close.
    static std::string reply(std::string_view status, std::string_view body, std::string_view extra_headers = "",
                             std::string_view content_type = "application/json") {
        return "HTTP/1.1 " + std::string(status) + "\r\nContent-Type: " + std::string(content_type) +
               "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n" +
               std::string(extra_headers) + "\r\n" + std::string(body);
    }

    // The value of header `name` in a request head (exact case), or empty.
    static std::string header(const std::string& head, std::string_view name) {
        const std::string key = "\r\n" + std::string(name) + ": ";
        const auto at = head.find(key);
        if (at == std::string::npos) return {};
        const auto start = at + key.size();
        return head.substr(start, head.find("\r\n", start) - start);
    }

    // Reads a request's head and its Content-Length body; returns the head, or nothing when
    // the peer closed first. A handler calls it for a further request on its connection.
    static std::optional<std::string> read_request(int fd) {
        std::string data;
        char buffer[4096];
        std::size_t head_end = std::string::npos;
        while ((head_end = data.find("\r\n\r\n")) == std::string::npos) {
            const auto n = ::recv(fd, buffer, sizeof buffer, 0);
            if (n <= 0 || data.size() > (1 << 20)) return std::nullopt;
            data.append(buffer, static_cast<std::size_t>(n));
        }
        std::size_t body = 0;
        if (const auto at = data.find("Content-Length: "); at != std::string::npos && at < head_end) {
            body = std::stoul(data.substr(at + 16));
        }
        while (data.size() < head_end + 4 + body) {
            const auto n = ::recv(fd, buffer, sizeof buffer, 0);
            if (n <= 0) break;
            data.append(buffer, static_cast<std::size_t>(n));
        }
        return data.substr(0, head_end);
    }

private:
    void serve() {
        while (!stopping_) {
            const int fd = ::accept(listener_, nullptr, nullptr);
            if (fd < 0) continue;
            if (!stopping_) {
                if (auto line = read_request(fd)) handler_(fd, *line);
            }
            ::close(fd);
        }
    }

    handler handler_;
    int listener_ = -1;
    unsigned short port_ = 0;
    std::atomic<bool> stopping_{false};
    std::thread thread_;
};

}  // namespace ngfail_test
