#!/usr/bin/env bash
# End-to-end test of the recording view: the real binary in tmux follows a
# folder of recordings while `pipewright record` writes a session into it,
# an agent scripted as JSON-RPC lines driving the demo server through it.
#
# Story: open `edit flow.yml --record recordings` before anything is
# recorded (the folder does not exist yet); start the recorder; the agent
# searches users, then reads the first one's details with the id it got;
# each call appears as a node as its answer lands, the edge between them
# follows, the status bar counts calls, references and inputs; the session
# ends; W writes the pipeline beside flow.yml, which `check` passes and
# replays offline; Esc gives flow.yml back; q quits.
#
#   PIPEWRIGHT_BIN=target/debug/pipewright bash tests/tui_e2e_record.sh
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${PIPEWRIGHT_BIN:-target/debug/pipewright}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
[ -x "$BIN" ] || { echo "tui_e2e_record: no binary at $BIN (cargo build first)"; exit 2; }
command -v tmux >/dev/null || { echo "tui_e2e_record: tmux is not installed"; exit 2; }

WORK=$(mktemp -d)
SOCK="pw-e2e-record-$$"
AGENT_PID=
cleanup() {
  [ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null || true
  tmux -L "$SOCK" kill-server 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

cat > "$WORK/flow.yml" <<'YAML'
pipe:
  - id: mine
    tool: echo
    args: {message: mine}
YAML

# shellcheck source=tests/tmux_lib.sh
source "$HERE/tmux_lib.sh"

tmux -L "$SOCK" new-session -d -s e2e -x 150 -y 40 \
  "cd '$WORK' && $HERMETIC env PIPEWRIGHT_DATA_DIR='$WORK/data' PIPEWRIGHT_CONFIG_DIR='$WORK/config' '$BIN' edit flow.yml --record recordings; echo EXITED \$?; sleep 30"

wait_for "REC LIVE 0 calls" 20 || true
check "opens following, nothing recorded yet" "REC LIVE 0 calls"
check "the DAG says calls will come" "no call recorded yet"
check "the footer names the keys" "W write the pipeline"

# The agent: JSON-RPC lines, a pause between calls so each lands alone.
agent() {
  echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}'
  echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  sleep 1.5
  echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_users","arguments":{"query":"ali","limit":5}}}'
  sleep 2.5
  echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_user_details","arguments":{"user_id":"u1"}}}'
  sleep 2.5
}
(cd "$WORK" && agent | sh "$HERE/hermetic.sh" env PIPEWRIGHT_DATA_DIR="$WORK/data" \
  "$BIN" record --out recordings -- "$BIN" demo-server >"$WORK/agent.out" 2>"$WORK/record.err") &
AGENT_PID=$!

wait_for "✓ search_users" 20 || true
check "the first call is a node as its answer lands" "✓ search_users"
check "it is counted" "REC LIVE 1 call "
wait_for "get_user_details" 20 || true
check "the second call is a node" "✓ get_user_details"
wait_for "REC LIVE 2 calls · 1 ref" 20 || true
check "the copied id is an inferred reference" "REC LIVE 2 calls · 1 ref · 1 input"
check "the edge joins them" "search_users ━+▶ ✓ get_user_details"
check "the pipeline W writes reads the first user's id" 'search_users\.users\[0\]\.id'
check "the inspector shows the newest exchange" "alice@example.com"

wait "$AGENT_PID" || true
AGENT_PID=
wait_for "REC ENDED" 20 || true
check "the end of the session is said" "REC ENDED 2 calls"

keys W
wait_for "wrote " 30 || true
check "W writes the pipeline" "wrote .*\.yml"
WRITTEN=$(cd "$WORK" && ls ./*.yml | grep -v '^./flow.yml$' | head -1)
if [ -n "$WRITTEN" ] && (cd "$WORK" && "$BIN" check "$WRITTEN" >/dev/null 2>&1); then
  echo "ok   - the written pipeline passes check"; passed=$((passed + 1))
else
  echo "FAIL - the written pipeline passes check ($WRITTEN)"; failed=$((failed + 1))
fi
if [ -n "$WRITTEN" ] && (cd "$WORK" && PIPEWRIGHT_DATA_DIR="$WORK/data" "$BIN" run "$WRITTEN" --replay "$WRITTEN.cassette.json" >/dev/null 2>&1); then
  echo "ok   - it replays offline"; passed=$((passed + 1))
else
  echo "FAIL - it replays offline ($WRITTEN)"; failed=$((failed + 1))
fi

keys Escape
wait_for "✓ mine|mine" 10 || true
check "Esc gives the file back" "DAG main|mine"
keys q
wait_for "EXITED" 10 || true
check "quits cleanly" "EXITED 0"

echo "tui_e2e_record: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
