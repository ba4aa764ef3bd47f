// <ngfail/ngfail.hpp> — every public header of ngfail::core.
#pragma once

#include <ngfail/details.hpp>
#include <ngfail/event.hpp>
#include <ngfail/event_id.hpp>
#include <ngfail/failure.hpp>
#include <ngfail/kind.hpp>
#include <ngfail/kind_extension.hpp>
#include <ngfail/result.hpp>
#include <ngfail/sandbox.hpp>
#include <ngfail/visit_event.hpp>
