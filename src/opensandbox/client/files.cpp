// The file operations: upload (multipart, as execd reads it) and download, byte for byte.
#include "operations.hpp"

#include <ngfail/event_id.hpp>

#include <boost/json.hpp>

namespace ngfail::opensandbox::detail {
namespace {

namespace json = boost::json;

// multipart/form-data, as execd reads it: a `metadata` part (JSON), then the `file`.
std::string multipart_body(std::string_view boundary, std::string_view path, std::string_view content) {
    const std::string name(path.substr(path.rfind('/') + 1));
    std::string body = "--" + std::string(boundary) +
                       "\r\nContent-Disposition: form-data; name=\"metadata\"; filename=\"metadata\"\r\n"
                       "Content-Type: application/json\r\n\r\n" +
                       json::serialize(json::object{{"path", path}}) + "\r\n--" + std::string(boundary) +
                       "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + path_segment(name) +
                       "\"\r\nContent-Type: application/octet-stream\r\n\r\n";
    body.append(content);
    body += "\r\n--" + std::string(boundary) + "--\r\n";
    return body;
}

}  // namespace

awaitable<result<void>> upload_operation(client::state& s, std::string sandbox_id, std::string path,
                                         std::string content, call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"path", path}});
    co_return co_await done(call<bool>(s, per_call, operation::upload, sandbox_id,
                                       std::move(problem),
                                       [&](const call_context& c, observation&) -> attempt_result<bool> {
        const std::string boundary = "ngfail-" + to_string(event_id::generate());
        (void)co_await c.execd_call(sandbox_id, beast_http::verb::post, "/files/upload",
                                    multipart_body(boundary, path, content), "multipart/form-data; boundary=" + boundary);
        co_return true;
    }));
}

awaitable<result<std::string>> download_operation(client::state& s, std::string sandbox_id, std::string path,
                                                  call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"path", path}});
    co_return co_await call<std::string>(s, per_call, operation::download, sandbox_id,
                                         std::move(problem),
                                         [&](const call_context& c, observation&) -> attempt_result<std::string> {
        co_return (co_await c.execd_call(sandbox_id, beast_http::verb::get, "/files/download?path=" + path_segment(path)))
            .body();
    });
}

}  // namespace ngfail::opensandbox::detail
