#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance)
# against pipewright, with no expected-failures list: every scenario below
# must pass. Two lines of the suite, both pinned in
# tests/conformance/package-lock.json with the Node.js 22 they need:
#
#   npm ci --prefix tests/conformance && cargo build && tests/conformance/run.sh
#
# 0.1.16 (node_modules/@modelcontextprotocol/conformance):
# - Client scenarios: the suite starts a test server per scenario and runs
#   tests/conformance/client.sh, which drives pipewright as a user would.
#   Run: every scenario of spec versions 2025-03-26 .. 2025-11-25, and
#   every extension (client credentials, cross-app access); not `draft`.
# - Server scenarios: against `pipewright serve --http` serving an example
#   pipeline; the ones that test the protocol rather than the suite's own
#   test tools, prompts and resources.
#
# 0.2.0-alpha.12 (node_modules/conformance-next), at the 2026-07-28 wire:
# - Client scenarios: every one the frozen `--requirements 2026-07-28` set
#   lists, and every one it runs unscored (the auth extensions: DPoP,
#   enterprise-managed authorization, workload identity; those added after
#   the release); client.sh again (its generic driver makes the calls).
# - Server scenarios: every one of the set, and every one it runs unscored
#   (the tasks extension, `pending`), against `pipewright demo-server
#   --http`, which carries the suite's fixture tools, resources and
#   prompts; and against `serve --http` the ones a pipeline server can
#   answer (the rest call those fixtures).
#   Unscored is the suite's word, not ours: each one here must pass.
#
# CONFORMANCE_RECORD=1: the server scenarios of both lines only, each
# server behind `pipewright record --http` (what a client reaches is the
# recorder, which must be transparent); the sessions it keeps go to
# $CONFORMANCE_OUT/recordings.
#
# Prints one line per scenario (PASS, FAIL, or EMPTY for one whose every
# check the suite itself skips; line, role, name, checks passed) and a
# summary; exits 1 when any failed.
# PIPEWRIGHT_BIN: the binary (default target/debug/pipewright; nothing is
# built here). CONFORMANCE_JOBS: scenarios run at once (default 3).
# CONFORMANCE_OUT: where results go (default target/conformance).
# Arguments, if any: only the scenarios named (in whichever line has them).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${PIPEWRIGHT_BIN:-$root/target/debug/pipewright}"
node="$here/node_modules/.bin/node"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
next="$here/node_modules/conformance-next/dist/index.js"
out="${CONFORMANCE_OUT:-$root/target/conformance}"
jobs="${CONFORMANCE_JOBS:-3}"
# The requirement set the next line runs, and the wire it runs it at.
revision=2026-07-28

[ -x "$bin" ] || { echo "run.sh: no pipewright binary at $bin (cargo build first, or set PIPEWRIGHT_BIN)" >&2; exit 2; }
[ -f "$suite" ] && [ -f "$next" ] || { echo "run.sh: the suite is not installed: npm ci --prefix tests/conformance" >&2; exit 2; }
case "$("$node" --version 2>/dev/null)" in
  v22.*) ;;
  *) echo "run.sh: $node is not Node.js 22 (npm ci --prefix tests/conformance; the \`node\` package's install script must run)" >&2; exit 2 ;;
esac
for tool in python3 curl timeout; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is needed (client.sh and the report use it)" >&2; exit 2; }
done
export PIPEWRIGHT_BIN="$bin"

# Every scenario to run, one entry each: LINE TARGET NAME. LINE is `0.1.16`
# or `next`; TARGET is what is under test: `client` (pipewright as a
# client, through client.sh), `serve` (`serve --http`) or `demo`
# (`demo-server --http`).
entries=()

# 0.1.16, client: read from the suite's own list (`name [versions]`).
while read -r name; do
  entries+=("0.1.16 client $name")
