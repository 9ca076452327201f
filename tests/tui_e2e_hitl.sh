#!/usr/bin/env bash
# End-to-end test of a server asking a person mid-run, in the workbench: the
# real binary in tmux against the SDK-built server tests/interop/hitl_server.py.
#
# Story: run a chain whose middle node calls `signup`; the server asks for a
# form; the node shows `?` and the modal opens; type a name, Tab, an age,
# Enter; the chain completes, the typed name is in that node's output and
# the next node counted to the typed age (`${who.age}`).
# Needs tmux and the SDK venv at target/pyvenv (CI makes it):
#   python3 -m venv target/pyvenv && target/pyvenv/bin/pip install mcp==2.3.0
#
#   PIPEWRIGHT_BIN=target/debug/pipewright bash tests/tui_e2e_hitl.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${PIPEWRIGHT_BIN:-target/debug/pipewright}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
[ -x "$BIN" ] || { echo "tui_e2e_hitl: no binary at $BIN (cargo build first)"; exit 2; }
command -v tmux >/dev/null || { echo "tui_e2e_hitl: tmux is not installed"; exit 2; }
PY="$ROOT/target/pyvenv/bin/python"
SERVER="$ROOT/tests/interop/hitl_server.py"
if [ ! -x "$PY" ] || ! "$PY" -c 'import mcp' 2>/dev/null; then
  echo "FAIL - tui_e2e_hitl: no Python with the MCP SDK at $PY;"
  echo "       make it: python3 -m venv target/pyvenv && target/pyvenv/bin/pip install mcp==2.3.0"
  echo "tui_e2e_hitl: 0 passed, 1 failed"
  exit 1
fi

WORK=$(mktemp -d)
SOCK="pw-e2e-hitl-$$"
cleanup() { tmux -L "$SOCK" kill-server 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

cat > "$WORK/flow.yml" <<YAML
servers:
  hitl:
    command: $PY
    args: [$SERVER]
pipe:
  - id: first
    tool: count
    args: {n: 2}
  - id: who
    tool: signup
    args: {reason: e2e}
  - id: last
    tool: count
    args: {n: "\${who.age}"}
YAML

# shellcheck source=tests/tmux_lib.sh
source "$(dirname "$0")/tmux_lib.sh"

tmux -L "$SOCK" new-session -d -s e2e -x 140 -y 40 \
  "cd '$WORK' && $HERMETIC env PIPEWRIGHT_DATA_DIR='$WORK/data' PIPEWRIGHT_CONFIG_DIR='$WORK/config' '$BIN' edit flow.yml; echo EXITED \$?; sleep 30"

wait_for "IDLE" 20 || true
check "opens on the file, idle" "IDLE"

# Run: `first` counts, then `who`'s server asks for the form.
keys F5
wait_for "hitl asks · node who" 40 || true
check "the form opens for node who" "hitl asks · node who"
check "with the server's message" "Sign up \(e2e\)"
check "required fields are marked" "\* Your name"
check "the node waits for the person" "\? who"
check "first ran before it" "✓ first"

# Fill it in by keys: a name, Tab, a bad age first (kept open, error shown).
keys -l "Ada Lovelace"
keys Tab
keys -l "x"
keys Enter
wait_for "whole number" 5 || true
check "a bad age keeps the form open with the error" "must be a whole number"
keys BSpace
keys -l "3"
keys Enter
wait_for "DONE" 40 || true
check "the chain completes" "DONE COMPLETED"
check "every node passed" "✓ last"

# The typed name is in who's output; last counted to the typed age.
keys :
keys -l "node who"
keys Enter
wait_for "who ─" 5 || true
check "who's output holds the typed name" '"Ada Lovelace"'
keys :
keys -l "node last"
keys Enter
wait_for "last ─" 5 || true
check "last counted to the typed age" '"count": 3'
# Its Logs tab shows what the server said.
keys Tab
keys 7
wait_for "server log" 5 || true
check "the Logs tab shows the server's lines" "counted to 3"

keys Escape
keys q
wait_for "EXITED" 10 || true
check "quits cleanly" "EXITED 0"

echo "tui_e2e_hitl: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
