#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in tests/conformance/package-lock.json with the Node.js 22 it needs)
# against pipewright, with no expected-failures list: every scenario below
# must pass.
#
#   npm ci --prefix tests/conformance && cargo build && tests/conformance/run.sh
#
# - Client scenarios: the suite starts a test server per scenario and runs
#   tests/conformance/client.sh, which drives pipewright as a user would.
#   Run: every scenario of spec versions 2025-03-26 .. 2025-11-25, and the
#   two client-credentials extensions (not `draft`, not cross-app access).
# - Server scenarios: against `pipewright serve --http` serving an example
#   pipeline; the ones that test the protocol rather than the suite's own
#   test tools, prompts and resources.
#
# Prints one line per scenario and a summary; exits 1 when any failed.
# PIPEWRIGHT_BIN: the binary (default target/debug/pipewright; nothing is
# built here). CONFORMANCE_JOBS: client scenarios run at once (default 3).
# CONFORMANCE_OUT: where results go (default target/conformance).
# Arguments, if any: only the scenarios named.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${PIPEWRIGHT_BIN:-$root/target/debug/pipewright}"
node="$here/node_modules/.bin/node"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
out="${CONFORMANCE_OUT:-$root/target/conformance}"
jobs="${CONFORMANCE_JOBS:-3}"

[ -x "$bin" ] || { echo "run.sh: no pipewright binary at $bin (cargo build first, or set PIPEWRIGHT_BIN)" >&2; exit 2; }
[ -f "$suite" ] || { echo "run.sh: the suite is not installed: npm ci --prefix tests/conformance" >&2; exit 2; }
case "$("$node" --version 2>/dev/null)" in
  v22.*) ;;
  *) echo "run.sh: $node is not Node.js 22 (npm ci --prefix tests/conformance; the \`node\` package's install script must run)" >&2; exit 2 ;;
esac
for tool in python3 curl timeout; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is needed (client.sh and the report use it)" >&2; exit 2; }
done
export PIPEWRIGHT_BIN="$bin"

# The server scenarios that apply to `pipewright serve --http`. The rest
# call the suite's own fixtures (test_simple_text, prompts/get, resources/
# read …), which a pipeline server does not have.
server_scenarios=(
  server-initialize
  ping
  tools-list
  logging-set-level
  server-sse-multiple-streams
  server-sse-polling
  dns-rebinding-protection
)

# The client scenarios, read from the suite's own list (`name [versions]`).
client_scenarios=()
while read -r name; do
  client_scenarios+=("$name")
