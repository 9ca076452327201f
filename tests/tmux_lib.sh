# Helpers shared by the tmux end-to-end scripts (sourced, not run): read the
# screen of the session `e2e` on socket $SOCK, send keys, wait for and check
# what it shows, counting passes and failures.
# The pane's command starts pipewright through $HERMETIC, then `env` with
# what the story sets: a tmux server hands a pane the environment it kept,
# so the pane drops the user's PIPEWRIGHT_* itself (tests/hermetic.sh).
HERMETIC="sh '$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/hermetic.sh'"
passed=0
failed=0
check() { # check NAME PATTERN: the screen shows PATTERN
  if screen | grep -qE -- "$2"; then
    echo "ok   - $1"; passed=$((passed + 1))
  else
    echo "FAIL - $1 (wanted /$2/)"; failed=$((failed + 1))
    screen | sed 's/^/     | /'
  fi
}
screen() { tmux -L "$SOCK" capture-pane -p -t e2e; }
keys() { tmux -L "$SOCK" send-keys -t e2e "$@"; sleep 0.3; }
wait_for() { # wait_for PATTERN [SECONDS]
  local until=$((SECONDS + ${2:-20}))
  while [ $SECONDS -lt $until ]; do
    screen | grep -qE -- "$1" && return 0
    sleep 0.2
  done
  return 1
}
