// <ngfail/transport.hpp> — reports across HTTP: the header (<ngfail/failure_header.hpp>),
// the per-request log (<ngfail/request_failure_log.hpp>) and reports at the end of
// server-sent-event streams (<ngfail/sse_report_reader.hpp>). Split, one concept a header;
// this path keeps including all three.
#pragma once

#include <ngfail/failure_header.hpp>
#include <ngfail/request_failure_log.hpp>
#include <ngfail/sse_report_reader.hpp>
