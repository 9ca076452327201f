#!/usr/bin/env bash
# The client under test for the official MCP conformance suite: the runner
# starts a test server per scenario and runs `client.sh SERVER_URL` with
# MCP_CONFORMANCE_SCENARIO (and, for some, MCP_CONFORMANCE_CONTEXT, JSON)
# set. Each scenario becomes the pipewright command a user would type:
# `tools list`, or `run` of a one-node pipeline file declaring the server
# (with its `auth:` block for the auth scenarios), answers from an
# `--answers` file for elicitation.
#
# PIPEWRIGHT_BIN: the binary (default target/debug/pipewright).
set -euo pipefail

url="${1:?usage: client.sh SERVER_URL}"
scenario="${MCP_CONFORMANCE_SCENARIO:?MCP_CONFORMANCE_SCENARIO is not set}"
context="${MCP_CONFORMANCE_CONTEXT:-}"
[ -n "$context" ] || context='{}'

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${PIPEWRIGHT_BIN:-$root/target/debug/pipewright}"

# Every directory pipewright reads or writes lives in a fresh temp dir.
work="$(mktemp -d "${TMPDIR:-/tmp}/pw-conformance.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/data" "$work/config" "$work/home" "$work/bin"
export PIPEWRIGHT_DATA_DIR="$work/data" PIPEWRIGHT_CONFIG_DIR="$work/config"
export HOME="$work/home" XDG_DATA_HOME="$work/home/.local/share"
export XDG_CONFIG_HOME="$work/home/.config" XDG_STATE_HOME="$work/home/.local/state"
export XDG_CACHE_HOME="$work/home/.cache"
unset PIPEWRIGHT_LOG_LEVEL PIPEWRIGHT_AUTH_PROMPT PIPEWRIGHT_PROTOCOL
# The suite's next line says which revision's wire the scenario server
# speaks (0.1.16 says nothing: pipewright's default, `auto`).
[ -z "${MCP_CONFORMANCE_PROTOCOL_VERSION:-}" ] || export PIPEWRIGHT_PROTOCOL="$MCP_CONFORMANCE_PROTOCOL_VERSION"

# One field of the context JSON ("" when absent).
ctx() {
  python3 -c 'import json,sys; v=json.loads(sys.argv[1]).get(sys.argv[2]); print("" if v is None else v)' \
    "$context" "$1"
}

# A pipeline file with the one HTTP server `s` (and its `auth:` block, in
# $auth, when the scenario has one) and one node calling TOOL with ARGS.
auth=""
pipeline() {
  local args="${2:-}"
  [ -n "$args" ] || args='{}'
  {
    printf 'servers:\n  s:\n    url: "%s"\n' "$url"
    [ -z "$auth" ] || printf '    auth:\n%s\n' "$auth"
    printf 'pipe:\n  - id: call\n    server: s\n    tool: %s\n    args: %s\n' "$1" "$args"
  } >"$work/pipeline.yml"
}

# Each command is bounded, so a client the runner gives up on (30 s) leaves
# no pipewright behind waiting for a login.
run() {
  echo "+ pipewright $*" >&2
  timeout 25 "$bin" "$@"
}

case "$scenario" in
  initialize)
    # The handshake (and the tool list every connection reads).
    run tools list --url "$url"
    ;;
  tools_call)
    pipeline add_numbers '{a: 5, b: 3}'
    run run "$work/pipeline.yml" --no-save
    ;;
  sse-retry)
    # The server closes the call's SSE stream after a priming event with
    # `retry: 500`; the answer comes on the GET stream the client reopens.
    pipeline test_reconnection
    run run "$work/pipeline.yml" --no-save --timeout 20s
    ;;
  elicitation-sep1034-client-defaults)
    # The form's fields all have defaults: a bare `accept` takes them all.
    printf 'call:\n  - accept\n' >"$work/answers.yml"
    pipeline test_client_elicitation_defaults
    run run "$work/pipeline.yml" --no-save --answers "$work/answers.yml"
    ;;
  json-schema-ref-no-deref)
    # The scenario server answers tools/list only: the check is what the
    # client does with a `$ref` to a network URI in a listed schema.
    run tools list --url "$url" --json >/dev/null
    ;;
  json-schema-2020-12-preservation)
    # The scenario's one call: the focal tool's inputSchema, as pipewright
    # read it from tools/list, echoed back as `schema`.
    run tools list --url "$url" --json >"$work/tools.json"
    schema="$(python3 -c 'import json,sys
