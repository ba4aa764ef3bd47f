// One sandbox's in-memory file system, as execd's filesystem routes see a pod's: files and
// directories with mode, owner and times. Not thread-safe: the sandbox store holds it under
// its lock. File contents are shared, never copied, so a download holds no lock.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ngfail::opensandbox::testing::detail {

struct file_entry {
    std::shared_ptr<const std::string> content{};
    int mode = 644;
    std::chrono::system_clock::time_point modified_at{};
    std::string owner = "root";
    std::string group = "root";
};

// What execd's FileInfo says of an entry.
struct entry_info {
    std::string path{};
    bool directory = false;
    std::uint64_t size = 0;
    int mode = 644;  // octal digits as a decimal number, as execd writes them (755)
    std::chrono::system_clock::time_point modified_at{};
    std::chrono::system_clock::time_point created_at{};
    std::string owner = "root";
    std::string group = "root";
};

// Why an operation did not happen, in execd's terms.
enum class fs_error {
    not_found,      // 404 FILE_NOT_FOUND
    is_directory,   // 500 RUNTIME_ERROR: a file operation on a directory
    not_directory,  // a path component or the listed path is a file
    exists,         // a move's destination is taken
    into_itself,    // a directory moved below itself (rename's EINVAL)
    too_large,      // a file would outgrow `file_tree::max_file_size`
    no_space,       // the tree would outgrow the room it is given (ENOSPC)
    name_too_long,  // a path past `file_tree::max_path` or a name in it past `max_name` (ENAMETOOLONG)
    too_many,       // a listing would hold more than the entries asked for at most
    not_regular,    // the process runtime: a FIFO, a device or a socket, which no route reads or writes
    busy,           // the process runtime: a writable folder itself, which stays (as a mount point)
    denied,         // the process runtime: EACCES
    too_deep,       // the process runtime: a removal past its depth, or a loop of links (ELOOP)
    not_permitted,  // the process runtime: EPERM (the tree's own root)
};

// How many times `old` (not empty) occurs in `text`, each after the one before.
[[nodiscard]] std::size_t occurrences(std::string_view text, std::string_view old) noexcept;
// `text` with each of those replaced by `replacement`.
[[nodiscard]] std::string replaced(std::string_view text, std::string_view old, std::string_view replacement);

template <class T>
struct fs_result {
    std::optional<T> value;
    fs_error error = fs_error::not_found;
    std::string path{};  // the path the error is about
};

class file_tree {
public:
    // The largest file the tree keeps: what one upload can bring. A replacement that would
    // make a file larger is refused, so that no request multiplies memory.
    static constexpr std::size_t max_file_size = 64 << 20;
    // Linux's bounds on a path (PATH_MAX with its NUL) and on each name in it (NAME_MAX); a
    // write, mkdir or move past them fails with `name_too_long` before any work.
    static constexpr std::size_t max_path = 4095;
    static constexpr std::size_t max_name = 255;
    // Linux's bound on a user or group name (useradd's 32): the routes refuse longer owners.
    static constexpr std::size_t max_user_name = 32;

    file_tree();

    // `path` made absolute ("/" for relative ones, as execd's working directory) and
    // lexically normal: no "//", ".", ".." or trailing "/".
    [[nodiscard]] static std::string normal(std::string_view path);

    // Writes a file with `mode`, creating its parent directories (as execd's upload does).
    fs_result<bool> put(std::string_view path, std::string content, int mode = 644);
    [[nodiscard]] std::optional<file_entry> file(std::string_view path) const;
    // Whether a directory is at `path`, absolute and normal (as `normal` makes it).
    [[nodiscard]] bool is_directory(std::string_view path) const { return directories_.contains(path); }

    // Deletes files; a missing one is no error, a directory is.
    fs_result<bool> remove_files(const std::vector<std::string>& paths);
    // mkdir -p; `mode` applies to the directories it creates.
    fs_result<bool> make_directories(std::string_view path, int mode);
    // rm -rf; a missing one is no error.
    fs_result<bool> remove_directories(const std::vector<std::string>& paths);
    // The entries under a directory, `depth` levels down, lexical by name within each
    // directory, each directory's descendants right after it.
    // At most `most` entries: past them, `too_many` (a reply that grows with the tree would
    // hold a whole tree of a million entries, twice over, as JSON).
    fs_result<std::vector<entry_info>> list(std::string_view path, int depth,
                                            std::size_t most = static_cast<std::size_t>(-1)) const;
    fs_result<entry_info> info(std::string_view path) const;

    // mv: a file, or a directory with everything below it, to `dest`, whose parent
    // directories are made first; the destination must not exist.
    fs_result<bool> move(std::string_view src, std::string_view dest);
    // The simulated image has every user and group (of a Linux name's length).
    [[nodiscard]] static bool has_user(std::string_view) noexcept { return true; }
    // chmod (unless `mode` is 0) and chown (an empty owner or group stays).
    fs_result<bool> set_permissions(std::string_view path, int mode, const std::string& owner,
                                    const std::string& group);
    // Replaces every `old` in a file's content (the mode kept); how many there were.
    fs_result<std::size_t> replace(std::string_view path, std::string_view old, std::string_view replacement);

    // What the tree holds, in bytes: every file's content and every entry's path, owner and
    // group with a fixed cost per entry (so that empty files and directories count too).
    [[nodiscard]] std::size_t footprint() const noexcept { return footprint_; }
    // Writes that would take the footprint past `room` fail with `no_space`, as a full disk
    // fails them; removals always succeed. Unlimited until set.
    void set_room(std::size_t room) noexcept { room_ = room; }

private:
    struct directory_entry {
        int mode = 755;
        std::chrono::system_clock::time_point created_at{};
        std::string owner = "root";
        std::string group = "root";
    };
    [[nodiscard]] bool exists(std::string_view path) const { return is_directory(path) || files_.contains(path); }
    // False once `out` would pass `most`.
    bool list_into(const std::string& dir, int depth, std::vector<entry_info>& out, std::size_t most) const;
    [[nodiscard]] entry_info info_of(const std::string& path) const;
    void erase_file(const std::string& path);
    // What mkdir -p of an absolute normal path would add, and the first file in its way.
    struct directories_plan {
        std::size_t cost = 0;
        std::optional<std::string_view> blocked{};
    };
    [[nodiscard]] directories_plan plan_directories(std::string_view path) const;
    fs_result<bool> make_normal_directories(std::string_view path, int mode);

    // Whether `more` bytes fit in the room left; a move or a change in place adds the
    // difference only.
    [[nodiscard]] bool fits(std::size_t more) const noexcept { return more <= room_ - std::min(room_, footprint_); }
    // What an entry takes beside its path and content, measured: 1.3 million directories held
    // 516 MB, about 390 bytes each (map nodes, owner, group, times).
    static constexpr std::size_t entry_cost = 384;
    static constexpr std::size_t root_names = 8;    // a new entry's owner and group, "root" each
    [[nodiscard]] static std::size_t cost(std::string_view path, std::size_t content = 0,
                                          std::size_t names = root_names) noexcept {
        return entry_cost + path.size() + content + names;
    }
    template <class Entry>
    [[nodiscard]] static std::size_t names_of(const Entry& e) noexcept {
        return e.owner.size() + e.group.size();
    }

    // Transparent, so that mkdir -p looks its ancestors up as views of the path.
    std::map<std::string, file_entry, std::less<>> files_;
    std::map<std::string, directory_entry, std::less<>> directories_;
    std::size_t footprint_ = 0;
    std::size_t room_ = static_cast<std::size_t>(-1);
};

}  // namespace ngfail::opensandbox::testing::detail
