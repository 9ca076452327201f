"""The generic conformance client's plan: which tools to call, with what.

client.sh runs `pipewright tools list --json` against the scenario server,
then this writes a pipeline with one node per call and an answers file:

- the calls the scenario's context names (`toolCalls: [{name, arguments}]`),
  in that order (a null argument left out), or else
- every tool the server lists (as pipewright kept them), each with
  arguments made from its input schema: every required property gets a
  value of its type (its default, its first enum value, or a plain one);
- nothing, when there is no tool to call (no file is written).

Usage: calls.py TOOLS_JSON CONTEXT_JSON URL PIPELINE_OUT ANSWERS_OUT
"""

import json
import sys


def value_for(schema, defs, depth=0):
    if not isinstance(schema, dict) or depth > 8:
        return "test"
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return value_for(defs.get(ref[len("#/$defs/"):], {}), defs, depth + 1)
    if "default" in schema:
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object":
        return arguments_for(schema, defs, depth + 1)
    return {"integer": 1, "number": 1, "boolean": True, "array": [], "null": None}.get(kind, "test")


def arguments_for(schema, defs, depth=0):
    props = schema.get("properties") or {}
    return {
        name: value_for(props.get(name, {}), defs, depth)
        for name in schema.get("required") or []
    }


def main():
    tools_json, context, url, pipeline_out, answers_out = sys.argv[1:6]
    listed = json.load(open(tools_json))
    tools = [t for server in listed.values() for t in server.get("tools", [])]
    named = json.loads(context or "{}").get("toolCalls")
    if named:
        # A null argument is one not given: pipewright checks arguments
        # against the tool's input schema before calling, and a null is
        # not a boolean or a string.
        calls = [
            (c["name"], {k: v for k, v in (c.get("arguments") or {}).items() if v is not None})
            for c in named
        ]
    else:
        calls = []
        for tool in tools:
            schema = tool.get("inputSchema") or {}
            calls.append((tool["name"], arguments_for(schema, schema.get("$defs") or {})))
    if not calls:
        # Nothing to call: listing the tools was the whole exchange.
        return
    lines = ["servers:", "  s:", f"    url: {json.dumps(url)}", "pipe:"]
    for n, (name, args) in enumerate(calls, 1):
        lines += [f"  - id: call{n}", "    server: s", f"    tool: {json.dumps(name)}",
                  f"    args: {json.dumps(args, ensure_ascii=False)}"]
    open(pipeline_out, "w").write("\n".join(lines) + "\n")
    open(answers_out, "w").write('"*":\n' + "".join("  - accept\n" for _ in range(16)))


main()
