#!/usr/bin/env bash
# Runs client_benchmark once, tiny, against an `ngfail serve` of its own: it must finish with
# every exec a success or the injected fault (exit 0) and print its results. It runs with a
# stand-in peer (benchmarks/run's is the Go SDK's program), which must be asked for one block
# after each of the client's ten and whose results must join the client's.
# Usage: client_smoke.sh NGFAIL_CLI CLIENT_BENCHMARK
set -euo pipefail
peer=$(mktemp)
exec 3< <(OPEN_SANDBOX_API_KEY=sk-smoke "$1" serve)
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true; rm -f "$peer"' EXIT
read -r first <&3
address=${first#listening on http://}
cat > "$peer" <<'PEER'
#!/usr/bin/env bash
echo ready
blocks=0
while read -r line; do
    [ "$line" = block ] || exit 1
    blocks=$((blocks + 1))
    echo done
done
printf '{"benchmarks":[{"name":"peer_blocks","run_name":"peer_blocks","real_time":%d,"time_unit":"ns"}]}\n' "$blocks"
PEER
chmod +x "$peer"
out=$(NGFAIL_PEER_BENCHMARK=$peer "$2" "$address" sk-smoke 40 8)
grep -q '"client_faults_unaccounted","run_name":"client_faults_unaccounted","real_time":0' <<<"$out"
grep -q '"name":"peer_blocks","run_name":"peer_blocks","real_time":10,' <<<"$out"
echo "$out"
