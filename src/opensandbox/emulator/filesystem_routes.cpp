// execd's filesystem routes inside a simulated sandbox: upload, download, info, delete,
// and directories (list, create, delete), answered as real execd's filesystem controller
// answers them. The file system itself is file_tree.
#include "context.hpp"

#include <boost/json/parse.hpp>

#include <array>
#include <cctype>
#include <limits>

namespace ngfail::opensandbox::emulator {
namespace {

namespace json = boost::json;
using boost::asio::awaitable;

// execd's reply to a file system error: a missing path is 404 FILE_NOT_FOUND, anything
// else 500 RUNTIME_ERROR, each naming the path as Go's errors do.
response error_of(const context& c, const exchange& x, fs_error e, const std::string& path, std::string_view doing) {
    switch (e) {
        case fs_error::not_found:
            return c.error_reply(x, 404, "FILE_NOT_FOUND", "file not found. lstat " + path + ": no such file or directory");
        case fs_error::is_directory:
            return c.error_reply(x, 500, "RUNTIME_ERROR", std::string(doing) + " " + path + ". path is a directory: " + path);
        case fs_error::not_directory:
            return c.error_reply(x, 500, "RUNTIME_ERROR", std::string(doing) + " " + path + ". not a directory");
    }
    return c.error_reply(x, 500, "RUNTIME_ERROR", std::string(doing) + " " + path);
}

template <class T>
response reply_of(const context& c, const exchange& x, const fs_result<T>& r, std::string_view doing) {
    return r.value ? c.empty_reply(x, 200) : error_of(c, x, r.error, r.path, doing);
}

// RFC 6266 with RFC 8187: an ASCII fallback with quotes and backslashes escaped and every
// other byte that is not printable ASCII replaced, and the exact name percent-encoded, so
// that no name (CR, LF, NUL, quotes) can end the header or add a parameter.
std::string attachment_disposition(std::string_view name) {
    std::string fallback;
    std::string exact;
    constexpr std::string_view attr_char = "!#$&+-.^_`|~";
    constexpr std::string_view hex = "0123456789ABCDEF";
    for (const char ch : name) {
        const auto b = static_cast<unsigned char>(ch);
        if (ch == '"' || ch == '\\') fallback += '\\';
        fallback += b >= 0x20 && b < 0x7f ? ch : '_';
        if (std::isalnum(b) != 0 && b < 0x80) {
            exact += ch;
        } else if (attr_char.find(ch) != std::string_view::npos) {
            exact += ch;
        } else {
            exact += '%';
            exact += hex[b >> 4];
            exact += hex[b & 0xf];
        }
    }
    return "attachment; filename=\"" + fallback + "\"; filename*=UTF-8''" + exact;
}

// FileInfo: Go's encoder writes the embedded Permission's fields at the top level.
json::object info_json(const entry_info& e) {
    return {{"path", e.path},
            {"type", e.directory ? "directory" : "file"},
            {"size", e.size},
            {"modified_at", rfc3339(e.modified_at)},
            {"created_at", rfc3339(e.created_at)},
            {"owner", "root"},
            {"group", "root"},
            {"mode", e.mode}};
}

// multipart/form-data: pairs of a `metadata` part (JSON with the path) and a `file` part.
struct part {
    std::string name;
    std::string_view content;
};

std::vector<part> multipart_parts(std::string_view content_type, std::string_view body) {
    std::vector<part> parts;
    const auto at = content_type.find("boundary=");
    if (at == std::string_view::npos) return parts;
    std::string_view boundary_value = content_type.substr(at + 9);
    boundary_value = boundary_value.substr(0, boundary_value.find(';'));
    if (boundary_value.size() >= 2 && boundary_value.front() == '"') boundary_value = boundary_value.substr(1, boundary_value.size() - 2);
    const std::string delimiter = "--" + std::string(boundary_value);
    for (auto start = body.find(delimiter); start != std::string_view::npos;) {
        start += delimiter.size();
        if (body.substr(start, 2) == "--") break;  // the closing delimiter
        const auto head_end = body.find("\r\n\r\n", start);
        const auto next = body.find("\r\n" + delimiter, start);
        if (head_end == std::string_view::npos || next == std::string_view::npos || head_end > next) break;
        const std::string_view head = body.substr(start, head_end - start);
        std::string name;
        if (const auto n = head.find("name=\""); n != std::string_view::npos) {
            name = std::string(head.substr(n + 6, head.find('"', n + 6) - (n + 6)));
        }
        parts.push_back({std::move(name), body.substr(head_end + 4, next - (head_end + 4))});
        start = next + 2;
    }
    return parts;
}

// What a metadata part asks for: the file's path and, when not 0, its mode (FileMetadata).
struct upload_target {
    std::string path;
    int mode = 644;
};

std::optional<upload_target> upload_target_of(std::string_view metadata) {
    json::error_code ec;
    const json::value meta = json::parse(metadata, ec);
    const json::object* o = ec ? nullptr : meta.if_object();
    const json::value* path = o ? o->if_contains("path") : nullptr;
    if (!path || !path->is_string()) return std::nullopt;
    upload_target t{.path = std::string(path->as_string())};
    if (const json::value* mode = o->if_contains("mode"); mode && mode->is_int64() && mode->as_int64() > 0 &&
                                                            mode->as_int64() <= 7777) {
        t.mode = static_cast<int>(mode->as_int64());
    }
    return t;
}

awaitable<void> upload(context& c, exchange& x, call& k) {
    const auto parts = multipart_parts(x.req()[http::field::content_type], x.req().body());
    std::optional<upload_target> target;
    std::vector<std::pair<upload_target, std::string>> files;
    for (const part& p : parts) {
        if (p.name == "metadata") {
            target = upload_target_of(p.content);
        } else if (p.name == "file" && target) {
            files.emplace_back(std::move(*target), std::string(p.content));
            target.reset();
        }
    }
    if (files.empty()) {
        co_await x.reply(c.error_reply(x, 400, "INVALID_FILE_METADATA", "expected a metadata part with a path, then a file part"));
        co_return;
    }
    const auto written = c.sandboxes.with_files(k.sandbox_id, [&](file_tree& tree) {
        for (auto& [to, content] : files) {
            if (auto put = tree.put(to.path, std::move(content), to.mode); !put.value) return put;
        }
        return fs_result<bool>{true};
    });
    response res = !written ? c.not_found(x, k.sandbox_id) : reply_of(c, x, *written, "error writing file");
    co_await x.reply(std::move(res));
}

awaitable<void> download(context& c, exchange& x, call& k) {
    const auto path = query_value(x.req().target(), "path");
    const auto file = path ? c.sandboxes.file(k.sandbox_id, *path) : std::nullopt;
    if (!file) {
        co_await x.reply(c.error_reply(x, 404, "FILE_NOT_FOUND", "file not found: " + path.value_or("")));
        co_return;
    }
    response res = c.text_reply(x, 200, *file->content, "application/octet-stream");
    res.set(http::field::content_disposition, attachment_disposition(path->substr(path->rfind('/') + 1)));
    co_await x.reply(std::move(res));
}


awaitable<void> file_info(context& c, exchange& x, call& k) {
    const std::vector<std::string> paths = query_values(x.req().target(), "path");
    const auto found = c.sandboxes.with_files(k.sandbox_id, [&](const file_tree& tree) {
        fs_result<json::object> out{json::object{}};
        for (const std::string& p : paths) {
            auto one = tree.info(p);
            if (!one.value) return fs_result<json::object>{std::nullopt, one.error, one.path};
            (*out.value)[p] = info_json(*one.value);  // keyed by the path as asked
        }
        return out;
    });
    if (!found) {
        co_await x.reply(c.not_found(x, k.sandbox_id));
    } else if (!found->value) {
        co_await x.reply(error_of(c, x, found->error, found->path, "error accessing file"));
    } else {
        co_await x.reply(c.json_reply(x, 200, *found->value));
    }
}

awaitable<void> delete_files(context& c, exchange& x, call& k) {
    const std::vector<std::string> paths = query_values(x.req().target(), "path");
    const auto removed = c.sandboxes.with_files(k.sandbox_id, [&](file_tree& tree) { return tree.remove_files(paths); });
    response res = !removed ? c.not_found(x, k.sandbox_id) : reply_of(c, x, *removed, "error removing file");
    co_await x.reply(std::move(res));
}

awaitable<void> list_directory(context& c, exchange& x, call& k) {
    const auto path = query_value(x.req().target(), "path");
    if (!path || path->empty()) {
        co_await x.reply(c.error_reply(x, 400, "MISSING_QUERY", "missing query parameter 'path'"));
        co_return;
    }
    const auto depth = number_query(x, "depth", 0, std::numeric_limits<int>::max());
    if (!depth) {
        co_await x.reply(c.error_reply(x, 400, "INVALID_REQUEST_BODY",
                                       "invalid query parameter 'depth': " + query_value(x.req().target(), "depth").value_or("")));
        co_return;
    }
    const auto listed = c.sandboxes.with_files(k.sandbox_id, [&](const file_tree& tree) {
        return tree.list(*path, static_cast<int>(depth->value_or(1)));
    });
    if (!listed) {
        co_await x.reply(c.not_found(x, k.sandbox_id));
    } else if (listed->value) {
        json::array entries;
        for (const entry_info& e : *listed->value) entries.push_back(info_json(e));
        co_await x.reply(c.json_reply(x, 200, entries));
    } else if (listed->error == fs_error::not_directory) {
        co_await x.reply(c.error_reply(x, 400, "INVALID_REQUEST_BODY", "path is not a directory: " + listed->path));
    } else {
        co_await x.reply(error_of(c, x, listed->error, listed->path, "error listing directory"));
    }
}

// POST /directories: {"<path>": {"mode": 755, "owner": …, "group": …}, …}, mkdir -p each.
awaitable<void> create_directories(context& c, exchange& x, call& k) {
    json::error_code ec;
    const json::value body = json::parse(x.req().body(), ec);
    const json::object* wanted = ec ? nullptr : body.if_object();
    std::vector<std::pair<std::string, int>> dirs;
    for (const auto& [path, permission] : wanted ? *wanted : json::object{}) {
        const json::value* mode = permission.is_object() ? permission.as_object().if_contains("mode") : nullptr;
        if (!permission.is_object() || (mode && !mode->is_int64())) {
            wanted = nullptr;
            break;
        }
        dirs.emplace_back(std::string(path), mode && mode->as_int64() != 0 ? static_cast<int>(mode->as_int64()) : 755);
    }
    if (!wanted) {
        co_await x.reply(c.error_reply(x, 400, "INVALID_REQUEST_BODY",
                                       "error parsing request, MAYBE invalid body format. expected a map of paths to permissions"));
        co_return;
    }
    const auto made = c.sandboxes.with_files(k.sandbox_id, [&](file_tree& tree) {
        for (const auto& [path, mode] : dirs) {
            if (auto one = tree.make_directories(path, mode); !one.value) return one;
        }
        return fs_result<bool>{true};
    });
    response res = !made ? c.not_found(x, k.sandbox_id) : reply_of(c, x, *made, "mkdir");
    co_await x.reply(std::move(res));
}

awaitable<void> delete_directories(context& c, exchange& x, call& k) {
    const std::vector<std::string> paths = query_values(x.req().target(), "path");
    const auto removed = c.sandboxes.with_files(k.sandbox_id, [&](file_tree& tree) {
        tree.remove_directories(paths);
        return true;
    });
    response res = removed ? c.empty_reply(x, 200) : c.not_found(x, k.sandbox_id);
    co_await x.reply(std::move(res));
}

using v = http::verb;
constexpr std::array routes{
    route{v::post, "/files/upload", "upload", upload},
    route{v::get, "/files/download", "download", download},
    route{v::get, "/files/info", "file_info", file_info},
    route{v::delete_, "/files", "delete_files", delete_files},
    route{v::get, "/directories/list", "list_directory", list_directory},
    route{v::post, "/directories", "create_directories", create_directories},
    route{v::delete_, "/directories", "delete_directories", delete_directories},
};

}  // namespace

std::span<const route> filesystem_routes() noexcept { return routes; }

}  // namespace ngfail::opensandbox::emulator
