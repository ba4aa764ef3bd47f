// The file operations: upload (multipart, as execd reads it) and download, byte for byte;
// file info, delete, move, permissions, search and replace; directories listed, created
// and deleted.
#include "call.hpp"

#include <ngfail/event_id.hpp>

#include <boost/json.hpp>

#include <charconv>

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

// The sandbox id and every path, checked as any argument is.
std::optional<std::string> refused_paths(const client_state& s, std::string_view sandbox_id,
                                         const std::vector<std::string>& paths) {
    if (auto problem = refused_argument(s, {{"sandbox id", sandbox_id}})) return problem;
    for (const std::string& p : paths) {
        if (auto problem = refused_argument(s, {{"path", p}})) return problem;
    }
    return std::nullopt;
}

// `path=a&path=b`, as execd reads a repeated parameter.
std::string path_query(const std::vector<std::string>& paths) {
    std::string query;
    for (const std::string& p : paths) query += (query.empty() ? "?path=" : "&path=") + path_segment(p);
    return query;
}

// The bodies and the checks of move, permissions and replace, outside the coroutines.
template <class Map>
std::vector<std::string> keys_of(const Map& m) {
    std::vector<std::string> keys;
    for (const auto& entry : m) keys.push_back(entry.first);
    return keys;
}

std::optional<std::string> refused_moves(const client_state& s, std::string_view sandbox_id,
                                         const std::vector<file_move>& moves) {
    std::vector<std::string> paths;
    for (const file_move& m : moves) {
        paths.push_back(m.src);
        paths.push_back(m.dest);
    }
    return refused_paths(s, sandbox_id, paths);
}

std::string moves_body(const std::vector<file_move>& moves) {
    json::array body;
    for (const file_move& m : moves) body.push_back(json::object{{"src", m.src}, {"dest", m.dest}});
    return json::serialize(body);
}

// The sandbox id and every key path, then `problem` of each value.
template <class Map, class Problem>
std::optional<std::string> refused_entries(const client_state& s, std::string_view sandbox_id, const Map& entries,
                                           Problem problem) {
    if (auto bad = refused_paths(s, sandbox_id, keys_of(entries))) return bad;
    for (const auto& entry : entries) {
        if (auto bad = problem(entry.second)) return bad;
    }
    return std::nullopt;
}

std::optional<std::string> refused_permissions(const client_state& s, std::string_view sandbox_id,
                                               const std::map<std::string, file_permissions>& permissions) {
    return refused_entries(s, sandbox_id, permissions, [](const file_permissions& p) -> std::optional<std::string> {
        if (p.mode < 0 || p.mode > 7777) return "the mode is not an octal permission such as 755";
        return std::nullopt;
    });
}

std::string permissions_body(const std::map<std::string, file_permissions>& permissions) {
    json::object body;
    for (const auto& [path, wanted] : permissions) {
        json::object one{{"mode", wanted.mode}};
        if (!wanted.owner.empty()) one["owner"] = wanted.owner;
        if (!wanted.group.empty()) one["group"] = wanted.group;
        body[path] = std::move(one);
    }
    return json::serialize(body);
}

std::optional<std::string> refused_replacements(const client_state& s, std::string_view sandbox_id,
                                                const std::map<std::string, content_replacement>& replacements) {
    return refused_entries(s, sandbox_id, replacements, [](const content_replacement& r) -> std::optional<std::string> {
        if (r.old_text.empty()) return "the text to replace is empty";
        return std::nullopt;
    });
}

std::string replacements_body(const std::map<std::string, content_replacement>& replacements) {
    json::object body;
    for (const auto& [path, r] : replacements) body[path] = json::object{{"old", r.old_text}, {"new", r.new_text}};
    return json::serialize(body);
}