done < <("$node" "$suite" list | awk '
  /^Client scenarios/ { client = 1; next }
  /^[A-Z]/ { client = 0 }
  client && /^ *- / {
    name = $2
    if ($0 ~ /2025-03-26|2025-06-18|2025-11-25|extension/) print name
  }')
# 0.1.16, server: the ones that apply to `serve --http`. The rest call the
# suite's own fixtures (test_simple_text, prompts/get, resources/read …),
# which a pipeline server does not have.
for name in server-initialize ping tools-list logging-set-level \
  server-sse-multiple-streams server-sse-polling dns-rebinding-protection; do
  entries+=("0.1.16 serve $name")
done

# next: the frozen requirement set as the suite lists it: its client and
# server scenarios, and every one it runs unscored (each group of those is
# a `kind (N):` line, each row `- name [client|server]`).
while read -r role name; do
  case "$role" in
    client) entries+=("next client $name") ;;
    server) entries+=("next demo $name") ;;
  esac
done < <("$node" "$next" list --requirements "$revision" | awk '
  /^Server scenarios/ { role = "server"; next }
  /^Client scenarios/ { role = "client"; next }
  /^ +[a-z-]+ \([0-9]+\):/ { role = "unscored"; next }
  /^[A-Z]/ { role = "" }
  (role == "server" || role == "client") && /^ *- / { print role, $2 }
  role == "unscored" && /^ *- .*\[client\]/ { print "client", $2 }
  role == "unscored" && /^ *- .*\[server\]/ { print "server", $2 }')
# next, against `serve --http`: the server scenarios a pipeline server can
# answer. The others call the suite's fixtures (tools-call-*, resources-*,
# prompts-*, completion-complete, input-required-result-* but one) or, in
# server-stateless, its diagnostic tools (test_missing_capability,
# test_streaming_elicitation, test_logging_tool); the demo server, on the
# same rmcp Streamable HTTP server, answers every one of them. Of the
# `pending` ones, json-schema-2020-12 and http-custom-header-server-validation
# need a fixture tool's schema (a served tool's arguments are the `${var.X}`
# its pipeline reads, with no header-mapped ones).
for name in tools-list server-sse-multiple-streams dns-rebinding-protection \
  caching input-required-result-unsupported-methods http-header-validation; do
  entries+=("next serve $name")
done

# A failed or changed `list` must not turn into a green run of nothing.
count() { local n=0 e; for e in "${entries[@]}"; do [[ "$e" == "$1 "* ]] && n=$((n + 1)); done; echo "$n"; }
if [ "$(count "0.1.16 client")" -lt 23 ] || [ "$(count "next client")" -lt 39 ] ||
  [ "$(count "next demo")" -lt 50 ]; then
  echo "run.sh: the suites listed $(count "0.1.16 client") / $(count "next client") client and $(count "next demo") server scenarios (expected 23 / 39 / 50); is their \`list\` output still the same?" >&2
  exit 2
fi

# Through the recorder: the server scenarios only.
record="${CONFORMANCE_RECORD:-0}"
if [ "$record" = 1 ]; then
  kept=()
  for e in "${entries[@]}"; do [[ "$e" == *" client "* ]] || kept+=("$e"); done
  entries=("${kept[@]}")
fi

if [ $# -gt 0 ]; then
  wanted=" $* " kept=()
  for e in "${entries[@]}"; do [[ "$wanted" == *" ${e##* } "* ]] && kept+=("$e"); done
  [ ${#kept[@]} -gt 0 ] || { echo "run.sh: no such scenario: $*" >&2; exit 2; }
  entries=("${kept[@]}")
fi

rm -rf "$out"
mkdir -p "$out/lines"
work="$(mktemp -d "${TMPDIR:-/tmp}/pw-conformance-run.XXXXXX")"
server_pids=()
cleanup() {
  # Scenarios still running (after Ctrl-C or an error) go too.
  local running pid
  running="$(jobs -p)"
  [ -z "$running" ] || kill $running 2>/dev/null || true
  for pid in "${server_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

# One line for a finished scenario: PASS/FAIL, line, what was tested,
# name, checks passed, and the failed checks' messages indented below.
# $1 line, $2 target, $3 name, $4 runner exit code, $5 results dir, $6 log.
# A scenario of a batch run (the whole requirement set in one runner) has
# `batch` for its exit code: its verdict is the runner's own ✓/✗ line for
# it in the log, its checks those of its dir in the batch's results.
verdict() {
  python3 - "$@" <<'PY'
import glob, json, os, re, sys
line, target, name, rc, res, log = sys.argv[1:7]
if rc == "batch":
    # A scenario's line is `✓ NAME: …`; an unscored one is said again in
    # the runner's "Not scored" lists, as `  ✓ NAME (extension)`. Every
    # time it is said, it must be a pass.
    said = re.findall(r"^ *([✓✗]) " + re.escape(name) + r"(?:: | \()", open(log).read(), re.M)
    rc = "no verdict" if not said else ("0" if set(said) == {"✓"} else "1")
    # Client results are in NAME-TIME, server results in server-NAME-TIME.
    files = [f for prefix in ("", "server-")
             for f in glob.glob(os.path.join(res, prefix + glob.escape(name) + "-2*", "checks.json"))]
else:
    files = glob.glob(os.path.join(res, "**", "checks.json"), recursive=True)
checks = []
for f in files:
    try:
        checks += json.load(open(f))
    except (OSError, ValueError):
        pass
counted = [c for c in checks if c.get("status") in ("SUCCESS", "FAILURE", "WARNING")]
failed = [c for c in counted if c.get("status") == "FAILURE"]
passed = [c for c in counted if c.get("status") == "SUCCESS"]
ok = rc == "0" and not failed and passed
# A scenario the suite runs but whose every check it skips itself (its
# harness not yet written for the wire): nothing to pass or fail. Said as
# EMPTY with the suite's reason, and not counted either way.
# Only a check that is the scenario's own placeholder (its id the
# scenario's name) counts: a scenario whose real checks turn inapplicable
# still fails.
skipped = [c for c in checks if c.get("status") == "SKIPPED"]
if rc == "0" and not counted and skipped and all(c.get("id") == name for c in skipped):
    reason = (skipped[0].get("errorMessage") or skipped[0].get("description") or "").replace("\n", " ")
    print(f"EMPTY {line:<6} {target:<6} {name:<46} 0/0 checks; the suite skips all {len(skipped)}")
    print(f"        {skipped[0].get('id')}: {reason[:200]}")
    sys.exit(0)
print(f"{'PASS' if ok else 'FAIL'}  {line:<6} {target:<6} {name:<46} {len(passed)}/{len(counted)} checks")
if not ok:
    for c in (failed + [c for c in counted if c.get("status") == "WARNING"])[:4]:
        msg = (c.get("errorMessage") or c.get("description") or "").replace("\n", " ")
        print(f"        {c.get('id')}: {msg[:200]}")
    if not counted:
        print(f"        no checks recorded (runner exit {rc}); see {log}")
PY
}

# Starts a pipewright server in the background with every directory it
# reads in the run's temp dir, and sets $url once it listens. $1 a name for
# its dir and log, then the command's arguments.
url=""
start_server() {
  local name="$1" log="$out/$1.log" pid
  shift
  mkdir -p "$work/$name/data" "$work/$name/config"
  PIPEWRIGHT_DATA_DIR="$work/$name/data" PIPEWRIGHT_CONFIG_DIR="$work/$name/config" \
    HOME="$work/$name" XDG_DATA_HOME="$work/$name/xdg-data" XDG_CONFIG_HOME="$work/$name/xdg-config" \
    XDG_STATE_HOME="$work/$name/xdg-state" XDG_CACHE_HOME="$work/$name/xdg-cache" \
    "$bin" "$@" >"$log" 2>&1 &
  pid=$!
  server_pids+=("$pid")
  url=""
  for _ in $(seq 100); do
    url="$(grep -o 'listening on http://[^ ]*' "$log" 2>/dev/null | cut -d' ' -f3)" || true
    [ -z "$url" ] || return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "run.sh: $name did not start; see $log" >&2
  exit 2
}

# Whether any scenario tests target $1.
tests() { local e t; for e in "${entries[@]}"; do read -r _ t _ <<<"$e"; [ "$t" != "$1" ] || return 0; done; return 1; }
# With CONFORMANCE_RECORD=1, a recorder in front of the server named $1
# (at $url), and $url the recorder's.
behind_recorder() {
  [ "$record" = 1 ] || return 0
  start_server "record-$1" record --http 127.0.0.1:0 --to "$url" --out "$out/recordings/$1"
}
serve_url="" demo_url=""
if tests serve; then
  start_server serve serve --http 127.0.0.1:0 --no-save "$root/examples/search-then-update.yml"
  behind_recorder serve
  serve_url="$url"
fi
if tests demo; then
  start_server demo demo-server --http 127.0.0.1:0 --conformance-fixtures
  behind_recorder demo
  demo_url="$url"
fi

# One scenario. $1 line, $2 target, $3 name, $4 its place in the list.
one() {
  local line="$1" target="$2" name="$3" runner="$suite" wire=() rc=0
  local slug="${name//\//-}"
  local res="$out/$line/$target/$slug" log="$out/$line/$target/$slug.log"
  mkdir -p "$res"
  # --force: an extension scenario named alone is otherwise skipped as
  # being on no revision's timeline.
  if [ "$line" = next ]; then runner="$next" wire=(--spec-version "$revision" --force); fi
  case "$target" in
    client) "$node" "$runner" client --command "$here/client.sh" --scenario "$name" \
      "${wire[@]}" --timeout 30000 -o "$res" >"$log" 2>&1 || rc=$? ;;
    serve) "$node" "$runner" server --url "$serve_url" --scenario "$name" \
      "${wire[@]}" -o "$res" >"$log" 2>&1 || rc=$? ;;
    demo) "$node" "$runner" server --url "$demo_url" --scenario "$name" \
      "${wire[@]}" -o "$res" >"$log" 2>&1 || rc=$? ;;
  esac
  verdict "$line" "$target" "$name" "$rc" "$res" "$log" >"$out/lines/$(printf '%04d' "$4")"
}

# The next line's whole requirement set, client or server side, in one
# runner (the suite runs its scenarios side by side): far quicker than a
# runner per scenario. Also runs what the set leaves unscored (extensions,
# pending), each held to the same bar as the rest.
# $1 target (client or demo).
batch() {
  local dir="$out/next/$1-batch" log="$out/next/$1-batch.log"
  mkdir -p "$dir"
  case "$1" in
    client) "$node" "$next" client --command "$here/client.sh" --requirements "$revision" \
      --timeout 30000 -o "$dir" >"$log" 2>&1 || true ;;
    demo) "$node" "$next" server --url "$demo_url" --requirements "$revision" \
      -o "$dir" >"$log" 2>&1 || true ;;
  esac
}
# A whole run batches the next line's client and demo-server scenarios;
# a run of named scenarios runs each one alone.
batched=0
[ $# -gt 0 ] || batched=1

# Every scenario, a few at a time; lines print in list order.
start=$(date +%s)
running=0 n=0
pool() {
  "$@" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
}
if [ "$batched" = 1 ]; then
  [ "$record" = 1 ] || pool batch client
  pool batch demo
fi
for e in "${entries[@]}"; do
  n=$((n + 1))
  read -r line target name <<<"$e"
  if [ "$batched" = 1 ] && [ "$line" = next ] && [ "$target" != serve ]; then continue; fi
  pool one "$line" "$target" "$name" "$n"
done
# The servers run on: wait for the scenarios only.
for pid in $(jobs -p); do
  case " ${server_pids[*]} " in *" $pid "*) ;; *) wait "$pid" || true ;; esac
