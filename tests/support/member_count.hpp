// How many members an aggregate has: the compile-time check that two structs (or a struct
// and its table of rows) name the same fields. The library's own tables check themselves
// with the same count (<ngfail/detail/member_count.hpp>); tests take it from here.
#pragma once

#include <ngfail/detail/member_count.hpp>

namespace ngfail_test {

using ngfail::detail::member_count;

}  // namespace ngfail_test
