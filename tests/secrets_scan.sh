#!/usr/bin/env bash
# Scans what the suite printed (every test, example and CLI run, as ctest kept it in
# Testing/Temporary/LastTest.log) and the CLI demo's output for secrets: the API keys the
# tests and the demo use, OPEN-SANDBOX-API-KEY or Authorization header lines, and the
# client's request bodies. Run after ctest (scripts/test does).
# usage: secrets_scan.sh BUILD_DIR
set -uo pipefail
build=$1
log="$build/Testing/Temporary/LastTest.log"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

[ -f "$log" ] || { echo "secrets_scan: no test log at $log: run ctest first" >&2; exit 1; }
# GoogleTest's line for each passed test: one per ctest entry, or many when a suite is one
# entry (as under the sanitizers).
passed=$(grep -c '^\[       OK \] ' "$log" || true)
[ "$passed" -ge 100 ] || { echo "secrets_scan: $log holds only $passed passed tests: run the whole suite first" >&2; exit 1; }
cp "$log" "$out/suite.log"
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
echo "secrets_scan: scanned the output of $passed passed tests and the demo"
exit $found
