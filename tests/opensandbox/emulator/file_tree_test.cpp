// The emulator's in-memory file system, as execd's filesystem controller behaves on a pod.
#include "opensandbox/emulator/file_tree.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using ngfail::opensandbox::testing::detail::entry_info;
using ngfail::opensandbox::testing::detail::file_tree;
using ngfail::opensandbox::testing::detail::fs_error;

std::vector<std::string> paths_of(const std::vector<entry_info>& entries) {
    std::vector<std::string> out;
    for (const auto& e : entries) out.push_back(e.path);
    return out;
}

TEST(file_tree, paths_are_made_absolute_and_lexically_normal) {
    EXPECT_EQ(file_tree::normal("/a//b/./c/"), "/a/b/c");
    EXPECT_EQ(file_tree::normal("a/b"), "/a/b");
    EXPECT_EQ(file_tree::normal("/a/../../b"), "/b");
    EXPECT_EQ(file_tree::normal(""), "/");
    EXPECT_EQ(file_tree::normal("/.."), "/");
}

TEST(file_tree, a_file_is_written_with_its_parent_directories_and_read_back) {
    file_tree t;
    ASSERT_TRUE(t.put("/w/p/readme.md", "hi").value);
    ASSERT_TRUE(t.file("/w/p/readme.md"));
    EXPECT_EQ(*t.file("/w//p/readme.md")->content, "hi");
    const auto dir = t.info("/w/p");
    ASSERT_TRUE(dir.value);
    EXPECT_TRUE(dir.value->directory);
    EXPECT_EQ(dir.value->mode, 755);
    const auto file = t.info("/w/p/readme.md");
    ASSERT_TRUE(file.value);
    EXPECT_EQ(file.value->size, 2u);
    EXPECT_EQ(file.value->mode, 644);
    ASSERT_TRUE(t.put("/w/run.sh", "#!/bin/sh", 755).value);
    EXPECT_EQ(t.info("/w/run.sh").value->mode, 755) << "the mode the upload's metadata asks for";
}

TEST(file_tree, a_listing_is_lexical_by_name_with_descendants_after_their_parent) {
    file_tree t;
    ASSERT_TRUE(t.put("/p/b.txt", "").value);
    ASSERT_TRUE(t.put("/p/b/c.txt", "").value);
    ASSERT_TRUE(t.put("/p/a.txt", "").value);
    ASSERT_TRUE(t.put("/p-other/x", "").value);  // '-' sorts before '/': not under /p
    EXPECT_EQ(paths_of(*t.list("/p", 1).value), (std::vector<std::string>{"/p/a.txt", "/p/b", "/p/b.txt"}));
    EXPECT_EQ(paths_of(*t.list("/p", 2).value),
              (std::vector<std::string>{"/p/a.txt", "/p/b", "/p/b/c.txt", "/p/b.txt"}));
    EXPECT_TRUE(t.list("/p", 0).value->empty());
    EXPECT_EQ(t.list("/nope", 1).error, fs_error::not_found);
    EXPECT_EQ(t.list("/p/a.txt", 1).error, fs_error::not_directory);
    const auto root = paths_of(*t.list("/", 1).value);
    EXPECT_EQ(root, (std::vector<std::string>{"/home", "/p", "/p-other", "/root", "/tmp"})) << "the root is not its own child";
}

TEST(file_tree, deleting_files_skips_missing_ones_and_refuses_directories) {
    file_tree t;
    ASSERT_TRUE(t.put("/d/f", "x").value);
    EXPECT_TRUE(t.remove_files({"/d/f", "/d/missing"}).value);
    EXPECT_FALSE(t.file("/d/f"));
    const auto dir = t.remove_files({"/d"});
    EXPECT_FALSE(dir.value);
    EXPECT_EQ(dir.error, fs_error::is_directory);
    EXPECT_EQ(dir.path, "/d");
}

TEST(file_tree, directories_are_made_like_mkdir_p_and_removed_like_rm_rf) {
    file_tree t;
    ASSERT_TRUE(t.make_directories("/a/b/c", 700).value);
    EXPECT_EQ(t.info("/a/b/c").value->mode, 700);
    EXPECT_EQ(t.info("/a/b").value->mode, 755) << "parents get the default mode";
    ASSERT_TRUE(t.make_directories("/a/b/c", 711).value) << "an existing directory is no error";
    EXPECT_EQ(t.info("/a/b/c").value->mode, 700) << "and keeps its mode";
    ASSERT_TRUE(t.put("/a/b/c/f", "x").value);
    ASSERT_TRUE(t.put("/a/file", "x").value);
    EXPECT_EQ(t.make_directories("/a/file/sub", 755).error, fs_error::not_directory);
    EXPECT_EQ(t.put("/a/b", "x").error, fs_error::is_directory);
    t.remove_directories({"/a/b", "/never"});
    EXPECT_EQ(t.info("/a/b").error, fs_error::not_found);
    EXPECT_FALSE(t.file("/a/b/c/f"));
    EXPECT_TRUE(t.file("/a/file"));
}

