#!/usr/bin/env bash
# The README's `ngfail serve` lines, run as written: the serve command (its fault included),
# then its curl block against the port serve printed, each line checked against what its
# comment claims (202 and a sandbox; the fault queued; the next get answering 503).
# usage: readme_shell.sh README.md NGFAIL
set -euo pipefail
readme=$1 ngfail=$2
work=$(mktemp -d)
trap 'kill "$serve_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

# The serve line, as the README shows it after "$ ".
serve_line=$(grep -m1 '^\$ ngfail serve ' "$readme" | sed 's/^\$ ngfail //')
eval "set -- $serve_line"
"$ngfail" "$@" > "$work/serve.out" 2> "$work/serve.err" &
serve_pid=$!
for _ in $(seq 100); do grep -q '^listening on' "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's|^listening on http://127.0.0.1:\([0-9]*\)$|\1|p' "$work/serve.out")
[ -n "$port" ] || { echo "readme_shell: serve printed no 'listening on' line: $(cat "$work/serve.out" "$work/serve.err")" >&2; exit 1; }
grep -q '^direct endpoints on http://127.0.0.1:' "$work/serve.out" || { echo "readme_shell: no direct endpoints line" >&2; exit 1; }
grep -q 'fault queued: {"operation":"exec","action":"oom_kill"' "$work/serve.err" || { echo "readme_shell: the fault was not echoed" >&2; exit 1; }

# The curl block: the sh block that adds a fault; lines joined at their backslashes.
awk '/^```sh$/ { on = 1; block = ""; next } /^```$/ { if (on && block ~ /_ngfail\/faults/) printf "%s", block; on = 0; next }
     on { block = block $0 "\n" }' "$readme" | sed -e ':a' -e '/\\$/N; s/\\\n//; ta' > "$work/curl.lines"
[ "$(wc -l < "$work/curl.lines")" -eq 2 ] || { echo "readme_shell: expected two curl commands" >&2; cat "$work/curl.lines" >&2; exit 1; }
run() {  # the README's line on our port, with the status code after the body
    local line=${1//40121/$port}
    eval "${line%%#*} -w ' %{http_code}'"
}
created=$(run "$(sed -n 1p "$work/curl.lines")")
[[ $created == *'"id"'*' 202' ]] || { echo "readme_shell: line 1 claims 202 and a sandbox, got: $created" >&2; exit 1; }
id=$(sed 's/.*"id":"\([^"]*\)".*/\1/' <<<"$created")
queued=$(run "$(sed -n 2p "$work/curl.lines")")
[[ $queued == *' 201' ]] || { echo "readme_shell: line 2 should queue the fault, got: $queued" >&2; exit 1; }
next=$(curl -s -o /dev/null -w '%{http_code}' -H 'OPEN-SANDBOX-API-KEY: sk-local' "http://127.0.0.1:$port/v1/sandboxes/$id")
[ "$next" = 503 ] || { echo "readme_shell: the next get should answer 503, got $next" >&2; exit 1; }
echo "readme_shell: the serve line and its two curl lines do what the README says"
