// execd's filesystem routes: upload, download, info, delete, move, permissions, search,
// replace, and directories (list, create, delete), answered as real execd's filesystem
// controller answers them. The file system is file_tree in a simulated sandbox, the
// sandbox's real tree (process_sandbox) in the process runtime.
#include "context.hpp"
#include "glob.hpp"
#include "opensandbox/emulator/process/process_sandbox.hpp"

#include <boost/json/parse.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <system_error>

namespace ngfail::opensandbox::testing::detail {
namespace {

namespace json = boost::json;
using boost::asio::awaitable;

// The most entries a listing or a search returns: past it the request fails rather than
// build a reply that grows with the tree (1.3 million directories listed took 2.7 GB).
constexpr std::size_t max_listed = 65536;
// The most entries a search walks over (files and directories, matched or not).
constexpr std::size_t max_searched = 4 * max_listed;
static_assert(process_sandbox::max_listed_path_bytes == 64 << 20, "the refusals below name 64 MiB");

// Each error's text as Go's syscall.Errno prints it, in execd's messages.
constexpr std::array<std::pair<fs_error, std::string_view>, 13> errno_texts{{
    {fs_error::not_found, "no such file or directory"},
    {fs_error::is_directory, "is a directory"},
    {fs_error::not_directory, "not a directory"},
    {fs_error::exists, "file exists"},
    {fs_error::into_itself, "invalid argument"},
    {fs_error::too_large, "file too large"},
    {fs_error::no_space, "no space left on device"},
    {fs_error::name_too_long, "file name too long"},
    {fs_error::not_regular, "not a regular file"},
    {fs_error::busy, "device or resource busy"},
    {fs_error::denied, "permission denied"},
    {fs_error::too_deep, "too many levels of symbolic links"},
    {fs_error::not_permitted, "operation not permitted"},
}};

std::string_view errno_text(fs_error e) {
    const auto* it = std::find_if(errno_texts.begin(), errno_texts.end(), [&](const auto& row) { return row.first == e; });
    return it == errno_texts.end() ? std::string_view("input/output error") : it->second;
}

// execd's reply to a file system error: a missing path is 404 FILE_NOT_FOUND, anything
// else 500 RUNTIME_ERROR, each naming the path as Go's errors do.
response error_of(const context& c, const exchange& x, fs_error e, const std::string& path, std::string_view doing) {
    const std::string failed = std::string(doing) + " " + path + ". ";
    switch (e) {
        case fs_error::not_found:
            return c.error_reply(x, 404, "FILE_NOT_FOUND", "file not found. lstat " + path + ": no such file or directory");
        case fs_error::is_directory:
            return c.error_reply(x, 500, "RUNTIME_ERROR", failed + "path is a directory: " + path);
        case fs_error::too_many:
            return c.error_reply(x, 500, "RUNTIME_ERROR",
                                 failed + "more than " + std::to_string(max_listed) +
                                     " entries, or 64 MiB of their paths: list a deeper directory, or less deep");
        default:
            return c.error_reply(x, 500, "RUNTIME_ERROR", failed + std::string(errno_text(e)));
    }
}

// What a file operation on a process sandbox's real tree failed with, in execd's terms; any
// errno not named is a path that is not there (ENOENT, and one that leaves the tree: EXDEV).
constexpr std::array<std::pair<int, fs_error>, 14> errno_errors{{
    {EISDIR, fs_error::is_directory},   {ENOTDIR, fs_error::not_directory}, {EEXIST, fs_error::exists},
    {ENOTEMPTY, fs_error::exists},      {EFBIG, fs_error::too_large},       {EINVAL, fs_error::not_regular},
    {ENOSPC, fs_error::no_space},       {EDQUOT, fs_error::no_space},       {ENAMETOOLONG, fs_error::name_too_long},
    {E2BIG, fs_error::too_many},        {EBUSY, fs_error::busy},            {EACCES, fs_error::denied},
    {ELOOP, fs_error::too_deep},        {EPERM, fs_error::not_permitted},
}};

fs_error fs_error_of(const std::system_error& e) {
    const int value = e.code().value();
    const auto* it = std::find_if(errno_errors.begin(), errno_errors.end(), [&](const auto& row) { return row.first == value; });
    return it == errno_errors.end() ? fs_error::not_found : it->second;
}

// A process sandbox's real tree, answering as file_tree answers (the routes take either:
// `with_tree`); a failure is the errno's fs_error, about the path as asked, made normal.
class real_tree {
public:
    explicit real_tree(const process_sandbox& box) : box_(box) {}