// The counts of a verbose replace: {"<path>": {"replacedCount": n}, …}.
std::map<std::string, std::int64_t> replacement_counts(const json::value& reply) {
    std::map<std::string, std::int64_t> counts;
    for (const auto& [path, result] : as_object(reply)) {
        const json::value* n = result.is_object() ? result.as_object().if_contains("replacedCount") : nullptr;
        if (!n || !n->is_int64()) malformed("a replacement count is not an integer");
        counts.emplace(path, n->as_int64());
    }
    return counts;
}

// A 206's `Content-Range: bytes a-b/length` (RFC 9110 §14.4; the length may be `*`).
struct content_range {
    std::uint64_t first = 0;
    std::uint64_t last = 0;
    std::optional<std::uint64_t> length;
};

std::optional<content_range> content_range_of(std::string_view v) {
    const auto number = [&v](std::uint64_t& n) {
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (ec != std::errc() || end == v.data()) return false;
        v.remove_prefix(static_cast<std::size_t>(end - v.data()));
        return true;
    };
    const auto then = [&v](char c) {
        if (!v.starts_with(c)) return false;
        v.remove_prefix(1);
        return true;
    };
    if (!v.starts_with("bytes ")) return std::nullopt;
    v.remove_prefix(6);
    content_range r;
    if (!number(r.first) || !then('-') || !number(r.last) || !then('/')) return std::nullopt;
    if (v == "*") return r;
    if (std::uint64_t length = 0; number(length) && v.empty()) {
        r.length = length;
        return r;
    }
    return std::nullopt;
}

// A 206 is the part asked for when its Content-Range says so: from `first`, as many bytes as
// the body has, ending at `last` or, where the file ends sooner, at the file's end.
bool is_part_asked(const content_range& r, std::size_t body, std::uint64_t first, std::optional<std::uint64_t> last) {
    if (r.first != first || r.last < r.first || body == 0 || r.last - r.first != body - 1) return false;
    if (r.length && r.last >= *r.length) return false;
    const bool ends_as_asked = last && r.last == *last;
    const bool file_ended = !r.length || r.last + 1 == *r.length;  // a length of `*`: cannot tell
    return (!last || r.last <= *last) && (ends_as_asked || file_ended);
}

// The bytes asked for from a ranged download's reply: a 206 is the part itself, once its
// Content-Range shows it is the part asked for (else the reply is malformed); a 200 (a
// server or proxy that ignores Range) is the whole file, cut here.
std::string part_of(const string_response& res, std::uint64_t first, std::optional<std::uint64_t> last) {
    if (res.result() == beast_http::status::partial_content) {
        const auto range = content_range_of(res[beast_http::field::content_range]);
        if (!range || !is_part_asked(*range, res.body().size(), first, last)) {
            malformed("a partial reply that is not the range asked for");
        }
        return res.body();
    }
    const std::string& whole = res.body();
    if (first >= whole.size()) return {};
    // `last` is inclusive and may be the largest number there is: compared, never incremented.
    const std::uint64_t end = last && *last < whole.size() ? *last + 1 : whole.size();
    return whole.substr(first, end - first);
}

// An execd request whose reply carries nothing the caller needs.
awaitable<result<void>> execd_action(client_state& s, operation op, std::string sandbox_id,
                                     std::optional<std::string> problem, call_options per_call, beast_http::verb verb,
                                     std::string target, std::string body = {}) {
    co_return co_await done(call<bool>(s, per_call, op, sandbox_id, std::move(problem),
                                       [&](const call_context& c, observation&) -> attempt_result<bool> {
        (void)co_await c.execd_call(sandbox_id, verb, target, body, body.empty() ? "" : "application/json");
        co_return true;
    }));
}

}  // namespace

awaitable<result<void>> upload_operation(client_state& s, std::string sandbox_id, std::string path,
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

awaitable<result<std::string>> download_operation(client_state& s, std::string sandbox_id, std::string path,
                                                  call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"path", path}});
    co_return co_await call<std::string>(s, per_call, operation::download, sandbox_id,
                                         std::move(problem),
                                         [&](const call_context& c, observation&) -> attempt_result<std::string> {
        co_return (co_await c.execd_call(sandbox_id, beast_http::verb::get, "/files/download?path=" + path_segment(path)))
            .body();
    });
}

