#!/usr/bin/env bash
# Runs every test program, the examples and the CLI demo, and scans everything they print
# for secrets: the API keys the tests and the demo use, OPEN-SANDBOX-API-KEY or
# Authorization header lines, and the client's request bodies.
# usage: secrets_scan.sh BUILD_DIR
set -uo pipefail
build=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

programs=()
while IFS= read -r -d '' p; do programs+=("$p"); done < <(find "$build/tests" "$build/examples" -maxdepth 1 -type f -perm -u+x \( -name '*_test' -o -name 'example_*' ! -name 'example_generate_rollouts' \) -print0)
[ ${#programs[@]} -gt 0 ] || { echo "secrets_scan: no test programs under $build"; exit 1; }
for p in "${programs[@]}"; do "$p" >"$out/$(basename "$p").log" 2>&1 || true; done
"$build/src/cli/ngfail" demo >"$out/demo.log" 2>&1 || true
"$build/src/cli/ngfail" demo --json >"$out/demo-json.log" 2>&1 || true

patterns=('sk-test-SECRET' 'sk-demo-0000' 'OPEN-SANDBOX-API-KEY:' 'Authorization:' '"resourceLimits"' '"background":false')
found=0
for pattern in "${patterns[@]}"; do
    if grep -lF -- "$pattern" "$out"/*.log; then
        echo "secrets_scan: '$pattern' appears in the output above"
        found=1
    fi
done
echo "secrets_scan: scanned the output of ${#programs[@]} test programs and the demo"
exit $found