done < <("$node" "$suite" list | awk '
  /^Client scenarios/ { client = 1; next }
  /^[A-Z]/ { client = 0 }
  client && /^ *- / {
    name = $2
    if (name ~ /cross-app-access/) next
    if ($0 ~ /2025-03-26|2025-06-18|2025-11-25/ ||
        name == "auth/client-credentials-basic" ||
        name == "auth/client-credentials-jwt") print name
  }')
# A failed or changed `list` must not turn into a green run of nothing.
if [ "${#client_scenarios[@]}" -lt 20 ]; then
  echo "run.sh: the suite listed ${#client_scenarios[@]} client scenarios (expected 22); is its \`list\` output still the same?" >&2
  exit 2
fi

if [ $# -gt 0 ]; then
  wanted=" $* "
  keep() { local k=() s; for s in "$@"; do [[ "$wanted" == *" $s "* ]] && k+=("$s"); done; printf '%s\n' "${k[@]}"; }
  mapfile -t client_scenarios < <(keep "${client_scenarios[@]}")
  mapfile -t server_scenarios < <(keep "${server_scenarios[@]}")
  [ -n "${client_scenarios[*]}${server_scenarios[*]}" ] || { echo "run.sh: no such scenario: $*" >&2; exit 2; }
fi

rm -rf "$out"
mkdir -p "$out/lines"
work="$(mktemp -d "${TMPDIR:-/tmp}/pw-conformance-run.XXXXXX")"
serve_pid=""
cleanup() {
  # Scenarios still running (after Ctrl-C or an error) go too.
  local running
  running="$(jobs -p)"
  [ -z "$running" ] || kill $running 2>/dev/null || true
  if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# One line for a finished scenario: PASS/FAIL, kind, name, checks passed,
# and the failed checks' messages indented below. $1 kind, $2 name,
# $3 runner exit code, $4 results dir, $5 runner log.
verdict() {
  python3 - "$@" <<'EOF'
import glob, json, os, sys
kind, name, rc, res, log = sys.argv[1:6]
files = glob.glob(os.path.join(res, "**", "checks.json"), recursive=True)
checks = []
for f in files:
    try:
        checks += json.load(open(f))
    except (OSError, ValueError):
        pass
counted = [c for c in checks if c.get("status") in ("SUCCESS", "FAILURE", "WARNING")]
failed = [c for c in counted if c.get("status") == "FAILURE"]
passed = [c for c in counted if c.get("status") == "SUCCESS"]
ok = rc == "0" and not failed and passed
print(f"{'PASS' if ok else 'FAIL'}  {kind:<6} {name:<44} {len(passed)}/{len(counted)} checks")
if not ok:
    for c in (failed + [c for c in counted if c.get("status") == "WARNING"])[:4]:
        msg = (c.get("errorMessage") or c.get("description") or "").replace("\n", " ")
        print(f"        {c.get('id')}: {msg[:200]}")
    if not counted:
        print(f"        no checks recorded (runner exit {rc}); see {log}")
EOF
}

client_one() {
  local name="$1" slug="${1//\//-}"
  local res="$out/client/$slug" log="$out/client/$slug.log" rc=0
  mkdir -p "$res"
  "$node" "$suite" client --command "$here/client.sh" --scenario "$name" \
    --timeout 30000 -o "$res" >"$log" 2>&1 || rc=$?
  verdict client "$name" "$rc" "$res" "$log" >"$out/lines/client-$slug"
}

# Client scenarios, a few at a time; lines print in list order.
start=$(date +%s)
running=0
for name in "${client_scenarios[@]}"; do
  [ -n "$name" ] || continue
  client_one "$name" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
done
wait || true

# Server scenarios, one at a time, against one `serve --http`.
if [ -n "${server_scenarios[*]}" ]; then
  mkdir -p "$work/data" "$work/config"
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  PIPEWRIGHT_DATA_DIR="$work/data" PIPEWRIGHT_CONFIG_DIR="$work/config" \
    HOME="$work" XDG_DATA_HOME="$work/xdg-data" XDG_CONFIG_HOME="$work/xdg-config" \
    XDG_STATE_HOME="$work/xdg-state" XDG_CACHE_HOME="$work/xdg-cache" \
    "$bin" serve --http "127.0.0.1:$port" --no-save "$root/examples/search-then-update.yml" \
    >"$out/serve.log" 2>&1 &
  serve_pid=$!
  for _ in $(seq 100); do
    grep -q "listening on" "$out/serve.log" 2>/dev/null && break
    kill -0 "$serve_pid" 2>/dev/null || break
    sleep 0.1
  done
  url="http://127.0.0.1:$port/mcp"
  for name in "${server_scenarios[@]}"; do
    [ -n "$name" ] || continue
    res="$out/server/$name" log="$out/server/$name.log" rc=0
    mkdir -p "$res"
    "$node" "$suite" server --url "$url" --scenario "$name" -o "$res" >"$log" 2>&1 || rc=$?
    verdict server "$name" "$rc" "$res" "$log" >"$out/lines/server-$name"
  done
fi

pass=0 fail=0
for name in "${client_scenarios[@]}"; do
  [ -n "$name" ] || continue
  f="$out/lines/client-${name//\//-}"
  cat "$f"
  if head -c4 "$f" | grep -q PASS; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
for name in "${server_scenarios[@]}"; do
  [ -n "$name" ] || continue
  f="$out/lines/server-$name"
  cat "$f"
  if head -c4 "$f" | grep -q PASS; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "conformance: $pass passed, $fail failed ($(( $(date +%s) - start ))s; logs in $out)"
[ "$fail" -eq 0 ]
