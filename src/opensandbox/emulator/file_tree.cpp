#include "file_tree.hpp"

#include <algorithm>

namespace ngfail::opensandbox::testing::detail {
namespace {

using wall_clock = std::chrono::system_clock;

// What a fresh container has: a root and the directories a shell user expects.
constexpr std::pair<std::string_view, int> initial_directories[] = {{"/", 755}, {"/home", 755}, {"/root", 700}, {"/tmp", 777}};

std::string parent_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == 0 ? "/" : path.substr(0, slash);
}

std::string_view name_of(const std::string& path) { return std::string_view(path).substr(path.rfind('/') + 1); }

// Calls `each` with every ancestor of an absolute normal path, root first, then with the path
// itself: views of it, so that mkdir -p copies nothing it does not make (building each
// ancestor as a string once took a 24 KiB path to 294 MiB).
template <class Each>
void for_each_prefix(std::string_view path, Each each) {
    each(path.substr(0, 1));
    for (std::size_t at = path.find('/', 1); path.size() > 1; at = path.find('/', at + 1)) {
        each(path.substr(0, at));
        if (at == std::string_view::npos) break;
    }
}

// Whether Linux would refuse `raw` (made `path`) as too long, as a path or in one of its names.
bool too_long(std::string_view raw, std::string_view path) noexcept {
    if (raw.size() > file_tree::max_path || path.size() > file_tree::max_path) return true;
    for (std::size_t at = 1; at < path.size();) {
        const std::size_t end = std::min(path.find('/', at), path.size());
        if (end - at > file_tree::max_name) return true;
        at = end + 1;
    }
    return false;
}

bool is_below(const std::string& path, const std::string& dir) {
    return dir == "/" ? path != "/" : path.size() > dir.size() && path.starts_with(dir) && path[dir.size()] == '/';
}

template <class T>
fs_result<T> failed(fs_error e, std::string path) {
    return {std::nullopt, e, std::move(path)};
}

// Re-keys `from` and everything below it to the same places below `to`.
template <class Map>
void move_subtree(Map& entries, const std::string& from, const std::string& to) {
    std::vector<typename Map::node_type> moved;
    for (auto it = entries.lower_bound(from); it != entries.end() && it->first.starts_with(from);) {
        const auto next = std::next(it);
        if (it->first == from || is_below(it->first, from)) moved.push_back(entries.extract(it));
        it = next;
    }
    for (auto& node : moved) {
        node.key() = to + node.key().substr(from.size());
        entries.insert(std::move(node));
    }
}

}  // namespace

file_tree::file_tree() {
    for (const auto& [path, mode] : initial_directories) {
        directories_[std::string(path)] = {mode, wall_clock::now()};
        footprint_ += cost(path);
    }
}

std::string file_tree::normal(std::string_view path) {
    std::vector<std::string_view> parts;
    for (std::size_t at = 0; at <= path.size();) {
        const auto slash = std::min(path.find('/', at), path.size());
        const std::string_view part = path.substr(at, slash - at);
        if (part == "..") {
            if (!parts.empty()) parts.pop_back();
        } else if (!part.empty() && part != ".") {
            parts.push_back(part);
        }
        at = slash + 1;
    }
    std::string out;
    for (const std::string_view p : parts) {
        out += '/';
        out += p;
    }
    return out.empty() ? "/" : out;
}

fs_result<bool> file_tree::put(std::string_view raw, std::string content, int mode) {
    const std::string path = normal(raw);
    if (too_long(raw, path)) return failed<bool>(fs_error::name_too_long, path);
    if (is_directory(path)) return failed<bool>(fs_error::is_directory, path);
    const auto old = files_.find(path);
    const std::size_t replaced = old == files_.end() ? 0 : cost(path, old->second.content->size(), names_of(old->second));
    const std::size_t file_cost = cost(path, content.size());
    const std::size_t added = file_cost + plan_directories(parent_of(path)).cost;
    if (added > replaced && !fits(added - replaced)) return failed<bool>(fs_error::no_space, path);
    if (auto made = make_normal_directories(parent_of(path), 755); !made.value) return made;
    files_[path] = file_entry{.content = std::make_shared<const std::string>(std::move(content)),
                              .mode = mode,
                              .modified_at = wall_clock::now()};
    footprint_ = footprint_ - replaced + file_cost;  // the directories counted themselves
    return {true};
}

std::optional<file_entry> file_tree::file(std::string_view raw) const {
    const auto it = files_.find(normal(raw));
    return it == files_.end() ? std::nullopt : std::optional(it->second);
}

