// <ngfail/opensandbox.hpp> — the OpenSandbox classifier, client and embedded server.
#pragma once

#include <ngfail/opensandbox/classify.hpp>
#include <ngfail/opensandbox/client.hpp>
#include <ngfail/opensandbox/embedded_server.hpp>
