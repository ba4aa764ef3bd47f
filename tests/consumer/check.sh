#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds and runs the consumer against it,
# once through find_package(ngfail) and once through pkg-config.
# usage: check.sh BUILD_DIR WORK_DIR CXX [CXX_FLAGS]
set -euo pipefail
build=$1 work=$2 cxx=$3 flags=${4:-}
here=$(cd "$(dirname "$0")" && pwd)

rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null

# LLVM's lld where there is one, as ngfail's own programs link: GNU ld took ten seconds for
# each program that links the client (what is checked is the package, not the linker).
link_flags=
if command -v ld.lld >/dev/null; then link_flags=-fuse-ld=lld; fi
cmake -S "$here" -B "$work/cmake-build" -G Ninja \
    -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$link_flags" \
    -DCMAKE_BUILD_TYPE= >/dev/null  # no -g: nothing here reads it
cmake --build "$work/cmake-build" >/dev/null
"$work/cmake-build/consumer"
for program in wire_only http_only classifier_only client_only emulator_only policy_only umbrella_only; do
    "$work/cmake-build/consumer_$program"
done
"$work/cmake-build/consumer_all"
if [ -x "$work/cmake-build/consumer_otel_only" ]; then "$work/cmake-build/consumer_otel_only"; fi
# A program that links only the client, or the umbrella target, holds nothing of the emulator
# (ngfail::opensandbox::testing, and its names before #42); consumer_all, which links it, shows
# that the check sees the emulator where it is.
emulator_symbols() {
    nm -C "$1" | grep -E 'opensandbox::(testing|emulator)::|opensandbox::(embedded_server|server_options|fault)\b'
}
no_emulator() {
    if emulator_symbols "$1"; then
        echo "$1 links emulator symbols (above)" >&2
        exit 1
    fi
}
if ! emulator_symbols "$work/cmake-build/consumer_all" >/dev/null; then
    echo "no emulator symbols found in consumer_all: the check looks for the wrong names" >&2
    exit 1
fi
no_emulator "$work/cmake-build/consumer_client_only"
no_emulator "$work/cmake-build/consumer_umbrella_only"

# Nor does the client alone link yaml-cpp, which only policy files need.
if grep -A3 'build consumer_client_only' "$work/cmake-build/build.ninja" | grep -i yaml; then
    echo "the client alone links yaml-cpp (above)" >&2
    exit 1
fi

pc_dir=$(dirname "$(find "$work/prefix" -name ngfail.pc -print -quit)")
pc() { PKG_CONFIG_PATH="$pc_dir" pkg-config "$@"; }
# Through pkg-config, with no -std of our own: the .pc files carry C++20. Each library alone
# links only what it needs (no OpenSSL below the client). A program is checked in two halves:
# its source compiles with the .pc's --cflags alone (-fsyntax-only: what the flags decide),
# and the object CMake built from that same source links with its --libs alone; compiling
# each source a second time, code and all, was two minutes of the suite.
objects="$work/cmake-build/CMakeFiles"
# usage: through_pkg_config SOURCE CMAKE_TARGET OUTPUT MODULE...
through_pkg_config() {
    local source=$1 target=$2 out=$3
    shift 3
    # shellcheck disable=SC2046 # pkg-config's output is a list of flags
    "$cxx" $flags -fsyntax-only "$here/$source" $(pc --cflags "$@")
    # shellcheck disable=SC2046
    "$cxx" $flags $link_flags "$objects/$target.dir/$source.o" -o "$work/$out" $(pc --libs --static "$@")
    "$work/$out"
}
through_pkg_config main.cpp consumer pkg-config-consumer ngfail-core
through_pkg_config http_only.cpp consumer_http_only pkg-config-http ngfail-http
if pc --libs --static ngfail-http | grep -q -- -lssl; then
    echo "ngfail-http asks for OpenSSL: $(pc --libs --static ngfail-http)" >&2
    exit 1
fi
# The client through pkg-config: no yaml-cpp; the policy alone: yaml-cpp, no OpenSSL.
if pc --libs --static ngfail-opensandbox-client | grep -q -- -lyaml; then
    echo "ngfail-opensandbox-client asks for yaml-cpp: $(pc --libs --static ngfail-opensandbox-client)" >&2
    exit 1
fi
through_pkg_config client_only.cpp consumer_client_only pkg-config-client ngfail-opensandbox-client
through_pkg_config policy_only.cpp consumer_policy_only pkg-config-policy ngfail-policy
if [ -x "$work/cmake-build/consumer_otel_only" ]; then
    through_pkg_config otel_only.cpp consumer_otel_only pkg-config-otel ngfail-otel
fi
# ngfail.pc is the umbrella without the emulator: neither its flag nor its library.
if pc --cflags --libs --static ngfail | grep -qE -- '-lngfail_opensandbox_emulator|-DNGFAIL_WITH_OPENSANDBOX_EMULATOR'; then
    echo "ngfail.pc brings the emulator: $(pc --cflags --libs --static ngfail)" >&2
    exit 1
fi
through_pkg_config umbrella_only.cpp consumer_umbrella_only pkg-config-umbrella ngfail
no_emulator "$work/pkg-config-umbrella"
through_pkg_config all.cpp consumer_all pkg-config-all ngfail ngfail-opensandbox-emulator