TEST(file_tree, a_move_takes_a_file_or_a_whole_directory_and_makes_the_destinations_parents) {
    file_tree t;
    ASSERT_TRUE(t.put("/a/f.txt", "1").value);
    ASSERT_TRUE(t.put("/a/b/g.txt", "2").value);
    ASSERT_TRUE(t.put("/a-side", "3").value);
    ASSERT_TRUE(t.move("/a/f.txt", "/x/y/f2.txt").value);
    EXPECT_FALSE(t.file("/a/f.txt"));
    EXPECT_EQ(*t.file("/x/y/f2.txt")->content, "1");
    ASSERT_TRUE(t.move("/a", "/moved").value);
    EXPECT_EQ(*t.file("/moved/b/g.txt")->content, "2");
    EXPECT_TRUE(t.info("/moved/b").value->directory);
    EXPECT_FALSE(t.info("/a").value);
    EXPECT_TRUE(t.file("/a-side")) << "a sibling sharing the prefix stays";
}

TEST(file_tree, a_move_refuses_a_missing_source_a_taken_destination_and_a_move_into_itself) {
    file_tree t;
    ASSERT_TRUE(t.put("/d/f", "1").value);
    ASSERT_TRUE(t.put("/e", "2").value);
    EXPECT_EQ(t.move("/nope", "/z").error, fs_error::not_found);
    EXPECT_EQ(t.move("/d/f", "/e").error, fs_error::exists);
    EXPECT_EQ(t.move("/d", "/d/inner").error, fs_error::into_itself);
    EXPECT_EQ(t.move("/d/f", "/e/under").error, fs_error::not_directory) << "its parent is a file";
    EXPECT_EQ(*t.file("/d/f")->content, "1") << "nothing moved";
}

TEST(file_tree, permissions_change_mode_owner_and_group_and_only_what_is_given) {
    file_tree t;
    ASSERT_TRUE(t.put("/s.sh", "x").value);
    ASSERT_TRUE(t.set_permissions("/s.sh", 700, "app", "").value);
    auto info = *t.info("/s.sh").value;
    EXPECT_EQ(info.mode, 700);
    EXPECT_EQ(info.owner, "app");
    EXPECT_EQ(info.group, "root") << "an empty group stays";
    ASSERT_TRUE(t.set_permissions("/tmp", 0, "", "staff").value);
    EXPECT_EQ(t.info("/tmp").value->mode, 777) << "mode 0 leaves it";
    EXPECT_EQ(t.info("/tmp").value->group, "staff");
    EXPECT_EQ(t.set_permissions("/nope", 644, "", "").error, fs_error::not_found);
}

TEST(file_tree, a_replacement_replaces_every_occurrence_and_counts_them) {
    file_tree t;
    ASSERT_TRUE(t.put("/c.yaml", "host: localhost\nport: localhost:80\n", 600).value);
    const auto n = t.replace("/c.yaml", "localhost", "0.0.0.0");
    ASSERT_TRUE(n.value);
    EXPECT_EQ(*n.value, 2u);
    EXPECT_EQ(*t.file("/c.yaml")->content, "host: 0.0.0.0\nport: 0.0.0.0:80\n");
    EXPECT_EQ(t.info("/c.yaml").value->mode, 600) << "the mode is kept";
    EXPECT_EQ(*t.replace("/c.yaml", "absent", "x").value, 0u);
    EXPECT_EQ(t.replace("/tmp", "a", "b").error, fs_error::is_directory);
    EXPECT_EQ(t.replace("/nope", "a", "b").error, fs_error::not_found);
}

TEST(file_tree, a_replacement_that_would_outgrow_the_largest_file_is_refused_and_changes_nothing) {
    file_tree t;
    ASSERT_TRUE(t.put("/a", std::string(1 << 20, 'a')).value);
    const std::string huge(100, 'x');  // a million occurrences times 100 bytes: 100 MiB
    EXPECT_EQ(t.replace("/a", "a", huge).error, fs_error::too_large);
    EXPECT_EQ(t.file("/a")->content->size(), 1u << 20);
    EXPECT_EQ(*t.replace("/a", "a", std::string(60, 'y')).value, 1u << 20) << "60 MiB still fits";
}

