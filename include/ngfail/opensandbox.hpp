// <ngfail/opensandbox.hpp> — the OpenSandbox classifier (target ngfail::opensandbox), client
// (ngfail::opensandbox_client) and embedded server (ngfail::opensandbox_emulator, a test
// tool: declared here so that code written against this header keeps compiling; a program
// that uses it links that target, and one that does not contains none of it).
#pragma once

#include <ngfail/opensandbox/classify.hpp>
#include <ngfail/opensandbox/client.hpp>
#include <ngfail/opensandbox/testing/embedded_server.hpp>
