// A real HTTP/1.1 server and client on 127.0.0.1 (Boost.Beast), for end-to-end tests.
#pragma once

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace ngfail_test {

namespace beast_http = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using request = beast_http::request<beast_http::string_body>;
using response = beast_http::response<beast_http::string_body>;

// Serves each connection's one request with `handler`, on its own thread, until destroyed.
class loopback_server {
public:
    using handler = std::function<response(const request&)>;

    explicit loopback_server(handler h)
        : handler_(std::move(h)), acceptor_(io_, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)),
          port_(acceptor_.local_endpoint().port()) {
        accept();
        thread_ = std::thread([this] { io_.run(); });
    }
    ~loopback_server() {
        io_.stop();
        thread_.join();
    }
    loopback_server(const loopback_server&) = delete;
    loopback_server& operator=(const loopback_server&) = delete;

    [[nodiscard]] unsigned short port() const { return port_; }

private:
    void accept() {
        acceptor_.async_accept([this](boost::beast::error_code ec, tcp::socket socket) {
            if (ec) return;
            serve(std::move(socket));
            accept();
        });
    }

    void serve(tcp::socket socket) {
        boost::beast::flat_buffer buffer;
        boost::beast::error_code ec;
        request req;
        beast_http::read(socket, buffer, req, ec);
        if (ec) return;
        response res;
        try {
            res = handler_(req);
        } catch (...) {
            res = response(beast_http::status::internal_server_error, req.version());
            res.body() = "handler threw";
        }
        res.version(req.version());
        res.keep_alive(false);
        res.prepare_payload();
        beast_http::write(socket, res, ec);
        socket.shutdown(tcp::socket::shutdown_both, ec);
    }

    handler handler_;
    boost::asio::io_context io_;
    tcp::acceptor acceptor_;
    unsigned short port_;
    std::thread thread_;
};

// One GET to 127.0.0.1:port.
inline response http_get(unsigned short port, const std::string& target) {
    boost::asio::io_context io;
    tcp::socket socket(io);
    socket.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
    request req(beast_http::verb::get, target, 11);
    req.set(beast_http::field::host, "127.0.0.1");
    beast_http::write(socket, req);
    boost::beast::flat_buffer buffer;
    response res;
    beast_http::read(socket, buffer, res);
    boost::beast::error_code ec;
    socket.shutdown(tcp::socket::shutdown_both, ec);
    return res;
}

}  // namespace ngfail_test
