// The file operations: upload (multipart, as execd reads it) and download, byte for byte.
#include "call.hpp"

#include <ngfail/event_id.hpp>

#include <boost/json.hpp>

namespace ngfail::opensandbox {

using namespace detail;
namespace json = boost::json;

result<void> client::try_upload(std::string_view sandbox_id, std::string_view path, std::string_view content,
                                const call_options& options) noexcept {
    return done(call<bool>(options_, options, "upload", sandbox_id, {{"sandbox id", sandbox_id}, {"path", path}},
                           [&](const call_context& c, observation&) {
        // multipart/form-data, as execd reads it: a `metadata` part (JSON), then the `file`.
        const std::string boundary = "ngfail-" + to_string(event_id::generate());
        const std::string name(path.substr(path.rfind('/') + 1));
        std::string body = "--" + boundary +
                           "\r\nContent-Disposition: form-data; name=\"metadata\"; filename=\"metadata\"\r\n"
                           "Content-Type: application/json\r\n\r\n" +
                           json::serialize(json::object{{"path", path}}) + "\r\n--" + boundary +
                           "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + path_segment(name) +
                           "\"\r\nContent-Type: application/octet-stream\r\n\r\n";
        body.append(content);
        body += "\r\n--" + boundary + "--\r\n";
        (void)execd_call(c, sandbox_id, beast_http::verb::post, "/files/upload", std::move(body),
                         "multipart/form-data; boundary=" + boundary);
        return std::optional(true);
    }));
}
result<std::string> client::try_download(std::string_view sandbox_id, std::string_view path,
                                         const call_options& options) noexcept {
    return call<std::string>(options_, options, "download", sandbox_id, {{"sandbox id", sandbox_id}, {"path", path}},
                             [&](const call_context& c, observation&) {
        return std::optional(
            execd_call(c, sandbox_id, beast_http::verb::get, "/files/download?path=" + path_segment(path)).body());
    });
}
}  // namespace ngfail::opensandbox
