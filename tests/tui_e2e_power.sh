#!/usr/bin/env bash
# End-to-end test of the workbench under a power user, in a real terminal
# at 80x24 (issue 35): run; edit and run again; break on a fan-out and read
# the resolved per-item arguments; step; continue; yank a value (OSC 52:
# with tmux's set-clipboard on, the copied text lands in a tmux buffer);
# `/` search in Raw; History → the diff shows the file change → F5 runs
# that file version again.
# Needs tmux; .ci/run installs it when missing.
#
#   PIPEWRIGHT_BIN=target/debug/pipewright bash tests/tui_e2e_power.sh
set -euo pipefail

BIN=${PIPEWRIGHT_BIN:-target/debug/pipewright}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
[ -x "$BIN" ] || { echo "tui_e2e_power: no binary at $BIN (cargo build first)"; exit 2; }
command -v tmux >/dev/null || { echo "tui_e2e_power: tmux is not installed"; exit 2; }

WORK=$(mktemp -d)
SOCK="pw-e2e-power-$$"
cleanup() {
  tmux -L "$SOCK" kill-server 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

cat > "$WORK/team.yml" <<'YAML'
pipe:
  - id: find
    tool: search_users
    args: { query: "", limit: 4 }
  - id: details
    for_each: ${find.users[*]}
    tool: get_user_details
    args:
      user_id: ${item.id}
YAML

# shellcheck source=tests/tmux_lib.sh
source "$(dirname "$0")/tmux_lib.sh"

tmux -L "$SOCK" new-session -d -s e2e -x 80 -y 24 \
  "cd '$WORK' && $HERMETIC env PIPEWRIGHT_DATA_DIR='$WORK/data' PIPEWRIGHT_CONFIG_DIR='$WORK/config' XDG_CONFIG_HOME='$WORK/xdg' '$BIN' edit team.yml; echo EXITED \$?; sleep 30"
# The terminal's clipboard: OSC 52 from the application fills a buffer.
tmux -L "$SOCK" set -g set-clipboard on
wait_for "IDLE" 20 || true
check "80x24: the footer keeps help and quit" "\? help.*q quit"

# 1. Run.
keys F5
wait_for "DONE" 30 || true
check "the first run ends: 2/2 ok" "DONE COMPLETED .*2/2 ok"

# 2. Edit (limit 4 → 3), save, run again: History has two file versions.
keys i
keys C-g
keys -l "4"
keys Enter
keys End
keys BSpace BSpace BSpace
keys -l "3 }"
keys C-s
keys Escape
sleep 0.5
keys F5
wait_for "DONE COMPLETED" 30 || true
check "the second run ends" "DONE COMPLETED .*2/2 ok"

# 3. Break on the fan-out, run to it.
keys :
keys -l "node details"
keys Enter
keys Escape
keys b
keys F5
wait_for "BREAK" 30 || true
check "the run stops before the fan-out" "BREAK"
check "the footer at a break offers continue and step" "F8 continue.*F10 step|F10 step.*F8 continue"
keys Enter
keys 1
check "the fan-out's Args show the resolved per-item arguments" '"u[0-9]+"'

# 4. Step, then continue.
keys Escape
keys F10
wait_for "STEP|DONE" 30 || true
keys F8
wait_for "DONE COMPLETED" 30 || true
check "continue ends the run" "DONE COMPLETED .*2/2 ok"

# 5. Yank a value from the Output tree.
keys :
keys -l "node find"
keys Enter
keys Escape
keys Enter
keys 2
keys Down Down
keys y
wait_for "copied" 10 || true
check "y says what it copied" "copied"
clip=$(tmux -L "$SOCK" show-buffer 2>/dev/null || true)
if [ -n "$clip" ]; then
  echo "ok   - the value reached the terminal's clipboard (OSC 52): ${clip:0:40}"; passed=$((passed + 1))
else
  echo "FAIL - nothing reached the terminal's clipboard"; failed=$((failed + 1))
fi

# 6. Search in Raw.
keys 6
keys /
keys -l "jsonrpc"
keys Enter
wait_for "match [0-9]+/[0-9]+" 10 || true
check "/ in Raw finds the wire messages" "match [0-9]+/[0-9]+"
keys Escape
keys Escape

# 7. History → diff shows the file change → F5 runs that version.
keys H
wait_for "history ·" 10 || true
check "History lists the runs" "history ·"
# The oldest run: the first file version (limit 4).
keys End
keys D
wait_for "limit" 10 || true
check "the diff shows the file change, line by line" "[-+] +4 │.*limit: [34]"
keys Escape
keys H
wait_for "history ·" 10 || true
keys End
keys F5
# The breakpoint on details still holds: the run stops there, F8 goes on.
wait_for "BREAK" 30 || true
check "F5 in History runs that file version (to the breakpoint)" "BREAK at details"
keys F8
wait_for "DONE COMPLETED" 30 || true
check "and it ends" "DONE COMPLETED .*2/2 ok"
check "the editor holds the restored text" "limit: 4"

keys C-q
wait_for "quit\?|EXITED" 10 || true
keys q
wait_for "EXITED" 10 || true
echo "tui_e2e_power: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