    [[nodiscard]] fs_result<entry_info> info(std::string_view path) const {
        return attempt<entry_info>(path, [&] { return box_.info(path); });
    }
    [[nodiscard]] fs_result<std::vector<entry_info>> list(std::string_view path, int depth, std::size_t most) const {
        return attempt<std::vector<entry_info>>(path, [&] { return box_.list(path, depth, most); });
    }
    fs_result<bool> remove_files(const std::vector<std::string>& paths) const {
        for (const std::string& path : paths) {
            auto one = attempt<bool>(path, [&] { return box_.remove_file(path), true; });
            if (!one.value) return one;
        }
        return {true};
    }
    fs_result<bool> make_directories(std::string_view path, int mode) const {
        return attempt<bool>(path, [&] { return box_.make_directories(path, mode), true; });
    }
    // rm -rf each, up to the first that fails; a writable folder is emptied and kept, as a
    // mount point is.
    fs_result<bool> remove_directories(const std::vector<std::string>& paths) const {
        for (const std::string& path : paths) {
            auto one = attempt<bool>(path, [&] { return box_.remove_all(path), true; });
            if (!one.value) return one;
        }
        return {true};
    }
    [[nodiscard]] static bool has_user(std::string_view name) { return process_sandbox::has_user(name); }
    fs_result<bool> set_permissions(std::string_view path, int mode, const std::string& owner, const std::string& group) const {
        return attempt<bool>(path, [&] { return box_.set_permissions(path, mode, owner, group), true; });
    }
    fs_result<std::size_t> replace(std::string_view path, std::string_view old, std::string_view replacement) const {
        return attempt<std::size_t>(path, [&] { return box_.replace(path, old, replacement); });
    }
    fs_result<bool> move(std::string_view src, std::string_view dest) const {
        auto moved = attempt<bool>(dest, [&] { return box_.move(src, dest), true; });
        if (!moved.value && moved.error == fs_error::not_regular) moved.error = fs_error::into_itself;  // rename's EINVAL
        if (!moved.value && moved.error == fs_error::not_found && !info(src).value) moved.path = file_tree::normal(src);
        return moved;
    }

private:
    template <class T, class Work>
    static fs_result<T> attempt(std::string_view path, Work work) {
        try {
            return {work()};
        } catch (const std::system_error& e) {
            return {std::nullopt, fs_error_of(e), file_tree::normal(path)};
        }
    }

