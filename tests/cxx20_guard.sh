#!/usr/bin/env bash
# Below C++20 every public header stops at once with a message that says so (and not with
# an error deep in a header); at C++20 the same includes compile.
# usage: cxx20_guard.sh CXX INCLUDE_DIR
set -euo pipefail
cxx=$1 include=$2
failed=0
while IFS= read -r header; do
    name=${header#"$include"/}
    out=$(printf '#include <%s>\n' "$name" | "$cxx" -std=c++17 -Wfatal-errors -fsyntax-only -x c++ -I "$include" - 2>&1 || true)
    first_error=$(grep -m1 'error:' <<<"$out" || true)
    if [[ $first_error != *"ngfail needs C++20"* ]]; then
        echo "$name under C++17: the first error is not the guard's: ${first_error:-none}" >&2
        failed=1
    fi
done < <(find "$include/ngfail" -name '*.hpp' | sort)
printf '#include <ngfail/ngfail.hpp>\n' | "$cxx" -std=c++20 -fsyntax-only -x c++ -I "$include" - || failed=1
[ $failed -eq 0 ] && echo "every header asks for C++20 first"
exit $failed
