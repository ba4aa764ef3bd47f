// Whether this translation unit is built under AddressSanitizer or ThreadSanitizer (g++
// says so with a macro, clang through __has_feature): their runtimes keep state of their
// own that some code must not bypass and some measurements must not count.
#pragma once

namespace ngfail::detail {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool sanitized = true;
#else
inline constexpr bool sanitized = false;
#endif
#else
inline constexpr bool sanitized = false;
#endif

}  // namespace ngfail::detail