    const process_sandbox& box_;
};

// The sandbox's files, real (the process runtime) or simulated, given to `use` as
// `sandbox_store::with_files` gives the simulated ones; none when the sandbox is gone.
template <class Use>
auto with_tree(context& c, const call& k, Use use) -> std::optional<decltype(use(std::declval<file_tree&>()))> {
    if (!c.processes) return c.sandboxes.with_files(k.sandbox_id, use);
    const auto box = c.sandboxes.box(k.sandbox_id);
    if (!box) return std::nullopt;
    real_tree tree(*box);
    return use(tree);
}

template <class T>
response reply_of(const context& c, const exchange& x, const fs_result<T>& r, std::string_view doing) {
    return r.value ? c.empty_reply(x, 200) : error_of(c, x, r.error, r.path, doing);
}

// RFC 6266 with RFC 8187: `filename="…"` keeps only bytes that need neither quoting nor
// escaping (every other one is `_`, so no `"`, `\`, `;` or `=` of a stranger's can look like a
// parameter even to a naive parser), and only a name that lost bytes so adds the exact one,
// percent-encoded, in `filename*=UTF-8''…`.
std::string attachment_disposition(std::string_view name) {
    constexpr std::string_view fallback_extra = " !#$&'()+,-.@[]^_`{|}~";
    constexpr std::string_view attr_char = "!#$&+-.^_`|~";
    constexpr std::string_view hex = "0123456789ABCDEF";
    const auto plain = [](unsigned char b, std::string_view extra) {
        return b < 0x80 && (std::isalnum(b) != 0 || extra.find(static_cast<char>(b)) != std::string_view::npos);
    };
    std::string fallback;
    std::string exact;
    for (const char ch : name) {
        const auto b = static_cast<unsigned char>(ch);
        fallback += plain(b, fallback_extra) ? ch : '_';
        if (plain(b, attr_char)) {
            exact += ch;
        } else {
            exact += '%';
            exact += hex[b >> 4];
            exact += hex[b & 0xf];
        }
    }
    std::string out = "attachment; filename=\"" + fallback + "\"";
    if (fallback != name) out += "; filename*=UTF-8''" + exact;
    return out;
}

// FileInfo: Go's encoder writes the embedded Permission's fields at the top level.
json::object info_json(const entry_info& e) {
    return {{"path", e.path},
            {"type", e.directory ? "directory" : "file"},
            {"size", e.size},
            {"modified_at", rfc3339(e.modified_at)},
            {"created_at", rfc3339(e.created_at)},
            {"owner", e.owner},
            {"group", e.group},
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

// Every file of a multipart body written, or why not: work that grows with the body (up to
// 64 MiB) and the tree, for the workers.
response upload_reply(context& c, const exchange& x, const std::string& sandbox_id) {
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
        return c.error_reply(x, 400, "INVALID_FILE_METADATA", "expected a metadata part with a path, then a file part");
    }
    if (c.processes) {
        const auto box = c.sandboxes.box(sandbox_id);
        if (!box) return c.not_found(x, sandbox_id);
        for (const auto& [to, content] : files) {
            try {
                box->write_file(to.path, content, to.mode);
            } catch (const std::system_error& e) {
                return error_of(c, x, fs_error_of(e), file_tree::normal(to.path), "error writing file");
            }
        }
        return c.empty_reply(x, 200);
    }
    const auto written = c.sandboxes.with_files(sandbox_id, [&](file_tree& tree) {
        for (auto& [to, content] : files) {
            if (auto put = tree.put(to.path, std::move(content), to.mode); !put.value) return put;
        }
        return fs_result<bool>{true};
    });
    return !written ? c.not_found(x, sandbox_id) : reply_of(c, x, *written, "error writing file");
}

awaitable<void> upload(context& c, exchange& x, call& k) {
    response res = co_await c.off_io([&] { return upload_reply(c, x, k.sandbox_id); });
    co_await x.reply(std::move(res));
}

// A byte range of a file of `size` bytes, as execd's ParseRange reads `bytes=a-b,c-,-n`: the
// first range that starts inside the file; nothing when the header is malformed; an empty
// range when none starts inside it.
struct byte_range {
    std::uint64_t start = 0;
    std::uint64_t length = 0;
};

std::optional<std::int64_t> whole_number(std::string_view text) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty() || n < 0) return std::nullopt;
    return n;
}

std::optional<std::optional<byte_range>> first_range(std::string_view header, std::uint64_t size) {
    if (!header.starts_with("bytes=")) return std::nullopt;
    header.remove_prefix(6);
    std::optional<byte_range> first;
    for (std::size_t at = 0; at <= header.size();) {
        const std::size_t comma = std::min(header.find(',', at), header.size());
        std::string_view part = header.substr(at, comma - at);
        at = comma + 1;
        while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
        if (part.empty()) continue;
        const std::size_t dash = part.find('-');
        if (dash == std::string_view::npos) return std::nullopt;
        const std::string_view from = part.substr(0, dash);
        const std::string_view to = part.substr(dash + 1);
        byte_range r;
        if (from.find_first_not_of(' ') == std::string_view::npos) {  // the last n bytes
            const auto n = whole_number(to);
            if (!n) return std::nullopt;
            r.start = size - std::min<std::uint64_t>(static_cast<std::uint64_t>(*n), size);
            r.length = size - r.start;
        } else {
            const auto i = whole_number(from);
            if (!i) return std::nullopt;
            r.start = static_cast<std::uint64_t>(*i);
            if (to.find_first_not_of(' ') == std::string_view::npos) {
                r.length = r.start < size ? size - r.start : 0;
            } else {
                const auto j = whole_number(to);
                if (!j || *j < *i) return std::nullopt;
                r.length = static_cast<std::uint64_t>(*j - *i) + 1;
            }
        }
        if (r.start >= size) continue;
        r.length = std::min(r.length, size - r.start);
        if (!first) first = r;
    }
    return first;
}

// Lines `offset` (from 1) on, at most `limit` of them, their ends trimmed and joined by "\n",
// as execd's serveLineRange writes them.
std::string line_range(std::string_view content, std::int64_t offset, std::int64_t limit) {
    std::string out;
    std::int64_t number = 0;
    std::int64_t written = 0;
    for (std::size_t at = 0; at < content.size() && written < limit;) {
        const std::size_t end = std::min(content.find('\n', at), content.size());
        std::string_view line = content.substr(at, end - at);
        at = end + 1;
        while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
        if (++number < offset) continue;
        if (written++ > 0) out += '\n';
        out += line;
    }
    return out;
}

// What a download sends: a whole reply (lines of the file, or a refusal), or bytes of the
// file (the whole of it, or `part`, 206) streamed from the content the tree shares.
struct download_plan {
    std::optional<response> whole{};
    std::optional<byte_range> part{};
};

// A download of bytes (no offset or limit): the whole file, or the Range's part of it.
download_plan plan_bytes(const context& c, const exchange& x, std::uint64_t size) {
    const auto range = x.req().find(http::field::range);
    if (range == x.req().end()) return {};
    const auto parsed = first_range(range->value(), size);
    if (!parsed) return {c.error_reply(x, 416, "UNKNOWN", "")};
    if (!*parsed) {  // nothing starts inside the file: net/http's ServeContent answers
        response res = c.text_reply(x, 416, "invalid range: failed to overlap", "text/plain; charset=utf-8");
        res.set(http::field::content_range, "bytes */" + std::to_string(size));
        return {std::move(res)};
    }
    return {std::nullopt, *parsed};
}

// execd's answer to a download: the file, a byte range of it (Range, 206), or lines of it
// (offset and limit, text/plain); the two kinds of part are exclusive.
download_plan plan_download(const context& c, const exchange& x, const std::string& content) {
    const std::string_view target = x.req().target();
    const auto offset = query_value(target, "offset");
    const auto limit = query_value(target, "limit");
    const auto range = x.req().find(http::field::range);
    if (offset || limit) {
        if (range != x.req().end()) {
            return {c.error_reply(x, 400, "INVALID_REQUEST_BODY",
                                  "line-based reading (offset/limit) and byte range (Range header) are mutually exclusive")};
        }
        const auto first = offset ? whole_number(*offset) : std::optional<std::int64_t>(1);
        if (!first || *first < 1) return {c.error_reply(x, 400, "INVALID_REQUEST_BODY", "invalid query parameter 'offset': " + *offset)};
        // No limit is every line; an optional here trips g++ 12's -Wmaybe-uninitialized at -O2.
        const std::int64_t most = limit ? whole_number(*limit).value_or(0) : std::numeric_limits<std::int64_t>::max();
        if (most < 1) return {c.error_reply(x, 400, "INVALID_REQUEST_BODY", "invalid query parameter 'limit': " + *limit)};
        return {c.text_reply(x, 200, line_range(content, *first, most), "text/plain; charset=utf-8")};
    }
    return plan_bytes(c, x, content.size());
}

bool by_lines(const exchange& x) {
    const std::string_view target = x.req().target();
    return query_value(target, "offset") || query_value(target, "limit");
}

// The file's bytes, or `part` of them, with their length, in pieces of 64 KiB: a peer that
// does not read holds one piece, not a copy of the file (24 unread downloads of 16 MiB once
// held 450 MiB). `piece_at(offset, length)` gives the bytes there (awaitable), or fewer when
// the file has shrunk: the reply then ends short and its connection closes, so the client
// sees a body shorter than its length.
template <class PieceAt>
awaitable<void> stream_pieces(exchange& x, const std::string& path, std::uint64_t size,
                              std::optional<byte_range> part, PieceAt piece_at) {
    constexpr std::uint64_t piece = 64 << 10;
    const byte_range bytes = part.value_or(byte_range{0, size});
    http::response<http::empty_body> head(part ? http::status::partial_content : http::status::ok, x.req().version());
    head.set(http::field::content_type, "application/octet-stream");
    head.set(http::field::content_disposition, attachment_disposition(path.substr(path.rfind('/') + 1)));
    if (part) {
        head.set(http::field::content_range, "bytes " + std::to_string(part->start) + "-" +
                                                 std::to_string(part->start + part->length - 1) + "/" +
                                                 std::to_string(size));
    }
    set_request_id(head);
    head.content_length(bytes.length);
    if (!co_await x.begin_stream(std::move(head))) co_return;
    for (std::uint64_t sent = 0; sent < bytes.length; sent += piece) {
        const std::uint64_t wanted = std::min(piece, bytes.length - sent);
        const std::string_view next = co_await piece_at(bytes.start + sent, wanted);
        if (!next.empty() && !co_await x.chunk(next)) co_return;
        if (next.size() < wanted) {  // shrunk while sent: the connection closes, the reply short
            x.close_connection();
            co_return;
        }
    }
    co_await x.end_stream();
}

awaitable<void> stream_download(exchange& x, const std::string& path, const std::string& content,
                                std::optional<byte_range> part) {
    co_await stream_pieces(x, path, content.size(), part,
                           [&](std::uint64_t at, std::uint64_t length) -> awaitable<std::string_view> {
                               co_return std::string_view(content).substr(at, length);
                           });
}

// A process sandbox's file, of any size, streamed from its descriptor: 1 MiB read at a time
// by a worker (a disk may block), sent in the pieces above.
awaitable<void> stream_file(context& c, exchange& x, const std::string& path, process_sandbox::opened_file file,
                            std::optional<byte_range> part) {
    constexpr std::uint64_t read_ahead = 1 << 20;
    const std::unique_ptr<int, void (*)(int*)> closer(&file.fd, [](int* fd) { ::close(*fd); });
    std::string buffer;
    std::uint64_t buffered_at = 0;
    co_await stream_pieces(x, path, file.size, part,
                           [&](std::uint64_t at, std::uint64_t length) -> awaitable<std::string_view> {
        if (at < buffered_at || at + length > buffered_at + buffer.size()) {
            buffer = co_await c.off_io([&] {
                std::string bytes(std::max(length, read_ahead), '\0');
                std::size_t got = 0;
                while (got < bytes.size()) {
                    const ssize_t n = ::pread(file.fd, bytes.data() + got, bytes.size() - got, static_cast<off_t>(at + got));
                    if (n > 0) got += static_cast<std::size_t>(n);
                    if (n == 0 || (n < 0 && errno != EINTR)) break;
                }
                bytes.resize(got);
                return bytes;
            });
            buffered_at = at;
        }
        co_return std::string_view(buffer).substr(at - buffered_at, length);
    });
}

awaitable<void> download(context& c, exchange& x, call& k) {
    const auto path = query_value(x.req().target(), "path");
    if (!path || path->empty()) {
        co_await x.reply(c.error_reply(x, 400, "MISSING_QUERY", "missing query parameter 'path'"));
        co_return;
    }
    // (the shared content is held while it streams)
    std::optional<file_entry> file = c.processes ? std::nullopt : c.sandboxes.file(k.sandbox_id, *path);
    if (c.processes) {
        const auto box = c.sandboxes.box(k.sandbox_id);
        if (!box) {
            co_await x.reply(c.not_found(x, k.sandbox_id));
            co_return;
        }
        // Bytes stream from the file whatever its size; lines are read from it whole (64 MiB).
        const bool lines = by_lines(x);
        std::optional<std::string> bytes;
        std::optional<process_sandbox::opened_file> opened;
        std::optional<fs_error> failed;
        try {
            if (lines) {
                bytes = co_await c.off_io([&] { return box->read_file(*path); });
            } else {
                opened = co_await c.off_io([&] { return box->open_file(*path); });
            }
        } catch (const std::system_error& e) {
            failed = fs_error_of(e);
        }
        if (failed && *failed != fs_error::not_found) {
            co_await x.reply(error_of(c, x, *failed, file_tree::normal(*path), "error reading file"));
            co_return;
        }
        if (opened) {
            download_plan plan = plan_bytes(c, x, opened->size);
            if (plan.whole) {
                ::close(opened->fd);
                co_await x.reply(std::move(*plan.whole));
            } else {
                co_await stream_file(c, x, *path, *opened, plan.part);
            }
            co_return;
        }
        if (bytes) file = file_entry{.content = std::make_shared<const std::string>(std::move(*bytes))};
    }
    if (!file) {
        co_await x.reply(c.error_reply(x, 404, "FILE_NOT_FOUND",
                                       "file not found. open " + file_tree::normal(*path) + ": no such file or directory"));
        co_return;
    }
    download_plan plan = plan_download(c, x, *file->content);
    if (plan.whole) {
        co_await x.reply(std::move(*plan.whole));
    } else {
        co_await stream_download(x, *path, *file->content, plan.part);
    }
}

awaitable<void> file_info(context& c, exchange& x, call& k) {
    const std::vector<std::string> paths = query_values(x.req().target(), "path");
    const auto found = co_await c.off_io_if(c.processes != nullptr, [&] {
      return with_tree(c, k, [&](const auto& tree) {
        fs_result<json::object> out{json::object{}};
        for (const std::string& p : paths) {
            auto one = tree.info(p);
            if (!one.value) return fs_result<json::object>{std::nullopt, one.error, one.path};
            (*out.value)[p] = info_json(*one.value);  // keyed by the path as asked
        }
        return out;
      });
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
    const auto removed = co_await c.off_io_if(c.processes != nullptr, [&] { return with_tree(c, k, [&](auto& tree) { return tree.remove_files(paths); }); });
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
    // A listing, and its reply, grow with the tree: both are made on a worker.
    response res = co_await c.off_io([&] {
        const auto listed = with_tree(c, k, [&](const auto& tree) {
            return tree.list(*path, static_cast<int>(depth->value_or(1)), max_listed);
        });
        if (!listed) return c.not_found(x, k.sandbox_id);
        if (listed->value) {
            json::array entries;
            entries.reserve(listed->value->size());
            for (const entry_info& e : *listed->value) entries.push_back(info_json(e));
            return c.json_reply(x, 200, entries);
        }
        if (listed->error == fs_error::not_directory) {
            return c.error_reply(x, 400, "INVALID_REQUEST_BODY", "path is not a directory: " + listed->path);
        }
        return error_of(c, x, listed->error, listed->path, "error listing directory");
    });
    co_await x.reply(std::move(res));
}

// POST /directories: {"<path>": {"mode": 755, "owner": …, "group": …}, …}, mkdir -p each:
// the parse and the work grow with the body (200,000 directories took 2.7 s), so a worker
// does both.
response create_directories_reply(context& c, const exchange& x, const call& k) {
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
        return c.error_reply(x, 400, "INVALID_REQUEST_BODY",
                             "error parsing request, MAYBE invalid body format. expected a map of paths to permissions");
    }
    const auto made = with_tree(c, k, [&](auto& tree) {
        for (const auto& [path, mode] : dirs) {
            if (auto one = tree.make_directories(path, mode); !one.value) return one;
        }
        return fs_result<bool>{true};
    });
    return !made ? c.not_found(x, k.sandbox_id) : reply_of(c, x, *made, "mkdir");
}

awaitable<void> create_directories(context& c, exchange& x, call& k) {
    response res = co_await c.off_io([&] { return create_directories_reply(c, x, k); });
    co_await x.reply(std::move(res));
}

awaitable<void> delete_directories(context& c, exchange& x, call& k) {
    const std::vector<std::string> paths = query_values(x.req().target(), "path");
    const auto removed = co_await c.off_io([&] {  // rm -rf walks the tree
        return with_tree(c, k, [&](auto& tree) { return tree.remove_directories(paths); });
    });
    response res = !removed ? c.not_found(x, k.sandbox_id) : reply_of(c, x, *removed, "error removing directory");
    co_await x.reply(std::move(res));
}

// What execd says of a body its JSON decoder refuses.
response malformed_body(const context& c, const exchange& x, std::string_view expected) {
    return c.error_reply(x, 400, "INVALID_REQUEST_BODY",
                         "error parsing request, MAYBE invalid body format. expected " + std::string(expected));
}

std::optional<std::string> text_field(const json::object& o, std::string_view key) {
    const json::value* v = o.if_contains(key);
    if (!v || !v->is_string()) return std::nullopt;
    return std::string(v->as_string());
}

using moves = std::vector<std::pair<std::string, std::string>>;

// [{"src", "dest"}, …], both non-empty strings; nothing for any other body.
std::optional<moves> moves_of(std::string_view text) {
    json::error_code ec;
    const json::value body = json::parse(text, ec);
    if (ec || !body.is_array()) return std::nullopt;
    moves out;
    for (const json::value& item : body.as_array()) {
        const json::object* o = item.if_object();
        auto src = o ? text_field(*o, "src") : std::nullopt;
        auto dest = o ? text_field(*o, "dest") : std::nullopt;
        if (!src || !dest || src->empty() || dest->empty()) return std::nullopt;
        out.emplace_back(std::move(*src), std::move(*dest));
    }
    return out;
}

// execd's answer to a move that failed at `at`, as RenameFile words it.
response move_error(const context& c, const exchange& x, const fs_result<bool>& r, const std::string& src,
                    const std::string& dest) {
    switch (r.error) {
        case fs_error::not_found:
            return c.error_reply(x, 404, "FILE_NOT_FOUND",
                                 "file not found. source path not found: " + src + ": stat " + r.path +
                                     ": no such file or directory");
        case fs_error::exists:
            return c.error_reply(x, 500, "RUNTIME_ERROR", "error accessing file: destination path already exists: " + dest);
        case fs_error::not_directory:
            return c.error_reply(x, 500, "RUNTIME_ERROR", "error accessing file: failed to create destination directory: mkdir " +
                                                              r.path + ": not a directory");
        default:
            return c.error_reply(x, 500, "RUNTIME_ERROR", "error accessing file: failed to rename file: rename " +
                                                              file_tree::normal(src) + " " + r.path + ": " + std::string(errno_text(r.error)));
    }
}

// POST /files/mv: [{"src", "dest"}, …], each moved in turn; the first failure ends it.
awaitable<void> move_files(context& c, exchange& x, call& k) {
    const std::optional<moves> wanted = moves_of(x.req().body());
    if (!wanted) {
        co_await x.reply(malformed_body(c, x, "an array of {src, dest}"));
        co_return;
    }
    const auto moved = co_await c.off_io([&] {  // a move walks the tree
        return with_tree(c, k, [&](auto& tree) {
            for (const auto& [src, dest] : *wanted) {
                if (auto one = tree.move(src, dest); !one.value) return response(move_error(c, x, one, src, dest));
            }
            return c.empty_reply(x, 200);
        });
    });
    response res = moved ? std::move(*moved) : c.not_found(x, k.sandbox_id);
    co_await x.reply(std::move(res));
}

// A mode as execd reads it: decimal digits that must also be octal ones (755).
bool octal_digits(std::int64_t mode) {
    if (mode < 0) return false;
    for (; mode > 0; mode /= 10) {
        if (mode % 10 > 7) return false;
    }
    return true;
}

struct permission_change {
    std::string path;
    std::int64_t mode;
    std::string owner;
    std::string group;
};

// A JSON object of objects keyed by path, each read by `read`; nothing for any other body or
// when one entry does not fit.
template <class T, class Read>
std::optional<std::vector<T>> per_path(std::string_view text, Read read) {
    json::error_code ec;
    const json::value body = json::parse(text, ec);
    if (ec || !body.is_object()) return std::nullopt;
    std::vector<T> out;
    for (const auto& [path, item] : body.as_object()) {
        const json::object* o = item.if_object();
        std::optional<T> one = o ? read(std::string(path), *o) : std::nullopt;
        if (!one) return std::nullopt;
        out.push_back(std::move(*one));
    }
    return out;
}

// {"<path>": {"mode", "owner", "group"}, …}.
std::optional<std::vector<permission_change>> permission_changes_of(std::string_view text) {
    return per_path<permission_change>(text, [](std::string path, const json::object& o) -> std::optional<permission_change> {
        const json::value* mode = o.if_contains("mode");
        if (mode && !mode->is_int64()) return std::nullopt;
        return permission_change{std::move(path), mode ? mode->as_int64() : 0, text_field(o, "owner").value_or(""),
                                 text_field(o, "group").value_or("")};
    });
}

// What execd says of one change it cannot make, or nothing when it is made. A user or
// group the sandbox has not is refused as Go's os/user refuses it.
template <class Tree>
std::optional<std::string> apply(Tree& tree, const permission_change& one) {
    const std::string prefix = "error changing permissions for " + one.path + ". ";
    if (!octal_digits(one.mode) || one.mode > 7777) {
        return prefix + "strconv.ParseUint: parsing \"" + std::to_string(one.mode) + "\": invalid syntax";
    }
    if (one.mode == 0 && one.owner.empty() && one.group.empty()) return std::nullopt;  // nothing to change
    if (!one.owner.empty() && !tree.has_user(one.owner)) {
        return prefix + "failed to lookup user " + one.owner + ": user: unknown user " + one.owner;
    }
    if (!one.group.empty() && !tree.has_user(one.group)) {
        return prefix + "failed to lookup group " + one.group + ": group: unknown group " + one.group;
    }
    const auto set = tree.set_permissions(one.path, static_cast<int>(one.mode), one.owner, one.group);
    if (set.value) return std::nullopt;
    const std::string_view call = set.error == fs_error::no_space ? "chown " : "chmod ";
    return prefix + std::string(call) + set.path + ": " + std::string(errno_text(set.error));
}

// POST /files/permissions: {"<path>": {"mode", "owner", "group"}, …}. The simulated image
// has every user of a Linux user name's length; a process sandbox has root and sandbox.
awaitable<void> set_permissions(context& c, exchange& x, call& k) {
    const auto changes = permission_changes_of(x.req().body());
    if (!changes) {
        co_await x.reply(malformed_body(c, x, "a map of paths to permissions"));
        co_return;
    }
    const auto too_long = [](const permission_change& one) {
        return std::max(one.owner.size(), one.group.size()) > file_tree::max_user_name;
    };
    if (std::any_of(changes->begin(), changes->end(), too_long)) {
        co_await x.reply(c.error_reply(x, 400, "INVALID_REQUEST_BODY", "owner and group names are at most " +
                                                                           std::to_string(file_tree::max_user_name) + " bytes"));
        co_return;
    }
    const auto changed = co_await c.off_io_if(c.processes != nullptr, [&] {
        return with_tree(c, k, [&](auto& tree) {
            for (const permission_change& one : *changes) {
                if (auto problem = apply(tree, one)) return c.error_reply(x, 500, "RUNTIME_ERROR", *problem);
            }
            return c.empty_reply(x, 200);
        });
    });
    response res = changed ? std::move(*changed) : c.not_found(x, k.sandbox_id);
    co_await x.reply(std::move(res));
}

// The reply to a pattern that is not compiled: execd's syntax error, or a 400 naming the bound.
response pattern_refused(const context& c, const exchange& x, const std::string& pattern, glob_error why) {
    struct bound {
        glob_error why;
        std::string_view past;
    };
    static constexpr bound bounds[] = {
        {glob_error::too_long, "longer than 4096 bytes"},
        {glob_error::too_branching, "its braces make more than 256 alternatives"},
        {glob_error::too_large, "its alternatives come to more than 256 KiB"},
    };
    static_assert(glob::max_pattern == 4096 && glob::max_alternatives == 256 && glob::max_expanded == 256 << 10);
    for (const bound& b : bounds) {
        if (b.why == why) {
            return c.error_reply(x, 400, "INVALID_REQUEST_BODY", "invalid query parameter 'pattern': " + std::string(b.past));
        }
    }
    return c.error_reply(x, 500, "RUNTIME_ERROR", "error searching files. invalid pattern " + pattern + ": syntax error in pattern");
}

// The files below `path` whose name `matcher` matches, within the matcher's steps and
// `max_listed`: work that grows with the tree, for the workers.
response search_reply(context& c, const exchange& x, const call& k, const std::string& path, const glob& matcher) {
    const std::string& sandbox_id = k.sandbox_id;
    const auto found = with_tree(c, k, [&](const auto& tree) {
        auto root = tree.info(path);
        if (!root.value) return fs_result<std::vector<entry_info>>{std::nullopt, root.error, root.path};
        if (!root.value->directory) return fs_result<std::vector<entry_info>>{std::vector<entry_info>{*root.value}};
        return tree.list(path, std::numeric_limits<int>::max(), max_searched);
    });
    if (!found) return c.not_found(x, sandbox_id);
    if (!found->value && found->error == fs_error::not_found) {
        return c.error_reply(x, 404, "FILE_NOT_FOUND", "file not found. stat " + found->path + ": no such file or directory");
    }
    if (!found->value && found->error == fs_error::too_many) {
        return c.error_reply(x, 500, "RUNTIME_ERROR", "error searching files. more than " + std::to_string(max_searched) +
                                                          " entries (or 64 MiB of their paths) below " + found->path + ": search a deeper directory");
    }
    if (!found->value) {
        return c.error_reply(x, 500, "RUNTIME_ERROR", "error accessing file: stat " + found->path + ": " +
                                                          std::string(errno_text(found->error)));
    }
    json::array files;
    std::uint64_t steps = glob::max_steps;
    for (const entry_info& e : *found->value) {
        if (e.directory) continue;
        const auto matched = matcher.matches(std::string_view(e.path).substr(e.path.rfind('/') + 1), steps);
        if (!matched) {
            return c.error_reply(x, 500, "RUNTIME_ERROR", "error searching files. the pattern took too many steps (" +
                                                              std::to_string(glob::max_steps) + ") over these names");
        }
        if (!*matched) continue;
        if (files.size() == max_listed) {
            return c.error_reply(x, 500, "RUNTIME_ERROR",
                                 "error searching files. more than " + std::to_string(max_listed) + " files match");
        }
        files.push_back(info_json(e));
    }
    return c.json_reply(x, 200, files);
}

// GET /files/search?path=&pattern=: the files below `path` whose name matches, in the
// order a walk of the tree meets them.
awaitable<void> search_files(context& c, exchange& x, call& k) {
    const auto path = query_value(x.req().target(), "path");
    if (!path || path->empty()) {
        co_await x.reply(c.error_reply(x, 400, "MISSING_QUERY", "missing query parameter 'path'"));
        co_return;
    }
    std::string pattern = query_value(x.req().target(), "pattern").value_or("");
    if (pattern.empty()) pattern = "**";
    glob_error why{};
    const auto matcher = glob::compile(pattern, why);
    if (!matcher) {
        co_await x.reply(pattern_refused(c, x, pattern, why));
        co_return;
    }
    response res = co_await c.off_io([&] { return search_reply(c, x, k, *path, *matcher); });
    co_await x.reply(std::move(res));
}

struct replacement {
    std::string path;
    std::string old_text;
    std::string new_text;
};

// {"<path>": {"old", "new"}, …}; a missing field is empty, as Go decodes it.
std::optional<std::vector<replacement>> replacements_of(std::string_view text) {
    return per_path<replacement>(text, [](std::string path, const json::object& o) -> std::optional<replacement> {
        const json::value* old_text = o.if_contains("old");
        const json::value* new_text = o.if_contains("new");
        if ((old_text && !old_text->is_string()) || (new_text && !new_text->is_string())) return std::nullopt;
        return replacement{std::move(path), text_field(o, "old").value_or(""), text_field(o, "new").value_or("")};
    });
}

// Every replacement in turn, as ReplaceContent makes them: the answer, with the counts when
// `verbose`.
template <class Tree>
response replace_all(const context& c, const exchange& x, Tree& tree, const std::vector<replacement>& wanted, bool verbose) {
    json::object counts;
    for (const replacement& r : wanted) {
        const auto info = tree.info(r.path);
        if (!info.value) {
            return c.error_reply(x, 404, "FILE_NOT_FOUND", "file not found. stat " + info.path + ": no such file or directory");
        }
        if (info.value->directory) {
            return c.error_reply(x, 500, "RUNTIME_ERROR", "error accessing file: read " + info.path + ": is a directory");
        }
        if (r.old_text.empty()) return c.error_reply(x, 400, "INVALID_REQUEST_BODY", "old content must not be empty");
        const auto replaced = tree.replace(r.path, r.old_text, r.new_text);
        if (!replaced.value) return error_of(c, x, replaced.error, replaced.path, "error accessing file: write");
        counts[r.path] = json::object{{"replacedCount", *replaced.value}};
    }
    return verbose ? c.json_reply(x, 200, counts) : c.empty_reply(x, 200);
}

// POST /files/replace[?verbose=true]: {"<path>": {"old", "new"}, …}, every occurrence
// replaced; with verbose, how many per file.
awaitable<void> replace_contents(context& c, exchange& x, call& k) {
    const auto wanted = replacements_of(x.req().body());
    if (!wanted) {
        co_await x.reply(malformed_body(c, x, "a map of paths to {old, new}"));
        co_return;
    }
    const bool verbose = query_value(x.req().target(), "verbose") == "true";
    const auto replaced = co_await c.off_io([&] {  // a replacement rewrites files of up to 64 MiB
        return with_tree(c, k, [&](auto& tree) { return replace_all(c, x, tree, *wanted, verbose); });
    });
    response res = replaced ? std::move(*replaced) : c.not_found(x, k.sandbox_id);
    co_await x.reply(std::move(res));
}

using v = http::verb;
constexpr std::array filesystem_table{
    route{v::post, "/files/upload", "upload", upload, "", "upload"},
    route{v::get, "/files/download", "download", download, "", "download"},
    route{v::get, "/files/info", "file_info", file_info, "", "info"},
    route{v::delete_, "/files", "delete_files", delete_files, "", "delete"},
    route{v::post, "/files/mv", "move_files", move_files, "", "rename"},
    route{v::post, "/files/permissions", "set_permissions", set_permissions, "", "chmod"},
    route{v::get, "/files/search", "search_files", search_files, "", "search"},
    route{v::post, "/files/replace", "replace_contents", replace_contents, "", "replace"},
    route{v::get, "/directories/list", "list_directory", list_directory, "", "listdir"},
    route{v::post, "/directories", "create_directories", create_directories, "", "mkdir"},
    route{v::delete_, "/directories", "delete_directories", delete_directories, "", "rmdir"},
};

}  // namespace

std::span<const route> filesystem_routes() noexcept { return filesystem_table; }

}  // namespace ngfail::opensandbox::testing::detail
