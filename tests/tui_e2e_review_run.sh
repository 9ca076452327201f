#!/usr/bin/env bash
# Issue 48, the items about driving a run (5, 6, 8, 14, 24): the real
# binary in tmux on a copy of examples/, driven by keys.
#
#   5. the inspector's footer lists `q quit`, `p`/`x` while a run goes, and
#      F8/F10/`s` at a break and a step (at 200x50, where every key fits);
#   6. `▸` marks the node a step stopped before; the 80x24 DAG title does
#      not count running nodes with the breakpoint's `●`; at a break before
#      a fan-out the Iterations tab does not say `not a fan-out`;
#   8. a budget stop is said in words, `p` and `r` at STEP leave a line in
#      Messages;
#  14. a server that cannot start: no `not run yet` above the failure, and
#      the DAG does not keep `○`;
#  24. `edit --on restate://…`: F5 says whether it ran here or on Restate.
# Until the fixes land these checks fail: that is the defect they show.
# Needs tmux and python3; .ci/run installs tmux when missing.
#
#   PIPEWRIGHT_BIN=target/debug/pipewright bash tests/tui_e2e_review_run.sh
set -euo pipefail
NAME=tui_e2e_review_run
# shellcheck source=tests/tmux_lib.sh
source "$(dirname "$0")/tmux_lib.sh"
# shellcheck source=tests/tui_e2e_review_lib.sh
source "$(dirname "$0")/tui_e2e_review_lib.sh"

cat > "$WORK/steps.yml" <<'YAML'
pipe:
  - id: hello
    tool: echo
    args: { message: hi }
  - id: wait
    tool: slow
    args: { ms: 1500 }
  - id: bye
    tool: echo
    args: { message: bye }
YAML
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
cat > "$WORK/budget.yml" <<'YAML'
budget: { max_cost_usd: 0.003 }
pipe:
  - id: one
    tool: summarize
    args: { text: "one two three four" }
  - id: two
    tool: summarize
    args: { text: "five six seven" }
YAML
cat > "$WORK/dies.yml" <<'YAML'
servers:
  py:
    command: python3
    args: [-c, "import nope_module_in_e2e"]
pipe:
  - id: first
    server: py
    tool: anything
  - id: second
    server: py
    tool: other
YAML

# messages_say NAME PATTERN: the Messages pane (m) has a logged line
# (`hh:mm:ss · …`) matching PATTERN; the pane is closed again.
messages_say() {
  keys m
  wait_for "Messages \(" 5 || true
  if screen | grep -E "[0-9]{2}:[0-9]{2}:[0-9]{2} [·✗!] " | grep -qE -- "$2"; then
    pass "$1"
  else
    fail "$1" "no logged line like /$2/"
  fi
  keys Escape
}

# ---- 5. The inspector's footer -----------------------------------------
open 200x50 steps.yml
wait_for "IDLE" 20 || true
keys Enter
check "setup: Enter opens the inspector" "^ INSPECT "
check_row "item 5: the inspector's footer lists q quit" footer_row "q quit"
keys F5
wait_for "RUNNING wait" 20 || true
check_row "item 5: while a run goes the inspector's footer lists p pause" footer_row "p( F6)? pause"
check_row "item 5: while a run goes the inspector's footer lists x cancel" footer_row "x( Ctrl-C)? cancel"
run_ends
keys Escape
node wait
keys b
keys Enter
keys F5
wait_for "BREAK" 20 || true
check "setup: the run stops at the breakpoint" "BREAK at wait"
check "setup: the focus is still in the inspector" "^ INSPECT "
check_row "item 5: at BREAK the inspector's footer lists F8 continue" footer_row "F8 continue"
check_row "item 5: at BREAK the inspector's footer lists F10 step" footer_row "F10 step"
check_row "item 5: at BREAK the inspector's footer lists s skip" footer_row "s skip"
keys F10
wait_for "STEP" 10 || true
check_row "item 5: at STEP the inspector's footer lists F8 continue" footer_row "F8 continue"
check_row "item 5: at STEP the inspector's footer lists F10 step" footer_row "F10 step"
keys F8
run_ends
quit

