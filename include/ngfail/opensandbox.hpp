// <ngfail/opensandbox.hpp> — the OpenSandbox classifier (target ngfail::opensandbox) and client
// (ngfail::opensandbox_client). The embedded server, a test tool, is not here: include
// <ngfail/opensandbox/testing/embedded_server.hpp> and link ngfail::opensandbox_emulator.
#pragma once

#include <ngfail/opensandbox/classify.hpp>
#include <ngfail/opensandbox/client.hpp>

// For one release (#42), a program that links ngfail::opensandbox_emulator, whose target (and
// pkg-config file) defines NGFAIL_WITH_OPENSANDBOX_EMULATOR, still finds the embedded server
// through this header, as before; one that does not never sees it. Removed in the release after.
#ifdef NGFAIL_WITH_OPENSANDBOX_EMULATOR
#include <ngfail/opensandbox/testing/embedded_server.hpp>
#endif
