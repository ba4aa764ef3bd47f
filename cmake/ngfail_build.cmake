# Compiler settings for ngfail's own targets (never exported to consumers).
function(ngfail_target_defaults target)
    target_compile_features(${target} PUBLIC cxx_std_20)
    set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
    if(NGFAIL_WERROR)
        target_compile_options(${target} PRIVATE -Werror)
    endif()
    # g++ collects its heap's garbage whenever the heap has grown by 30% (past at most 128 MiB);
    # the Asio/Beast units grow it past 1.5 GiB. Collecting from 512 MiB, at each doubling,
    # measured a tenth less compile time (39.6 s -> 35.5 s for the client's largest unit) for
    # ~250 MB more peak memory per compiler.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        target_compile_options(${target} PRIVATE --param=ggc-min-expand=100 --param=ggc-min-heapsize=524288)
    endif()
endfunction()

# A library target `ngfail_<name>`, exported as `ngfail::<name>`.
function(ngfail_add_library name)
    add_library(ngfail_${name} ${ARGN})
    add_library(ngfail::${name} ALIAS ngfail_${name})
    set_target_properties(ngfail_${name} PROPERTIES EXPORT_NAME ${name})
    target_include_directories(ngfail_${name} PUBLIC
        $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
        $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    target_include_directories(ngfail_${name} PRIVATE ${PROJECT_SOURCE_DIR}/src)
    ngfail_target_defaults(ngfail_${name})
    set_property(GLOBAL APPEND PROPERTY NGFAIL_LIBRARIES ngfail_${name})
endfunction()

# Compiles a library's sources a few at a time as one translation unit (CMake's unity
# build). For the Beast-based parts this halves their compile time: each of their sources
# spends ~7 of its ~9 seconds reading Asio, Beast and OpenSSL's headers. Their files' private
# helpers therefore need distinct names. g++'s -Wsubobject-linkage then takes each source
# for a header (it is #included) and flags its internal lambdas; it is off for these targets.
function(ngfail_compile_together target)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
    endif()
endfunction()

# LLVM's lld links ngfail's programs (test executables of 100-200 MB of debug information)
# about six times faster than GNU ld: minutes of every CI run. Only when ngfail is the
# project being built, and only when lld is there; any other linker still works.
if(PROJECT_IS_TOP_LEVEL)
    include(CheckLinkerFlag)
    check_linker_flag(CXX -fuse-ld=lld NGFAIL_LINKER_LLD)
    if(NGFAIL_LINKER_LLD)
        add_link_options(-fuse-ld=lld)
    endif()
endif()

# A program of ngfail's own (test, benchmark, fuzz target, example): built with the
# project's settings, able to reach the private headers under src/, linked with LIBRARIES.
function(ngfail_add_program target)
    cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;LIBRARIES")
    add_executable(${target} ${arg_SOURCES})
    ngfail_target_defaults(${target})
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(${target} PRIVATE ${arg_LIBRARIES})
endfunction()

# A target whose sources run Asio coroutines. g++ 12 at -O2 mistakes Asio's coroutine frame
# allocator (aligned new, sized delete) for a mismatched pair: the frames are Asio's own.
function(ngfail_uses_asio_coroutines target)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        target_compile_options(${target} PRIVATE -Wno-mismatched-new-delete)
    endif()
endfunction()