// The footprint follows every change and comes back to where it started; the room bounds it.
TEST(file_tree, the_footprint_follows_every_change_and_returns_when_they_are_undone) {
    file_tree t;
    const std::size_t empty = t.footprint();
    ASSERT_TRUE(t.put("/w/a/f.txt", std::string(1000, 'x')).value);
    const std::size_t one = t.footprint();
    EXPECT_GE(one, empty + 1000 + 3 * std::string("/w").size()) << "the file and its two new directories";
    ASSERT_TRUE(t.put("/w/a/f.txt", std::string(10, 'x')).value);
    EXPECT_EQ(t.footprint(), one - 990) << "a rewrite counts the new size only";
    ASSERT_TRUE(t.replace("/w/a/f.txt", "x", "yy").value);
    EXPECT_EQ(t.footprint(), one - 980);
    ASSERT_TRUE(t.move("/w/a", "/w/bbbb").value);
    EXPECT_EQ(t.footprint(), one - 980 + 2 * 3) << "two entries' paths, three bytes longer each";
    ASSERT_TRUE(t.make_directories("/w/d/e", 755).value);
    t.remove_directories({"/w"});
    EXPECT_EQ(t.footprint(), empty);
}

TEST(file_tree, a_write_past_the_room_fails_as_on_a_full_disk_and_changes_nothing) {
    file_tree t;
    t.set_room(t.footprint() + 4096);
    const auto big = t.put("/w/big", std::string(8192, 'x'));
    ASSERT_FALSE(big.value);
    EXPECT_EQ(big.error, fs_error::no_space);
    EXPECT_FALSE(t.file("/w/big"));
    EXPECT_FALSE(t.info("/w").value) << "not even its directory was made";
    ASSERT_TRUE(t.put("/w/small", std::string(2048, 'x')).value);
    EXPECT_EQ(t.replace("/w/small", "x", "xx").error, fs_error::no_space);
    EXPECT_EQ(t.file("/w/small")->content->size(), 2048u);
    ASSERT_TRUE(t.remove_files({"/w/small"}).value);
    EXPECT_TRUE(t.put("/w/again", std::string(2048, 'x')).value) << "a removal gives its room back";
}

TEST(file_tree, owner_and_group_names_count_in_the_footprint_and_the_room) {
    file_tree t;
    ASSERT_TRUE(t.put("/f", "x").value);
    const std::size_t before = t.footprint();
    ASSERT_TRUE(t.set_permissions("/f", 0, std::string(32, 'o'), std::string(32, 'g')).value);
    EXPECT_EQ(t.footprint(), before + 2 * (32 - 4)) << "both names, past root's four bytes";
    ASSERT_TRUE(t.set_permissions("/f", 0, "app", "").value);
    EXPECT_EQ(t.footprint(), before + (3 - 4) + (32 - 4));
    t.set_room(t.footprint());
    const auto full = t.set_permissions("/tmp", 0, std::string(32, 'o'), "");
    EXPECT_EQ(full.error, fs_error::no_space);
    EXPECT_EQ(t.info("/tmp").value->owner, "root") << "nothing changed";
    ASSERT_TRUE(t.remove_files({"/f"}).value);
    ASSERT_TRUE(t.set_permissions("/tmp", 0, std::string(32, 'o'), "").value) << "a removal gives the names' room back";
}

// Linux's bounds (PATH_MAX 4096 with its NUL, NAME_MAX 255) on every path that makes
// something, checked before any work that grows with the path.
TEST(file_tree, a_path_past_4095_bytes_or_a_name_past_255_is_too_long) {
    file_tree t;
    std::string deepest;
    while (deepest.size() < 4095) deepest += "/a";
    deepest.resize(4095);
    ASSERT_TRUE(t.make_directories(deepest, 755).value);
    EXPECT_TRUE(t.info(deepest).value);
    EXPECT_EQ(t.make_directories(deepest + "/b", 755).error, fs_error::name_too_long);
    const std::string long_name = "/w/" + std::string(256, 'n');
    EXPECT_EQ(t.make_directories(long_name, 755).error, fs_error::name_too_long);
    EXPECT_EQ(t.put(long_name + "/f", "x").error, fs_error::name_too_long);
    ASSERT_TRUE(t.put("/w/f", "x").value);
    EXPECT_EQ(t.move("/w/f", long_name).error, fs_error::name_too_long);
    EXPECT_TRUE(t.put("/w/" + std::string(255, 'n'), "x").value) << "255 bytes are a name";
    EXPECT_TRUE(t.file("/w/f")) << "nothing moved";
}

}  // namespace