awaitable<result<std::string>> download_range_operation(client_state& s, std::string sandbox_id, std::string path,
                                                        std::uint64_t first, std::optional<std::uint64_t> last,
                                                        call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"path", path}});
    if (!problem && last && *last < first) problem = "the range ends before it starts";
    const std::string range = "bytes=" + std::to_string(first) + "-" + (last ? std::to_string(*last) : "");
    co_return co_await call<std::string>(s, per_call, operation::download, sandbox_id, std::move(problem),
                                         [&](const call_context& c, observation&) -> attempt_result<std::string> {
        const string_response res = co_await c.execd_call(sandbox_id, beast_http::verb::get,
                                                          "/files/download?path=" + path_segment(path), "", "", range);
        co_return part_of(res, first, last);
    });
}

awaitable<result<std::string>> read_lines_operation(client_state& s, std::string sandbox_id, std::string path,
                                                    std::int64_t first_line, std::optional<std::int64_t> max_lines,
                                                    call_options per_call) {
    auto problem = refused_argument(s, {{"sandbox id", sandbox_id}, {"path", path}});
    if (!problem && (first_line < 1 || (max_lines && *max_lines < 1))) problem = "lines count from 1, at least one";
    std::string target = "/files/download?path=" + path_segment(path) + "&offset=" + std::to_string(first_line);
    if (max_lines) target += "&limit=" + std::to_string(*max_lines);
    co_return co_await call<std::string>(s, per_call, operation::download, sandbox_id, std::move(problem),
                                         [&](const call_context& c, observation&) -> attempt_result<std::string> {
        co_return (co_await c.execd_call(sandbox_id, beast_http::verb::get, target)).body();
    });
}

awaitable<result<std::map<std::string, entry_info>>> file_info_operation(client_state& s, std::string sandbox_id,
                                                                         std::vector<std::string> paths,
                                                                         call_options per_call) {
    auto problem = refused_paths(s, sandbox_id, paths);
    co_return co_await call<std::map<std::string, entry_info>>(
        s, per_call, operation::file_info, sandbox_id, std::move(problem),
        [&](const call_context& c, observation&) -> attempt_result<std::map<std::string, entry_info>> {
            const json::value reply = json_of(
                co_await c.execd_call(sandbox_id, beast_http::verb::get, "/files/info" + path_query(paths)),
                "the file info is not JSON");
            std::map<std::string, entry_info> found;
            for (const auto& [path, entry] : as_object(reply)) found.emplace(path, entry_of(entry));
            co_return found;
        });
}

awaitable<result<void>> delete_files_operation(client_state& s, std::string sandbox_id,
                                               std::vector<std::string> paths, call_options per_call) {
    auto problem = refused_paths(s, sandbox_id, paths);
    co_return co_await execd_action(s, operation::delete_files, std::move(sandbox_id), std::move(problem),
                                    std::move(per_call), beast_http::verb::delete_, "/files" + path_query(paths));
}

awaitable<result<std::vector<entry_info>>> list_directory_operation(client_state& s, std::string sandbox_id,
                                                                    std::string path, int depth,
                                                                    call_options per_call) {
    auto problem = refused_paths(s, sandbox_id, std::vector<std::string>{path});
    if (!problem && depth < 0) problem = "the depth is negative";
    co_return co_await call<std::vector<entry_info>>(
        s, per_call, operation::list_directory, sandbox_id, std::move(problem),
        [&](const call_context& c, observation&) -> attempt_result<std::vector<entry_info>> {
            const std::string target = "/directories/list?path=" + path_segment(path) + "&depth=" + std::to_string(depth);
            const json::value reply = json_of(co_await c.execd_call(sandbox_id, beast_http::verb::get, target),
                                              "the directory listing is not JSON");
            if (!reply.is_array()) malformed("the directory listing is not an array");
            std::vector<entry_info> entries;
            for (const json::value& entry : reply.as_array()) entries.push_back(entry_of(entry));
            co_return entries;
        });
}

