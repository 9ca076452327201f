#!/usr/bin/env bash
# Issue 48, the items about a server's questions (5, 8, 12, 13): the real
# binary in tmux, the demo server's asking tools (examples/ask.yml) and a
# small stdio server written here whose form has three rules.
#
#   5. the URL question's footer offers `o open` and `y copy link`, not the
#      form's keys;
#   8. each answer is logged once in Messages;
#  12. Ctrl-U clears a form's field; a form reports every field's problem
#      at once (the minimum and the length with the email's format);
#  13. Ctrl-G with no sampling provider says so where it can be read at
#      80x24.
# Until the fixes land these checks fail: that is the defect they show.
# Needs tmux and python3; .ci/run installs tmux when missing.
#
#   PIPEWRIGHT_BIN=target/debug/pipewright bash tests/tui_e2e_review_ask.sh
set -euo pipefail
NAME=tui_e2e_review_ask
# shellcheck source=tests/tmux_lib.sh
source "$(dirname "$0")/tmux_lib.sh"
# shellcheck source=tests/tui_e2e_review_lib.sh
source "$(dirname "$0")/tui_e2e_review_lib.sh"

cat > "$WORK/form_server.py" <<'PY'
# A stdio MCP server (no SDK) with one tool, `register`, that asks the
# client for a form whose three fields each have a rule: an email format,
# an integer minimum and a string minimum length; it returns the answer.
import json
import sys

SCHEMA = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "format": "email", "title": "Email"},
        "age": {"type": "integer", "minimum": 18, "title": "Age"},
        "code": {"type": "string", "minLength": 4, "title": "Code"},
    },
    "required": ["email", "age", "code"],
}


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def read():
    line = sys.stdin.readline()
    return json.loads(line) if line else None


pending = []  # requests that arrived while waiting for the form's answer


def handle(msg):
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        return
    if method == "initialize":
        version = msg["params"].get("protocolVersion", "2025-11-25")
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "forms", "version": "1.0.0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{
            "name": "register",
            "description": "Ask for an email, an age and a code in one form.",
            "inputSchema": {"type": "object", "properties": {}}}]}})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": "ask-1", "method": "elicitation/create",
              "params": {"mode": "form", "message": "Register", "requestedSchema": SCHEMA}})
        while True:
            reply = read()
            if reply is None:
                return
            if reply.get("id") == "ask-1" and "method" not in reply:
                break
            pending.append(reply)
        answer = reply.get("result", {})
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "content": [{"type": "text", "text": json.dumps(answer)}], "isError": False}})
    else:
        if method in ("ping", "logging/setLevel"):
            send({"jsonrpc": "2.0", "id": mid, "result": {}})
        else:
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no " + str(method)}})


while True:
    msg = pending.pop(0) if pending else read()
    if msg is None:
        break
    handle(msg)
PY
cat > "$WORK/form.yml" <<'YAML'
servers:
  forms:
    command: python3
    args: [form_server.py]
pipe:
  - id: who
    server: forms
    tool: register
YAML

# ---- The demo server's three questions (examples/ask.yml) ---------------
open 120x40 ask.yml
wait_for "IDLE" 20 || true
keys F5
wait_for "demo asks · node confirm" 30 || true
check "setup: the form opens for node confirm" "demo asks · node confirm"
keys -l "Ada"
check "setup: typing fills the first field" "Sign as +Ada"
keys C-u
absent "item 12: Ctrl-U clears the field" "Sign as +Ada"
keys BSpace BSpace BSpace
keys -l "Ada"
keys Enter
wait_for "open a link" 20 || true
check "setup: the URL question opens for node connect" "asks you to open a link · node connect"
check_row "item 5: the URL question's footer offers o open" footer_row "o open"
check_row "item 5: the URL question's footer offers y copy link" footer_row "y copy link"
keys Enter
wait_for "model reply" 20 || true
check "setup: the sampling question opens for node draft" "asks for a model reply · node draft"
keys -l "Hi Ada"
keys C-s
run_ends
check "setup: the run ends 4/4 ok" "DONE COMPLETED .*4/4 ok"
keys m
wait_for "Messages \(" 5 || true
n=$(screen | grep -cE "[0-9]{2}:[0-9]{2}:[0-9]{2} . confirm: .*answered" || true)
if [ "$n" -eq 1 ]; then
  pass "item 8: the form's answer is logged once"
else
  fail "item 8: the form's answer is logged once" "$n lines say confirm's answer"
fi
n=$(screen | grep -cE "[0-9]{2}:[0-9]{2}:[0-9]{2} . draft: .*answered" || true)
if [ "$n" -eq 1 ]; then
  pass "item 8: the model reply is logged once"
else
  fail "item 8: the model reply is logged once" "$n lines say draft's answer"
fi
keys Escape
quit

# ---- 13. Ctrl-G with no provider, at 80x24 -------------------------------
# (At 120x40 the modal has the room for its own error line; at 80x24 it
# is cut off and nothing else says it.)
open 80x24 ask.yml
wait_for "IDLE" 20 || true
keys F5
wait_for "node confirm" 30 || true
keys -l "Ada"
keys Enter
wait_for "node connect" 20 || true
keys Enter
wait_for "node draft" 20 || true
check "setup: the sampling question opens for node draft" "model reply · node draft"
keys C-g
sleep 0.5
if screen | head -n -1 | grep -qE "[Pp]rovider"; then
  pass "item 13: Ctrl-G with no provider says so (80x24)"
else
  fail "item 13: Ctrl-G with no provider says so (80x24)" "nothing but the footer names a provider"
fi
keys C-c
run_ends
quit

# ---- A form with three rules ---------------------------------------------
open 100x30 form.yml
wait_for "IDLE" 20 || true
keys F5
wait_for "forms asks · node who" 30 || true
check "setup: the form opens for node who" "forms asks · node who"
# Every field breaks its rule: not an email, under the minimum, too short.
keys -l "not-an-email"
keys Tab
keys -l "3"
keys Tab
keys -l "ab"
keys Enter
check "setup: the email's format is reported" "must be an email"
check "item 12: the age's minimum is reported with it" "minimum|less than 18|at least 18|18 or more"
check "item 12: the code's length is reported with it" "shorter than 4|at least 4|4 characters|fewer than 4"
keys C-c
run_ends
quit

summary
