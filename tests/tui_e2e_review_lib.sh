# Helpers for the issue-48 review stories (sourced after tmux_lib.sh, not
# run): each workbench in a tmux server of its own on a copy of examples/,
# with HOME and pipewright's data and config dirs in the story's temp dir;
# checks on one row of the screen, on what is absent, and on the escape
# sequences (colours) of a row.
# Each story sets NAME, then sources this: it makes WORK, copies the
# examples and cleans up on exit.

BIN=${PIPEWRIGHT_BIN:-target/debug/pipewright}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
[ -x "$BIN" ] || { echo "$NAME: no binary at $BIN (cargo build first)"; exit 2; }
command -v tmux >/dev/null || { echo "$NAME: tmux is not installed"; exit 2; }
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

WORK=$(mktemp -d)
mkdir -p "$WORK/home" "$WORK/data" "$WORK/config" "$WORK/xdg"
cp "$ROOT"/examples/*.yml "$WORK/"
BASE="pw-e2e-review-$$"
SOCK="$BASE-0"
opened=0
# Processes the story started besides tmux (by pid), stopped at exit.
pids=()
cleanup() {
  for n in $(seq 0 "$opened"); do tmux -L "$BASE-$n" kill-server 2>/dev/null || true; done
  for p in ${pids[@]+"${pids[@]}"}; do
    kill "$p" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
  rm -rf "$WORK" 2>/dev/null || true
}
trap cleanup EXIT

# open SIZE ARGS [ENV...]: a new workbench (`pipewright edit ARGS`) at
# SIZE (80x24) in a tmux server of its own; ENV (A=b …) is set for it.
# With TMUX_CONF set, the server reads that file first.
open() {
  local size=$1 args=$2; shift 2
  tmux -L "$SOCK" kill-server 2>/dev/null || true
  opened=$((opened + 1))
  SOCK="$BASE-$opened"
  tmux -L "$SOCK" -f "${TMUX_CONF:-/dev/null}" new-session -d -s e2e -x "${size%x*}" -y "${size#*x}" \
    "cd '$WORK' && $HERMETIC env $* HOME='$WORK/home' PIPEWRIGHT_DATA_DIR='$WORK/data' PIPEWRIGHT_CONFIG_DIR='$WORK/config' XDG_CONFIG_HOME='$WORK/xdg' '$BIN' edit $args; echo EXITED \$?; sleep 60"
  # The terminal's clipboard: OSC 52 from the application fills a buffer.
  tmux -L "$SOCK" set -g set-clipboard on
}
# quit: leaves the workbench, saying no to saving.
quit() {
  keys C-q
  if wait_for "quit\?|EXITED" 5 && ! screen | grep -q EXITED; then keys q; fi
  wait_for "EXITED" 10 || true
}

status_row() { screen | tail -2 | head -1; }
footer_row() { screen | tail -1; }
# styled: the screen with its escape sequences (colours, reverse video).
styled() { tmux -L "$SOCK" capture-pane -p -e -t e2e; }

pass() { echo "ok   - $1"; passed=$((passed + 1)); }
fail() { # fail NAME [WHY]: counts a failure and shows the screen.
  echo "FAIL - $1${2:+ ($2)}"; failed=$((failed + 1))
  screen | sed 's/^/     | /'
}
# absent NAME PATTERN: the screen does not show PATTERN.
absent() {
  if screen | grep -qE -- "$2"; then fail "$1" "unwanted /$2/: $(screen | grep -E -- "$2" | head -1 | sed 's/^ *//')"; else pass "$1"; fi
}
# check_row NAME ROW PATTERN: the row (status_row, footer_row) shows PATTERN.
check_row() {
  if $2 | grep -qE -- "$3"; then pass "$1"; else fail "$1" "wanted /$3/ on the $2: $($2)"; fi
}
# absent_row NAME ROW PATTERN: the row does not show PATTERN.
absent_row() {
  if $2 | grep -qE -- "$3"; then fail "$1" "unwanted /$3/ on the $2: $($2)"; else pass "$1"; fi
}
# gone PATTERN [SECONDS]: waits until the screen no longer shows PATTERN.
gone() {
  local until=$((SECONDS + ${2:-10}))
  while [ $SECONDS -lt $until ]; do
    screen | grep -qE -- "$1" || return 0
    sleep 0.2
  done
  return 1
}
# node ID: selects node ID through the palette and goes back to the DAG.
node() {
  keys :
  keys -l "node $1"
  keys Enter
  keys Escape
}
# done_line: waits for the run on screen to end.
run_ends() { wait_for "DONE|OVER BUDGET" "${1:-30}" || true; }
summary() {
  echo "$NAME: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
