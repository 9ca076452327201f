#!/usr/bin/env bash
# End-to-end test of writing a pipeline with the servers' help, in a real
# terminal (tmux, 100x30), as an author would (issue 34): from an empty
# file, a four-node pipe with a `for_each` is written with completion for
# every tool name, argument key and reference (Tab, and the popup that
# opens by itself after `${`, `.` and `[`); a typo'd tool gets preflight's
# mark with its did-you-mean before anything runs, and the quick fix
# (Alt-Enter) clears it; F5 then runs it: 4/4 ok.
# Needs tmux; .ci/run installs it when missing.
#
#   PIPEWRIGHT_BIN=target/debug/pipewright bash tests/tui_e2e_authoring.sh
set -euo pipefail

BIN=${PIPEWRIGHT_BIN:-target/debug/pipewright}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
[ -x "$BIN" ] || { echo "tui_e2e_authoring: no binary at $BIN (cargo build first)"; exit 2; }
command -v tmux >/dev/null || { echo "tui_e2e_authoring: tmux is not installed"; exit 2; }

WORK=$(mktemp -d)
SOCK="pw-e2e-authoring-$$"
cleanup() {
  tmux -L "$SOCK" kill-server 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# shellcheck source=tests/tmux_lib.sh
source "$(dirname "$0")/tmux_lib.sh"

# popup LABEL: the completion popup is open and lists LABEL.
popup() { wait_for "[ƒa=◆.vekjsi] $1" 15; }
# accept LABEL: wait for the popup to offer LABEL chosen first, then Enter.
accept() {
  if popup "$1"; then keys Enter; else
    echo "FAIL - the popup never offered $1"; failed=$((failed + 1)); screen | sed 's/^/     | /'
  fi
}
# line: the editor's line holding PATTERN.
line() { screen | grep -E -- "$1" | head -1; }

tmux -L "$SOCK" new-session -d -s e2e -x 100 -y 30 \
  "cd '$WORK' && $HERMETIC env PIPEWRIGHT_DATA_DIR='$WORK/data' PIPEWRIGHT_CONFIG_DIR='$WORK/config' XDG_CONFIG_HOME='$WORK/xdg' '$BIN' edit team.yml; echo EXITED \$?; sleep 30"
wait_for "^ EDIT " 20 || true
check "a new file opens in the editor" "^ EDIT "
check "the footer offers completion" "Tab complete/next pane"
# Empty the scaffold: the file is written from nothing.
keys C-a
keys BSpace
wait_for "the file is empty" 10 || true
check "the buffer is empty" "the file is empty"

# Node 1: the tool by completion (Tab after two letters), its arguments.
keys -l "pipe:"
keys Enter
keys -l -- "- id: find"
keys Enter
keys -l "tool: se"
keys Tab
accept "search_users"
check "Tab wrote the tool's name" "tool: search_users *│"
keys Enter
keys -l "args:"
keys Enter
keys Tab
popup "query" || true
check "argument keys come with type and required" "a query +string · required"
check "the chosen item's description is beside the list" "Text to find in a name or email"
keys Enter
keys -l '""'
keys Enter
keys Tab
accept "limit"
keys -l "4"
check "arguments written by completion" "limit: 4"
keys Enter
keys BSpace BSpace BSpace BSpace

# Node 2: a fan-out over find's users; every reference by completion.
keys -l -- "- id: details"
keys Enter
keys -l 'for_each: "${'
popup "find" || true
check "\${ opens the popup with the nodes before" "◆ find +node · search_users"
keys Enter
keys -l "."
accept "users"
keys -l "["
popup '\*\]' || true
keys Down
keys Enter
keys -l '}"'
check "the fan-out's source was written by completion" 'for_each: "\$\{find\.users\[\*\]\}"'
keys Enter
keys -l "tool: get_u"
keys Tab
accept "get_user_details"
keys Enter
keys -l "args:"
keys Enter
keys Tab
accept "user_id"
keys -l '"${it'
accept "item"
keys -l "."
accept "id"
keys -l '}"'
check "item paths come from the source's outputSchema" 'user_id: "\$\{item\.id\}"'
keys Enter
keys BSpace BSpace BSpace BSpace

# Node 3: the fan-out's names.
keys -l -- "- id: names"
keys Enter
keys -l "tool: ec"
keys Tab
accept "echo"
keys Enter
keys -l "args:"
keys Enter
keys Tab
accept "message"
keys -l '"names: ${de'
accept "details"
keys -l "["
popup '\*\]' || true
keys Down
keys Enter
keys -l ".na"
accept "name"
keys -l '}"'
check "a fan-out's paths are its calls' outputs" 'message: "names: \$\{details\[\*\]\.name\}"'
keys Enter
keys BSpace BSpace BSpace BSpace

# Node 4: numbers from find's output, by completion too.
keys -l -- "- id: total"
keys Enter
keys -l "tool: ad"
keys Tab
accept "add"
keys Enter
keys -l "args:"
keys Enter
keys Tab
accept "a"
keys -l '${fi'
accept "find"
keys -l ".co"
accept "count"
keys -l "}"
keys Enter
keys Tab
accept "b"
keys -l "1"
check "every argument key and reference of the last node by completion" 'a: \$\{find\.count\}'
check "the pipeline is whole: four nodes" "DAG pipe · 4 nodes"

# A typo in a tool's name: marked before anything runs.
keys C-g
keys -l "17"
keys Enter
keys End
keys -l "x"
check "the typo is in the buffer" "tool: addx"
wait_for "! +[0-9]+ +tool: addx" 20 || true
check "preflight marks the typo's line before any run" "! +[0-9]+ +tool: addx"
check "and says what is wrong under it" "└ node .total.: server .demo. has no tool"
check "nothing has run" "0/4 ok"
check "on the marked line the footer offers the quick fix" "Alt-Enter quick fix"
keys Escape
keys m
check "the did-you-mean reads whole in Messages" "has no tool .addx.|did you mean .add."
keys Escape
keys M-Enter
wait_for "tool: add *│" 10 || true
check "the quick fix writes the name" "tool: add *│"
sleep 1
if screen | grep -qE "has no tool"; then
  echo "FAIL - the quick fix left the mark"; failed=$((failed + 1)); screen | sed 's/^/     | /'
else
  echo "ok   - the quick fix clears the mark"; passed=$((passed + 1))
fi

keys C-s
keys F5
wait_for "4/4 ok" 30 || true
check "F5 runs the pipeline written: 4/4 ok" "DONE COMPLETED .*4/4 ok"
check "the fan-out ran each user" "details 4/4|details.*4/4"
grep -q 'tool: search_users' "$WORK/team.yml" && grep -q 'for_each: "${find.users\[\*\]}"' "$WORK/team.yml" \
  && { echo "ok   - the file on disk is the one written"; passed=$((passed + 1)); } \
  || { echo "FAIL - the file on disk"; failed=$((failed + 1)); cat "$WORK/team.yml"; }

keys C-q
wait_for "EXITED" 10 || true
echo "tui_e2e_authoring: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
