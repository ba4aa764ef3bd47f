// The client's value types stand on their own: a program that only reads an `exec_result`
// or builds a `command` includes its area's header, which pulls in no Asio (and no
// coroutine machinery), and the defaults are the official SDKs'.
#include <ngfail/opensandbox/code_types.hpp>
#include <ngfail/opensandbox/command_types.hpp>
#include <ngfail/opensandbox/file_types.hpp>
#include <ngfail/opensandbox/metrics_types.hpp>
#include <ngfail/opensandbox/sandbox_types.hpp>
#include <ngfail/opensandbox/snapshot_types.hpp>
#include <ngfail/opensandbox/terminal_types.hpp>

#if defined(BOOST_ASIO_VERSION)
#error "a value type's header includes Asio"
#endif

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace ngfail::opensandbox;

TEST(value_types, have_the_official_sdks_defaults_without_the_client) {
    const create_request create{};
    EXPECT_EQ(create.image, "python:3.11");
    EXPECT_EQ(create.entrypoint, (std::vector<std::string>{"tail", "-f", "/dev/null"}));
    EXPECT_EQ(create.resource_limits.at("memory"), "512Mi");
    EXPECT_EQ(list_request{}.page_size, 20);
    EXPECT_EQ(file_permissions{}.mode, 755);
    const exec_result done{.exit_code = 0, .stdout_text = "ok\n"};
    EXPECT_EQ(done.stdout_text, "ok\n");
    EXPECT_EQ(command_ref(command{.command = "make"}).copy().command, "make");
}

}  // namespace