awaitable<result<void>> create_directories_operation(client_state& s, std::string sandbox_id,
                                                     std::vector<std::string> paths, int mode, call_options per_call) {
    auto problem = refused_paths(s, sandbox_id, paths);
    if (!problem && (mode < 0 || mode > 7777)) problem = "the mode is not an octal permission such as 755";
    json::object wanted;
    for (const std::string& p : paths) wanted[p] = json::object{{"mode", mode}};
    co_return co_await execd_action(s, operation::create_directories, std::move(sandbox_id), std::move(problem),
                                    std::move(per_call), beast_http::verb::post, "/directories",
                                    json::serialize(wanted));
}

awaitable<result<void>> delete_directories_operation(client_state& s, std::string sandbox_id,
                                                     std::vector<std::string> paths, call_options per_call) {
    auto problem = refused_paths(s, sandbox_id, paths);
    co_return co_await execd_action(s, operation::delete_directories, std::move(sandbox_id), std::move(problem),
                                    std::move(per_call), beast_http::verb::delete_, "/directories" + path_query(paths));
}

awaitable<result<void>> move_files_operation(client_state& s, std::string sandbox_id, std::vector<file_move> moves,
                                             call_options per_call) {
    auto problem = refused_moves(s, sandbox_id, moves);
    co_return co_await execd_action(s, operation::move_files, std::move(sandbox_id), std::move(problem),
                                    std::move(per_call), beast_http::verb::post, "/files/mv", moves_body(moves));
}

awaitable<result<void>> set_permissions_operation(client_state& s, std::string sandbox_id,
                                                  std::map<std::string, file_permissions> permissions,
                                                  call_options per_call) {
    auto problem = refused_permissions(s, sandbox_id, permissions);
    co_return co_await execd_action(s, operation::set_permissions, std::move(sandbox_id), std::move(problem),
                                    std::move(per_call), beast_http::verb::post, "/files/permissions",
                                    permissions_body(permissions));
}

awaitable<result<std::vector<entry_info>>> search_files_operation(client_state& s, std::string sandbox_id,
                                                                  std::string path, std::string pattern,
                                                                  call_options per_call) {
    auto problem = refused_paths(s, sandbox_id, std::vector<std::string>{path});
    if (!problem && breaks_a_line(pattern)) problem = "the pattern holds CR, LF or NUL";
    co_return co_await call<std::vector<entry_info>>(
        s, per_call, operation::search_files, sandbox_id, std::move(problem),
        [&](const call_context& c, observation&) -> attempt_result<std::vector<entry_info>> {
            const std::string target = "/files/search?path=" + path_segment(path) + "&pattern=" + path_segment(pattern);
            const json::value reply = json_of(co_await c.execd_call(sandbox_id, beast_http::verb::get, target),
                                              "the search result is not JSON");
            if (!reply.is_array()) malformed("the search result is not an array");
            std::vector<entry_info> found;
            for (const json::value& entry : reply.as_array()) found.push_back(entry_of(entry));
            co_return found;
        });
}

awaitable<result<std::map<std::string, std::int64_t>>> replace_contents_operation(
    client_state& s, std::string sandbox_id, std::map<std::string, content_replacement> replacements,
    call_options per_call) {
    auto problem = refused_replacements(s, sandbox_id, replacements);
    const std::string text = replacements_body(replacements);
    co_return co_await call<std::map<std::string, std::int64_t>>(
        s, per_call, operation::replace_contents, sandbox_id, std::move(problem),
        [&](const call_context& c, observation&) -> attempt_result<std::map<std::string, std::int64_t>> {
            const json::value reply =
                json_of(co_await c.execd_call(sandbox_id, beast_http::verb::post, "/files/replace?verbose=true", text,
                                              "application/json"),
                        "the replacement counts are not JSON");
            co_return replacement_counts(reply);
        });
}

}  // namespace ngfail::opensandbox::detail