fs_result<bool> file_tree::remove_files(const std::vector<std::string>& raw) {
    for (const std::string& r : raw) {
        const std::string path = normal(r);
        if (is_directory(path)) return failed<bool>(fs_error::is_directory, path);
        erase_file(path);
    }
    return {true};
}

fs_result<bool> file_tree::make_directories(std::string_view raw, int mode) {
    const std::string path = normal(raw);
    if (too_long(raw, path)) return failed<bool>(fs_error::name_too_long, path);
    return make_normal_directories(path, mode);
}

fs_result<bool> file_tree::make_normal_directories(std::string_view path, int mode) {
    const directories_plan plan = plan_directories(path);
    if (plan.blocked) return failed<bool>(fs_error::not_directory, std::string(*plan.blocked));
    if (!fits(plan.cost)) return failed<bool>(fs_error::no_space, std::string(path));
    for_each_prefix(path, [&](std::string_view p) {
        if (!is_directory(p)) directories_.emplace(p, directory_entry{p.size() == path.size() ? mode : 755, wall_clock::now()});
    });
    footprint_ += plan.cost;
    return {true};
}

file_tree::directories_plan file_tree::plan_directories(std::string_view path) const {
    directories_plan plan;
    for_each_prefix(path, [&](std::string_view p) {
        if (!plan.blocked && files_.contains(p)) plan.blocked = p;
        if (!is_directory(p)) plan.cost += cost(p);
    });
    return plan;
}

void file_tree::erase_file(const std::string& path) {
    const auto it = files_.find(path);
    if (it == files_.end()) return;
    footprint_ -= cost(path, it->second.content->size(), names_of(it->second));
    files_.erase(it);
}

fs_result<bool> file_tree::remove_directories(const std::vector<std::string>& raw) {
    for (const std::string& r : raw) {
        const std::string dir = normal(r);
        if (files_.contains(dir)) {  // RemoveAll removes a file too
            erase_file(dir);
            continue;
        }
        std::erase_if(files_, [&](const auto& f) {
            const bool below = is_below(f.first, dir);
            if (below) footprint_ -= cost(f.first, f.second.content->size(), names_of(f.second));
            return below;
        });
        std::erase_if(directories_, [&](const auto& d) {
            const bool below = is_below(d.first, dir);
            if (below) footprint_ -= cost(d.first, 0, names_of(d.second));
            return below;
        });
        if (const auto d = directories_.find(dir); dir != "/" && d != directories_.end()) {
            footprint_ -= cost(dir, 0, names_of(d->second));
            directories_.erase(d);
        }
    }
    return {true};
}

fs_result<std::vector<entry_info>> file_tree::list(std::string_view raw, int depth, std::size_t most) const {
    const std::string path = normal(raw);
    if (files_.contains(path)) return failed<std::vector<entry_info>>(fs_error::not_directory, path);
    if (!is_directory(path)) return failed<std::vector<entry_info>>(fs_error::not_found, path);
    std::vector<entry_info> out;
    if (depth > 0 && !list_into(path, depth, out, most)) return failed<std::vector<entry_info>>(fs_error::too_many, path);
    return {std::move(out)};
}

bool file_tree::list_into(const std::string& dir, int depth, std::vector<entry_info>& out, std::size_t most) const {
    // The direct children, by name: a map's order is by the whole path, which puts
    // "/a/b.txt" before "/a/b/c" ('.' < '/'), not by name alone.
    std::vector<std::string> children;
    const std::string prefix = dir == "/" ? dir : dir + "/";
    const auto collect = [&](const auto& entries) {
        for (auto it = entries.lower_bound(prefix); it != entries.end() && it->first.starts_with(prefix); ++it) {
            if (it->first != dir && parent_of(it->first) == dir) children.push_back(it->first);
        }
    };
    collect(directories_);
    collect(files_);
    std::sort(children.begin(), children.end(),
              [](const std::string& a, const std::string& b) { return name_of(a) < name_of(b); });
    for (const std::string& child : children) {
        if (out.size() == most) return false;
        out.push_back(info_of(child));
        if (depth > 1 && is_directory(child) && !list_into(child, depth - 1, out, most)) return false;
    }
    return true;
}

fs_result<entry_info> file_tree::info(std::string_view raw) const {
    const std::string path = normal(raw);
    if (!is_directory(path) && !files_.contains(path)) return failed<entry_info>(fs_error::not_found, path);
    return {info_of(path)};
}

