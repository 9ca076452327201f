#!/usr/bin/env bash
# Issue 48, item 17 (polish), one check per point: the real binary in tmux
# on a copy of examples/, driven by keys.
#
#   - the timeline's axis says seconds as the rest does (`1.51 s`), not
#     `1511ms`;
#   - a fan-out's iterations are numbered one way in the Iterations table,
#     an opened iteration, its Raw and the timeline;
#   - `1 node`, not `1 nodes`;
#   - a fan-out's markers are apart (`4/4 ✗2`, not `4/4✗2`);
#   - the 80x24 help wraps its text instead of cutting it;
#   - EDIT shows the terminal's cursor (IMEs and screen readers follow it);
#   - `g`/`G` go to the DAG's first and last node; the book documents hjkl;
#   - Raw of a fan-out iteration is the wire response;
#   - a `needs:` used only for ordering does not warn on every entry.
# Until the fixes land these checks fail: that is the defect they show.
# Needs tmux; .ci/run installs it when missing.
#
#   PIPEWRIGHT_BIN=target/debug/pipewright bash tests/tui_e2e_review_polish.sh
set -euo pipefail
NAME=tui_e2e_review_polish
# shellcheck source=tests/tmux_lib.sh
source "$(dirname "$0")/tmux_lib.sh"
# shellcheck source=tests/tui_e2e_review_lib.sh
source "$(dirname "$0")/tui_e2e_review_lib.sh"

cat > "$WORK/fan.yml" <<'YAML'
pipe:
  - id: ids
    tool: echo
    args: { message: '["u1","nope-1","u2","nope-2"]' }
  - id: details
    for_each: ${ids[*]}
    tool: get_user_details
    args:
      user_id: ${item}
    on_error: continue
  - id: wait
    tool: slow
    args: { ms: 1500 }
  - id: last
    tool: echo
    args: { message: done }
YAML
printf 'pipe:\n  - id: only\n    tool: echo\n    args: { message: hi }\n' > "$WORK/one.yml"
cat > "$WORK/order.yml" <<'YAML'
compositions:
  - name: c
    nodes:
      - { id: a, tool: echo, args: { message: a } }
      - { id: b, needs: [a], tool: echo, args: { message: b } }
      - { id: c, needs: [b], tool: echo, args: { message: c } }
      - { id: d, needs: [c], tool: echo, args: { message: d } }
      - { id: e, needs: [d], tool: echo, args: { message: e } }
YAML

# first_number TEXT: the first whole number in TEXT.
first_number() { grep -oE "[0-9]+" <<<"$1" | head -1; }

# ---- A fan-out: markers, numbering, Raw, the timeline ----------------------
open 100x30 fan.yml
wait_for "IDLE" 20 || true
keys F5
run_ends
check "setup: the run ends with two failed iterations" "details 4/4 ?✗2"
absent "item 17: a fan-out's markers are apart (4/4 ✗2)" "[0-9]/[0-9]+✗"
node details
keys Enter
keys 5
wait_for "status +time" 5 || true
row=$(screen | grep -E "│ +[0-9]+ +[✓✗] " | head -1 | sed 's/.*││//')
n_table=$(first_number "$row")
keys Enter
wait_for "iteration [0-9]+ +Esc" 5 || true
n_open=$(first_number "$(screen | grep -oE "iteration [0-9]+ +Esc" | head -1)")
keys Escape
keys 6
wait_for "iteration [0-9]+/4" 5 || true
n_raw=$(first_number "$(screen | grep -oE "iteration [0-9]+/4" | head -1)")
# What the server sent for each iteration, not a note in its place.
keys /
keys -l "recorded as the iteration"
keys Enter
wait_for "/recorded as the iteration +(no match|match)" 5 || true
check "item 17: Raw of a fan-out iteration is the wire response (no recorded output in its place)" "/recorded as the iteration +no match"
keys Escape
keys Escape
keys T
wait_for "timeline" 5 || true
tl=$(screen | grep -A1 -E "details +[█▬]" | tail -1 | sed 's/.*││//')
n_timeline=$(first_number "$tl")
if [ -n "$n_table" ] && [ "$n_table" = "$n_open" ] && [ "$n_table" = "$n_raw" ] && [ "$n_table" = "$n_timeline" ]; then
  pass "item 17: the first iteration has one number everywhere ($n_table)"
else
  echo "FAIL - item 17: the first iteration has one number everywhere (table ${n_table:-?}, opened ${n_open:-?}, Raw ${n_raw:-?}/4, timeline ${n_timeline:-?})"
  failed=$((failed + 1))
fi
absent "item 17: the timeline's axis says seconds as the rest does (not 1511ms)" "[0-9]{4,}ms"
keys T
quit

# ---- 1 node ----------------------------------------------------------------
open 100x30 one.yml
wait_for "IDLE" 20 || true
check "setup: the DAG title counts the nodes" "DAG pipe · 1 node"
absent "item 17: 1 node, not 1 nodes" "1 nodes"
quit

# ---- The help at 80x24; the cursor in EDIT -------------------------------
open 80x24 fan.yml
wait_for "IDLE" 20 || true
keys "?"
wait_for "OVERLAY HELP" 5 || true
# The help box's rows (the only ones 40 or more wide at 80 columns), joined.
if screen | grep -oE "│[^│]{40,}│" | sed 's/│//g' | tr '\n' ' ' | tr -s ' ' | grep -q "in the editor they are text\."; then
  pass "item 17: the 80x24 help wraps its text (the intro's end shows)"
else
  fail "item 17: the 80x24 help wraps its text (the intro's end shows)"
fi
keys Escape
keys i
wait_for "^ EDIT " 5 || true
if [ "$(tmux -L "$SOCK" display -p -t e2e '#{cursor_flag}')" = 1 ]; then
  pass "item 17: EDIT shows the terminal's cursor"
else
  fail "item 17: EDIT shows the terminal's cursor" "tmux says cursor_flag=0"
fi
keys Escape
# g and G: the DAG's first and last node.
node ids
keys G
check "item 17: G selects the DAG's last node" "┌ last ─"
node last
keys g
check "item 17: g selects the DAG's first node" "┌ ids ─"
quit
if grep -qE "h j k l|hjkl|\`h\`.*\`j\`.*\`k\`.*\`l\`" "$ROOT/docs/src/workbench.md"; then
  pass "item 17: the book documents hjkl in the DAG"
else
  echo "FAIL - item 17: the book documents hjkl in the DAG (docs/src/workbench.md)"; failed=$((failed + 1))
fi

# ---- needs: for ordering only ------------------------------------------------
open 100x30 order.yml
wait_for "IDLE" 20 || true
check "setup: the file loads" "DAG c · 5 nodes"
absent_row "item 17: needs: used only for ordering does not warn on every entry" status_row "([2-9]|[0-9]{2,}) warning"
quit

summary