# ---- 6. Markers ----------------------------------------------------------
open 80x24 steps.yml
wait_for "IDLE" 20 || true
keys F10
wait_for "STEP" 10 || true
check "setup: F10 ran hello and stopped" "STEP +1/3 ok"
check "item 6: ▸ marks the node the step stopped before" "▸ ?○ wait"
keys F8
run_ends
keys F5
wait_for "RUNNING wait" 20 || true
check "setup: the 80x24 DAG title counts by glyph" "DAG pipe · 3 ✓1"
if screen | head -1 | grep -qE "●[0-9]"; then
  fail "item 6: the 80x24 DAG title does not count running nodes with the breakpoint's ●"
else
  pass "item 6: the 80x24 DAG title does not count running nodes with the breakpoint's ●"
fi
run_ends
quit

open 80x24 team.yml
wait_for "IDLE" 20 || true
node details
keys b
keys F5
wait_for "BREAK" 20 || true
check "setup: the run stops before the fan-out" "BREAK at details"
keys Enter
keys 5
absent "item 6: at a break before a fan-out the Iterations tab does not say 'not a fan-out'" "not a fan-out"
keys Escape
keys F8
run_ends
quit

# ---- 8. What Messages say ----------------------------------------------
open 100x30 budget.yml
wait_for "IDLE" 20 || true
keys F5
run_ends
check "setup: the run stops over its budget" "OVER BUDGET"
keys m
wait_for "Messages \(" 5 || true
absent "item 8: the budget stop is said in words, not as budget_exceeded" "budget_exceeded"
keys Escape
quit

open 100x30 steps.yml
wait_for "IDLE" 20 || true
keys F5
wait_for "RUNNING wait" 20 || true
keys p
wait_for "PAUSED|DONE" 10 || true
messages_say "item 8: p leaves a line in Messages" "[Pp]aus"
keys F8
run_ends
keys F10
wait_for "STEP" 10 || true
# `hello` ran: r re-runs it (or says why not), and Messages keep a line.
node hello
keys r
wait_for "STEP" 10 || true
messages_say "item 8: r at STEP leaves a line in Messages" "hello"
keys x
wait_for "DONE|IDLE" 10 || true
quit

# ---- 14. A server that cannot start --------------------------------------
open 100x30 dies.yml
wait_for "IDLE" 20 || true
keys F5
wait_for "could not start" 30 || true
check "setup: the node says the session could not start" "not run: the session could not start"
absent "item 14: the header does not say 'not run yet' above the failure" "○ not run yet"
absent "item 14: the DAG does not keep ○ on nodes that could not start" "○ first|○ second"
quit

# ---- 24. A workbench opened with --on restate://… ------------------------
open 100x30 "search-then-update.yml --on restate://127.0.0.1:1"
wait_for "IDLE" 20 || true
keys F5
wait_for "DONE|FAILED|Restate|restate" 30 || true
if { status_row; screen | grep -E "[0-9]{2}:[0-9]{2}:[0-9]{2} [·✗!] " || true; } | grep -qE "[Rr]estate|[Dd]urabl|[Ll]ocal"; then
  pass "item 24: F5 with --on says where the run goes (here or Restate)"
else
  keys m
  wait_for "Messages \(" 5 || true
  if screen | grep -E "[0-9]{2}:[0-9]{2}:[0-9]{2} [·✗!] " | grep -qE "[Rr]estate|[Dd]urabl|[Ll]ocal"; then
    pass "item 24: F5 with --on says where the run goes (here or Restate)"
  else
    fail "item 24: F5 with --on says where the run goes (here or Restate)" "nothing on screen or in Messages names Restate, durable or local"
  fi
  keys Escape
fi
quit

summary
