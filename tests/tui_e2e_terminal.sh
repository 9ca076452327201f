#!/usr/bin/env bash
# End-to-end test of what the workbench leaves on the terminal: the real
# binary in tmux, every byte it writes recorded (tmux pipe-pane).
#
#   1. With PIPEWRIGHT_LOG=debug (rmcp and pipewright log a lot while a run
#      connects, calls and shuts down), nothing of the log reaches the
#      terminal: it goes to workbench.log in the data directory.
#   2. SIGTERM while the workbench runs: it exits with 143 and the shell
#      has its terminal back (`stty -a` shows icanon and echo, the
#      alternate screen is left).
#   3. SIGINT from another process (Ctrl-C is a key in the workbench): the
#      same, with 130; it used to kill the process with the terminal raw.
# Needs tmux; .ci/run installs it when missing.
#
#   PIPEWRIGHT_BIN=target/debug/pipewright bash tests/tui_e2e_terminal.sh
set -euo pipefail

BIN=${PIPEWRIGHT_BIN:-target/debug/pipewright}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
[ -x "$BIN" ] || { echo "tui_e2e_terminal: no binary at $BIN (cargo build first)"; exit 2; }
command -v tmux >/dev/null || { echo "tui_e2e_terminal: tmux is not installed"; exit 2; }

WORK=$(mktemp -d)
BASE="pw-e2e-term-$$"
SOCK="$BASE-0"
opened=0
cleanup() {
  for n in $(seq 0 "$opened"); do tmux -L "$BASE-$n" kill-server 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

cat > "$WORK/flow.yml" <<'EOF'
pipe:
  - id: find
    tool: search_users
    args:
      query: carol
EOF

# shellcheck source=tests/tmux_lib.sh
source "$(dirname "$0")/tmux_lib.sh"

# open ENV...: a new workbench on flow.yml, every byte it writes recorded
# in $WORK/raw-N; after it exits the pane shows its exit code and the
# terminal's icanon and echo modes as `stty -a` gives them.
open() {
  tmux -L "$SOCK" kill-server 2>/dev/null || true
  opened=$((opened + 1))
  SOCK="$BASE-$opened"
  RAW="$WORK/raw-$opened"
  : > "$RAW"
  # Every PIPEWRIGHT_* variable the workbench reads is set here.
  tmux -L "$SOCK" new-session -d -s e2e -x 100 -y 30 \
    "cd '$WORK' && until [ -e '$RAW.on' ]; do sleep 0.05; done && $HERMETIC env $* PIPEWRIGHT_DATA_DIR='$WORK/data' PIPEWRIGHT_CONFIG_DIR='$WORK/config' XDG_CONFIG_HOME='$WORK/xdg' XDG_STATE_HOME='$WORK/xdg' NO_COLOR=1 '$BIN' edit flow.yml; echo EXITED \$?; stty -a | tr ' ;' '\n\n' | grep -xE -- '-?(icanon|echo)' | tr '\n' ' '; echo MODES; sleep 30"
  # Recording starts before the workbench does: the shell waits for it.
  tmux -L "$SOCK" pipe-pane -o -t e2e "cat >> '$RAW'"
  touch "$RAW.on"
}
# The pid of the workbench: the child of the pane's shell.
workbench_pid() {
  local shell
  shell=$(tmux -L "$SOCK" list-panes -t e2e -F '#{pane_pid}')
  pgrep -P "$shell" -f "edit flow.yml" | head -n 1 || true
}

# 1. A debug log while a run goes, quit with q.
open PIPEWRIGHT_LOG=debug
wait_for "IDLE" 20 || true
check "1: the workbench opens" "IDLE"
keys F5
wait_for "DONE" 30 || true
check "1: the run ends" "DONE"
keys q
wait_for "MODES" 20 || true
check "1: it exits with 0" "EXITED 0"
if grep -q " INFO .*rmcp::" "$WORK/data/workbench.log" 2>/dev/null; then
  echo "ok   - 1: the log is in data/workbench.log"; passed=$((passed + 1))
else
  echo "FAIL - 1: no log in data/workbench.log"; failed=$((failed + 1))
  cat "$WORK/data/workbench.log" 2>&1 | head -20 | sed 's/^/     | /' || true
fi
if ! grep -qa "IDLE" "$RAW"; then
  echo "FAIL - 1: the recording of the terminal caught no frame"; failed=$((failed + 1))
elif grep -qaE "rmcp::|pipewright::| DEBUG | INFO " "$RAW"; then
  echo "FAIL - 1: log lines reached the terminal"; failed=$((failed + 1))
  grep -aoE ".{0,40}(rmcp::|pipewright::| DEBUG | INFO ).{0,60}" "$RAW" | head -5 | sed 's/^/     | /' || true
else
  echo "ok   - 1: nothing of the log reached the terminal"; passed=$((passed + 1))
fi

# 2 and 3. A signal from another process while the workbench runs.
for sig in TERM:143 INT:130; do
  name=${sig%%:*}
  code=${sig##*:}
  open
  wait_for "IDLE" 20 || true
  check "$name: the workbench opens" "IDLE"
  pid=$(workbench_pid)
  [ -n "$pid" ] && kill -s "$name" "$pid"
  wait_for "MODES" 20 || true
  check "$name: it exits with $code" "EXITED $code"
  check "$name: the terminal is cooked again (icanon, echo)" "^icanon echo MODES"
  if screen | grep -q "IDLE"; then
    echo "FAIL - $name: the alternate screen is still shown"; failed=$((failed + 1))
    screen | sed 's/^/     | /'
  else
    echo "ok   - $name: the alternate screen is left"; passed=$((passed + 1))
  fi
done

echo "tui_e2e_terminal: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
