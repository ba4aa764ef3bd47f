// Every ngfail header needs C++20 (std::span, designated initialisers, concepts); said here
// first, rather than by an error deep in a header. With g++ 12, whose default is C++17,
// pass -std=c++20 (the CMake targets and the pkg-config files do).
#pragma once

#if __cplusplus < 202002L
#error "ngfail needs C++20: compile with -std=c++20 (or link an ngfail:: CMake target, which asks for it)"
#endif
