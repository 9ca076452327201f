#!/usr/bin/env bash
# End-to-end test of the workbench as a person uses it: the real binary in a
# real terminal (tmux), driven by keys, checked on what the screen shows.
#
# Story: run a pipeline whose second step fails, select the failed node,
# fix its argument in the editor, save, re-run that node alone, see it pass,
# open History, open the older run read-only and show its timeline, quit.
# Needs tmux; .ci/run installs it when missing.
#
#   PIPEWRIGHT_BIN=target/debug/pipewright bash tests/tui_e2e.sh
set -euo pipefail

BIN=${PIPEWRIGHT_BIN:-target/debug/pipewright}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
[ -x "$BIN" ] || { echo "tui_e2e: no binary at $BIN (cargo build first)"; exit 2; }
command -v tmux >/dev/null || { echo "tui_e2e: tmux is not installed"; exit 2; }

WORK=$(mktemp -d)
SOCK="pw-e2e-$$"
cleanup() { tmux -L "$SOCK" kill-server 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

cat > "$WORK/flow.yml" <<'EOF'
vars:
  Q: carol
pipe:
  - id: find
    tool: search_users
    args:
      query: ${var.Q}
  - id: details
    tool: get_user_details
    args:
      user_id: ${find.users[0].name}
  - id: notify
    tool: send_email
    args:
      to: ${details.email}
      subject: hello
      body: hi
EOF

# shellcheck source=tests/tmux_lib.sh
source "$(dirname "$0")/tmux_lib.sh"

tmux -L "$SOCK" new-session -d -s e2e -x 140 -y 36 \
  "cd '$WORK' && $HERMETIC env PIPEWRIGHT_DATA_DIR='$WORK/data' PIPEWRIGHT_CONFIG_DIR='$WORK/config' '$BIN' edit flow.yml; echo EXITED \$?; sleep 30"

wait_for "IDLE" 20 || true
check "opens on the file, idle" "IDLE"
check "the editor shows the file" "tool: get_user_details"

# Run: find succeeds, details fails, notify is skipped.
keys F5
wait_for "DONE" 30 || true
check "the run ends" "DONE (FAILED|PARTIAL)"
check "details failed" "✗ details"
check "find passed" "✓ find"

# Select the failed node with the palette, then fix it in the editor.
keys :
keys -l "node details"
keys Enter
check "the inspector shows details" "details ─"
keys i
for _ in 1 2 3; do keys Down; done
keys End
for _ in 1 2 3 4 5; do keys BSpace; done
keys -l "id}"
keys C-s
sleep 0.5
if grep -q 'user_id: ${find.users\[0\].id}' "$WORK/flow.yml"; then
  echo "ok   - the fix was saved to disk"; passed=$((passed + 1))
else
  echo "FAIL - the fix was not saved:"; sed 's/^/     | /' "$WORK/flow.yml"; failed=$((failed + 1))
fi

# Back to the DAG and re-run the node against find's recorded output.
keys Escape
sleep 0.4
keys r
wait_for "✓ details" 20 || true
check "details passes on re-run" "✓ details"

# History: both runs were saved; open the older (failed) one read-only and
# look at its timeline.
sleep 0.5
keys H
wait_for "history ·" 10 || true
check "history lists the file's runs" "history ·"
check "both runs are there" "partial"
keys Down
keys Enter
wait_for "RUN [0-9]{8}-[0-9]{6}-[0-9a-f]{4} PARTIAL" 10 || true
check "the older run opens read-only" "RUN [0-9]{8}-[0-9]{6}-[0-9a-f]{4} PARTIAL"
check "its failed node shows" "✗ details"
keys T
wait_for "timeline · run" 10 || true
check "the timeline shows that run" "timeline · run [0-9]{8}-[0-9]{6}-[0-9a-f]{4}"
check "with a bar per node" "★find +█"
keys T
keys Escape
wait_for "back to the live" 10 || true
check "Esc returns to the live workbench" "back to the live workbench"

# Quit: nothing unsaved, so no question.
keys q
wait_for "EXITED" 10 || true
check "quits cleanly" "EXITED 0"

echo "tui_e2e: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