tools = [t for s in json.load(open(sys.argv[1])).values() for t in s["tools"]]
print(json.dumps(next(t["inputSchema"] for t in tools if t["name"] == "json_schema_2020_12_tool")))' "$work/tools.json")"
    run tools call json_schema_echo --url "$url" --args "{\"schema\": $schema}"
    ;;
  auth/*)
    # The authorization URL is "opened" by following its redirects with
    # curl, which lands the code on pipewright's loopback listener. Like a
    # browser launcher, it returns at once and leaves curl to it.
    cat >"$work/bin/open-url" <<'EOF'
#!/bin/sh
curl -sSL --max-time 20 -o /dev/null "$1" >/dev/null 2>&1 &
EOF
    chmod +x "$work/bin/open-url"
    ln -s open-url "$work/bin/xdg-open"
    export PATH="$work/bin:$PATH" BROWSER="$work/bin/open-url"
    export PIPEWRIGHT_AUTH_PROMPT=browser
    # What the scenario's context says maps onto the server's `auth:`
    # block; secrets come from the environment, as the file format wants.
    export CONFORMANCE_CLIENT_SECRET CONFORMANCE_PRIVATE_KEY
    CONFORMANCE_CLIENT_SECRET="$(ctx client_secret)"
    CONFORMANCE_PRIVATE_KEY="$(ctx private_key_pem)"
    client_id="$(ctx client_id)"
    case "$scenario" in
      auth/client-credentials-basic)
        # A machine client: no browser, client_secret_basic.
        auth="      client_id: \"$client_id\"
      client_secret: \"\${env.CONFORMANCE_CLIENT_SECRET}\"
      grant: client_credentials"
        ;;
      auth/client-credentials-jwt)
        # A machine client signing a private_key_jwt assertion.
        auth="      client_id: \"$client_id\"
      private_key: \"\${env.CONFORMANCE_PRIVATE_KEY}\"
      grant: client_credentials"
        ;;
      auth/pre-registration)
        # No dynamic registration: the pre-registered confidential client.
        auth="      client_id: \"$client_id\"
      client_secret: \"\${env.CONFORMANCE_CLIENT_SECRET}\""
        ;;
      auth/wif-jwt-bearer)
        # Workload identity: the platform's JWT in a token file (as a
        # Kubernetes projected token or a CI runner's is), read afresh for
        # each token request; a public client, no secret.
        (umask 077 && ctx valid_jwt >"$work/workload-token")
        auth="      grant: jwt_bearer
      client_id: \"$client_id\"
      assertion:
        file: \"$work/workload-token\""
        ;;
      auth/enterprise-managed-authorization | auth/cross-app-access-complete-flow)
        # Enterprise-managed authorization: the user's ID token from the
        # enterprise IdP, traded there for an ID-JAG, which the MCP
        # server's authorization server takes with the client's secret.
        # The next line's scenario names the IdP's token endpoint; the
        # 0.1.16 one is found from the IdP's issuer.
        export CONFORMANCE_ID_TOKEN
        CONFORMANCE_ID_TOKEN="$(ctx idp_id_token)"
        if [ "$scenario" = auth/cross-app-access-complete-flow ]; then
          idp="        issuer: \"$(ctx idp_issuer)\""
        else
          idp="        token_endpoint: \"$(ctx idp_token_endpoint)\""
        fi
        auth="      grant: id_jag
      client_id: \"$client_id\"
      client_secret: \"\${env.CONFORMANCE_CLIENT_SECRET}\"
      identity_provider:
$idp
        client_id: \"$(ctx idp_client_id)\"
        id_token: \"\${env.CONFORMANCE_ID_TOKEN}\""
        ;;
      auth/dpop | auth/dpop-nonce)
        # Tokens bound to a proof key (RFC 9449): the authorization server
        # lists ES256, so `auto` would bind them too; `required` says the
        # run must not fall back to bearer tokens. The -nonce variant's
        # servers refuse proofs without their nonce once each.
        auth="      dpop: required"
        ;;
      auth/basic-cimd)
        # The Client ID Metadata Document the suite expects a client to
        # name (the everything-client's URL; the suite fetches nothing).
        auth="      client_id_url: https://conformance-test.local/client-metadata.json"
        ;;
    esac
    pipeline test-tool
    # The run logs in on the server's 401 (and again on a 403 asking for
    # more scope), as `auth:` says, then calls the tool.
    run run "$work/pipeline.yml" --no-save --timeout 20s
    ;;
  *)
    # Every other scenario, by one generic rule: the tool calls the
    # scenario's context names (`toolCalls`), or else every tool the server
    # lists, each called once, in one `run` of a pipeline with a node per
    # call, questions answered `accept` (a form takes its defaults).
    run tools list --url "$url" --json >"$work/tools.json"
    python3 "$here/calls.py" "$work/tools.json" "$context" "$url" \
      "$work/pipeline.yml" "$work/answers.yml"
    [ ! -f "$work/pipeline.yml" ] ||
      run run "$work/pipeline.yml" --no-save --timeout 20s --answers "$work/answers.yml"
    ;;
esac
