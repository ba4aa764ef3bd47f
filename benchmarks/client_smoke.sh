#!/usr/bin/env bash
# Runs client_benchmark once, tiny, against an `ngfail serve` of its own: it must finish with
# every exec a success or the injected fault (exit 0) and print its results.
# Usage: client_smoke.sh NGFAIL_CLI CLIENT_BENCHMARK
set -euo pipefail
exec 3< <(OPEN_SANDBOX_API_KEY=sk-smoke "$1" serve)
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
read -r first <&3
address=${first#listening on http://}
out=$("$2" "$address" sk-smoke 40 8)
grep -q '"client_faults_unaccounted","run_name":"client_faults_unaccounted","real_time":0' <<<"$out"
echo "$out"
