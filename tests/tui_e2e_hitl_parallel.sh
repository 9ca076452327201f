#!/usr/bin/env bash
# End-to-end test of two parallel nodes on one stdio server both asking a
# person, in the workbench: the real binary in tmux against the SDK-built
# server tests/interop/hitl_server.py (tool `ask_name`).
#
# Story: `a` and `b` run in one wave; `a` asks for a name at once and stays
# in flight a while after its answer; `b` asks a moment later. Stdio names
# no call, so the modal says which nodes may ask and "1 of 2", and both
# nodes show `?`. Answer the first form; wait until `a` has finished; the
# second form is still there (it is not cancelled because `a`'s call
# ended); answer it; both nodes end with the typed names.
# Needs tmux and the SDK venv at target/pyvenv (CI makes it):
#   python3 -m venv target/pyvenv && target/pyvenv/bin/pip install mcp==2.3.0
#
#   PIPEWRIGHT_BIN=target/debug/pipewright bash tests/tui_e2e_hitl_parallel.sh
#
# HITL_MODE=dual runs the server the SDK's default way (`MCPServer.run()`:
# it answers `server/discover` too), with no protocol flag: the same story
# must hold, and the status bar names MCP 2025-11-25.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${PIPEWRIGHT_BIN:-target/debug/pipewright}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
[ -x "$BIN" ] || { echo "tui_e2e_hitl_parallel: no binary at $BIN (cargo build first)"; exit 2; }
command -v tmux >/dev/null || { echo "tui_e2e_hitl_parallel: tmux is not installed"; exit 2; }
PY="$ROOT/target/pyvenv/bin/python"
SERVER="$ROOT/tests/interop/hitl_server.py"
MODE=${HITL_MODE:-legacy}
if [ ! -x "$PY" ] || ! "$PY" -c 'import mcp' 2>/dev/null; then
  echo "FAIL - tui_e2e_hitl_parallel: no Python with the MCP SDK at $PY;"
  echo "       make it: python3 -m venv target/pyvenv && target/pyvenv/bin/pip install mcp==2.3.0"
  echo "tui_e2e_hitl_parallel: 0 passed, 1 failed"
  exit 1
fi

WORK=$(mktemp -d)
SOCK="pw-e2e-hitl-par-$$"
cleanup() { tmux -L "$SOCK" kill-server 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

cat > "$WORK/flow.yml" <<YAML
servers:
  hitl:
    command: $PY
    args: [$SERVER, $MODE]
compositions:
  - name: two
    nodes:
      - id: a
        tool: ask_name
        args: {who: a, after: 3}
      - id: b
        tool: ask_name
        args: {who: b, before: 0.5}
YAML

# shellcheck source=tests/tmux_lib.sh
source "$(dirname "$0")/tmux_lib.sh"

tmux -L "$SOCK" new-session -d -s e2e -x 140 -y 40 \
  "cd '$WORK' && $HERMETIC env HOME='$WORK' XDG_DATA_HOME='$WORK/xdg-data' XDG_CONFIG_HOME='$WORK/xdg-config' PIPEWRIGHT_DATA_DIR='$WORK/data' PIPEWRIGHT_CONFIG_DIR='$WORK/config' '$BIN' edit flow.yml; echo EXITED \$?; sleep 30"

wait_for "IDLE" 20 || true
check "opens on the file, idle" "IDLE"

# Run: both nodes ask; the first question (a's) is shown, one more waits.
keys F5
wait_for "1 of 2" 40 || true
check "two questions wait" "hitl asks · one of: a, b · 1 of 2"
check "the first is a's" "Name for a"
check "node a waits for the person" "\? a"
check "node b waits for the person" "\? b"

keys -l "Ada"
keys Enter
# a stays in flight a while after its answer; wait until it has finished.
wait_for "✓ a" 20 || true
check "a finished" "✓ a"
check "b's question is still open after a's call ended" "Name for b"
check "b still waits for the person" "\? b"
check "the modal now names b alone" "hitl asks · node b"

keys -l "Bob"
keys Enter
wait_for "DONE" 40 || true
check "the run completes" "DONE COMPLETED"
check "b passed" "✓ b"

keys :
keys -l "node a"
keys Enter
wait_for "a ─" 5 || true
check "a's output holds the name typed for it" '"Ada"'
keys :
keys -l "node b"
keys Enter
wait_for "b ─" 5 || true
check "b's output holds the name typed for it" '"Bob"'

keys Escape
if [ "$MODE" = dual ]; then
  wait_for "MCP 2025-11-25" 5 || true
  check "the server of both eras was spoken to the 2025 way" "MCP 2025-11-25"
fi
keys q
wait_for "EXITED" 10 || true
check "quits cleanly" "EXITED 0"

echo "tui_e2e_hitl_parallel: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
