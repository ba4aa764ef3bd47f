#!/usr/bin/env bash
# The README's C++ blocks are the regions of examples/readme.cpp between "// README: NAME"
# and "// README end", in order and verbatim, so every snippet a user copies is code that
# compiles and runs (the example_readme test runs it).
# usage: readme_snippets.sh README.md examples/readme.cpp
set -euo pipefail
readme=$1 source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

awk -v dir="$work" '/^```cpp$/ { n++; on = 1; next } /^```$/ { on = 0 } on { print > (dir "/readme." n) }' "$readme"
awk -v dir="$work" '/^\/\/ README end$/ { on = 0 } on { print > (dir "/source." n) } /^\/\/ README: / { n++; on = 1 }' "$source"

blocks=$(find "$work" -name 'readme.*' | wc -l)
regions=$(find "$work" -name 'source.*' | wc -l)
if [ "$blocks" -ne "$regions" ]; then
    echo "readme_snippets: $readme has $blocks C++ blocks, $source has $regions regions" >&2
    exit 1
fi
failed=0
for ((i = 1; i <= blocks; i++)); do
    if ! diff -u "$work/source.$i" "$work/readme.$i" > "$work/diff"; then
        echo "readme_snippets: C++ block $i of $readme differs from region $i of $source:" >&2
        cat "$work/diff" >&2
        failed=1
    fi
done
[ $failed -eq 0 ] && echo "readme_snippets: $blocks C++ blocks, each a compiled region of $source"
exit $failed