done
if [ "$batched" = 1 ]; then
  n=0
  for e in "${entries[@]}"; do
    n=$((n + 1))
    read -r line target name <<<"$e"
    [ "$line" = next ] && [ "$target" != serve ] || continue
    verdict "$line" "$target" "$name" batch "$out/next/$target-batch" \
      "$out/next/$target-batch.log" >"$out/lines/$(printf '%04d' "$n")"
  done
fi

pass=0 fail=0 empty=0
for f in "$out"/lines/*; do
  cat "$f"
  case "$(head -c5 "$f")" in
    PASS*) pass=$((pass + 1)) ;;
    EMPTY) empty=$((empty + 1)) ;;
    *) fail=$((fail + 1)) ;;
  esac
done
said=""
[ "$empty" -eq 0 ] || said=", $empty with every check skipped by the suite itself"
echo "conformance: $pass passed, $fail failed$said ($(( $(date +%s) - start ))s; logs in $out)"
if [ "$batched" = 1 ]; then
  # What the next line's runner calls unscored (each is counted above too).
  for target in client demo; do
    [ -f "$out/next/$target-batch.log" ] || continue
    sed -n '/^Not scored for/,/^$/p' "$out/next/$target-batch.log" | sed "s/^/  ($target) /"
  done
fi
[ "$fail" -eq 0 ]