// ---- the three faces: returned, waited for, raised ------------------------------------------

namespace ngfail::opensandbox {

client::awaitable<void> client::make_upload(std::string_view sandbox_id, std::string_view path, std::string_view content,
                                             const call_options& options) {
    return detail::upload_operation(*state_, std::string(sandbox_id), std::string(path), std::string(content), options);
}

client::awaitable<std::string> client::make_download(std::string_view sandbox_id, std::string_view path,
                                                      const call_options& options) {
    return detail::download_operation(*state_, std::string(sandbox_id), std::string(path), options);
}

client::awaitable<std::string> client::make_download_range(std::string_view sandbox_id, std::string_view path,
                                                            std::uint64_t first, std::optional<std::uint64_t> last,
                                                            const call_options& options) {
    return detail::download_range_operation(*state_, std::string(sandbox_id), std::string(path), first, last, options);
}

client::awaitable<std::string> client::make_read_lines(std::string_view sandbox_id, std::string_view path,
                                                        std::int64_t first_line, std::optional<std::int64_t> max_lines,
                                                        const call_options& options) {
    return detail::read_lines_operation(*state_, std::string(sandbox_id), std::string(path), first_line, max_lines, options);
}

client::awaitable<std::map<std::string, entry_info>> client::make_file_info(std::string_view sandbox_id,
                                                                             const std::vector<std::string>& paths,
                                                                             const call_options& options) {
    return detail::file_info_operation(*state_, std::string(sandbox_id), paths, options);
}

client::awaitable<void> client::make_delete_files(std::string_view sandbox_id, const std::vector<std::string>& paths,
                                                   const call_options& options) {
    return detail::delete_files_operation(*state_, std::string(sandbox_id), paths, options);
}

client::awaitable<std::vector<entry_info>> client::make_list_directory(std::string_view sandbox_id, std::string_view path,
                                                                        int depth, const call_options& options) {
    return detail::list_directory_operation(*state_, std::string(sandbox_id), std::string(path), depth, options);
}

client::awaitable<void> client::make_create_directories(std::string_view sandbox_id,
                                                         const std::vector<std::string>& paths, int mode,
                                                         const call_options& options) {
    return detail::create_directories_operation(*state_, std::string(sandbox_id), paths, mode, options);
}

client::awaitable<void> client::make_delete_directories(std::string_view sandbox_id,
                                                         const std::vector<std::string>& paths,
                                                         const call_options& options) {
    return detail::delete_directories_operation(*state_, std::string(sandbox_id), paths, options);
}

client::awaitable<void> client::make_move_files(std::string_view sandbox_id, const std::vector<file_move>& moves,
                                                 const call_options& options) {
    return detail::move_files_operation(*state_, std::string(sandbox_id), moves, options);
}

client::awaitable<void> client::make_set_permissions(std::string_view sandbox_id,
                                                      const std::map<std::string, file_permissions>& permissions,
                                                      const call_options& options) {
    return detail::set_permissions_operation(*state_, std::string(sandbox_id), permissions, options);
}

client::awaitable<std::vector<entry_info>> client::make_search_files(std::string_view sandbox_id, std::string_view path,
                                                                      std::string_view pattern,
                                                                      const call_options& options) {
    return detail::search_files_operation(*state_, std::string(sandbox_id), std::string(path), std::string(pattern), options);
}

client::awaitable<std::map<std::string, std::int64_t>> client::make_replace_contents(
    std::string_view sandbox_id, const std::map<std::string, content_replacement>& replacements,
    const call_options& options) {
    return detail::replace_contents_operation(*state_, std::string(sandbox_id), replacements, options);
}

}  // namespace ngfail::opensandbox
