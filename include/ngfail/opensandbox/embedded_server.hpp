// <ngfail/opensandbox/embedded_server.hpp> — moved: the emulator is a test tool with a
// target of its own (ngfail::opensandbox_emulator) and names in ngfail::opensandbox::testing.
// Include <ngfail/opensandbox/testing/embedded_server.hpp>; this path keeps old code compiling.
#pragma once

#include <ngfail/opensandbox/testing/embedded_server.hpp>