entry_info file_tree::info_of(const std::string& path) const {
    if (const auto d = directories_.find(path); d != directories_.end()) {
        return {.path = path, .directory = true, .size = 4096, .mode = d->second.mode,
                .modified_at = d->second.created_at, .created_at = d->second.created_at,
                .owner = d->second.owner, .group = d->second.group};
    }
    const file_entry& f = files_.at(path);
    return {.path = path, .directory = false, .size = f.content ? f.content->size() : 0, .mode = f.mode,
            .modified_at = f.modified_at, .created_at = f.modified_at, .owner = f.owner, .group = f.group};
}

fs_result<bool> file_tree::move(std::string_view raw_src, std::string_view raw_dest) {
    const std::string src = normal(raw_src);
    const std::string dest = normal(raw_dest);
    if (!exists(src)) return failed<bool>(fs_error::not_found, src);
    if (too_long(raw_dest, dest)) return failed<bool>(fs_error::name_too_long, dest);
    if (auto made = make_normal_directories(parent_of(dest), 755); !made.value) return made;
    if (exists(dest)) return failed<bool>(fs_error::exists, dest);
    if (src == "/" || is_below(dest, src)) return failed<bool>(fs_error::into_itself, dest);
    // Each moved entry's path changes by the same number of bytes.
    std::size_t moved = 0;
    const auto count = [&](const auto& entries) {
        for (const auto& [p, e] : entries) moved += p == src || is_below(p, src) ? 1 : 0;
    };
    count(files_);
    count(directories_);
    const std::size_t longer = dest.size() > src.size() ? moved * (dest.size() - src.size()) : 0;
    if (!fits(longer)) return failed<bool>(fs_error::no_space, dest);
    move_subtree(files_, src, dest);
    move_subtree(directories_, src, dest);
    footprint_ = footprint_ + longer - (dest.size() < src.size() ? moved * (src.size() - dest.size()) : 0);
    return {true};
}

fs_result<bool> file_tree::set_permissions(std::string_view raw, int mode, const std::string& owner,
                                           const std::string& group) {
    const std::string path = normal(raw);
    const auto change = [&](auto& entry) {
        const std::size_t before = names_of(entry);
        const std::size_t after = (owner.empty() ? entry.owner : owner).size() + (group.empty() ? entry.group : group).size();
        if (after > before && !fits(after - before)) return failed<bool>(fs_error::no_space, path);
        if (mode != 0) entry.mode = mode;
        if (!owner.empty()) entry.owner = owner;
        if (!group.empty()) entry.group = group;
        footprint_ = footprint_ - before + after;
        return fs_result<bool>{true};
    };
    if (const auto d = directories_.find(path); d != directories_.end()) return change(d->second);
    if (const auto f = files_.find(path); f != files_.end()) return change(f->second);
    return failed<bool>(fs_error::not_found, path);
}

std::size_t occurrences(std::string_view text, std::string_view old) noexcept {
    std::size_t count = 0;
    for (std::size_t at = text.find(old); !old.empty() && at != std::string_view::npos; at = text.find(old, at + old.size())) {
        ++count;
    }
    return count;
}

std::string replaced(std::string_view text, std::string_view old, std::string_view replacement) {
    if (old.empty()) return std::string(text);
    std::string out;
    std::size_t from = 0;
    for (std::size_t at = text.find(old); at != std::string_view::npos; at = text.find(old, from)) {
        out.append(text, from, at - from).append(replacement);
        from = at + old.size();
    }
    return out.append(text, from);
}

fs_result<std::size_t> file_tree::replace(std::string_view raw, std::string_view old, std::string_view replacement) {
    const std::string path = normal(raw);
    if (is_directory(path)) return failed<std::size_t>(fs_error::is_directory, path);
    const auto it = files_.find(path);
    if (it == files_.end()) return failed<std::size_t>(fs_error::not_found, path);
    const std::string& before = *it->second.content;
    const std::size_t count = occurrences(before, old);
    // count <= size / old.size() and both sizes are bounded by a request body: no overflow.
    const std::size_t after_size = before.size() - count * old.size() + count * replacement.size();
    if (after_size > max_file_size) return failed<std::size_t>(fs_error::too_large, path);
    if (after_size > before.size() && !fits(after_size - before.size())) return failed<std::size_t>(fs_error::no_space, path);
    std::string after = replaced(before, old, replacement);
    footprint_ = footprint_ - before.size() + after.size();
    it->second.content = std::make_shared<const std::string>(std::move(after));
    it->second.modified_at = wall_clock::now();
    return {count};
}

}  // namespace ngfail::opensandbox::testing::detail
