// <ngfail/opensandbox/file_types.hpp> — files and directories as execd's filesystem API has
// them: an entry, a move, permissions, a replacement (target ngfail::opensandbox_client).
#pragma once

#include <ngfail/detail/cplusplus.hpp>

#include <cstdint>
#include <string>

namespace ngfail::opensandbox {

// A file or directory as execd describes it (its FileInfo).
struct entry_info {
    std::string path{};
    std::string type{};  // file, directory, symlink, other
    std::int64_t size = 0;
    std::int64_t mode = 0;  // octal digits read as decimal, as execd writes them: 755
    std::string owner{};
    std::string group{};
    std::string modified_at{};  // RFC 3339
    std::string created_at{};
};

// One move of `move_files`: a file or directory to a path that does not exist yet (its
// parent directories are made).
struct file_move {
    std::string src{};
    std::string dest{};
};

// What `set_permissions` sets on a path: the mode unless 0, the owner and group unless empty.
struct file_permissions {
    int mode = 755;  // octal digits as a decimal number: 644
    std::string owner{};
    std::string group{};
};

// What `replace_contents` does to a file: every `old_text` (never empty) becomes `new_text`.
struct content_replacement {
    std::string old_text{};
    std::string new_text{};
};

}  // namespace ngfail::opensandbox
