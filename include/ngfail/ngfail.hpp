// <ngfail/ngfail.hpp> — every public header but the test tools' (link ngfail::ngfail). For
// the core alone, include the module headers you use and link ngfail::core; for the embedded
// OpenSandbox, <ngfail/opensandbox/testing/embedded_server.hpp> and ngfail::opensandbox_emulator.
#pragma once

#include <ngfail/details.hpp>
#include <ngfail/event.hpp>
#include <ngfail/event_id.hpp>
#include <ngfail/failure_header.hpp>
#include <ngfail/failure.hpp>
#include <ngfail/http.hpp>
#include <ngfail/json.hpp>
#include <ngfail/kind.hpp>
#include <ngfail/kind_extension.hpp>
#include <ngfail/limits.hpp>
#include <ngfail/one_line.hpp>
#include <ngfail/opensandbox.hpp>
#include <ngfail/replay.hpp>
#include <ngfail/report.hpp>
#include <ngfail/report_tree.hpp>
#include <ngfail/request_failure_log.hpp>
#include <ngfail/result.hpp>
#include <ngfail/sandbox.hpp>
#include <ngfail/sse_report_reader.hpp>
#include <ngfail/transport.hpp>
#include <ngfail/visit_event.hpp>
