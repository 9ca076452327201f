"""Drives `pipewright lsp` with a real LSP client (pygls's LanguageClient)
over stdio, the way an editor does, and checks what comes back: the
diagnostics for a typo'd tool with its did-you-mean and the quick fix,
completion, hover, go to definition, references, rename and the outline,
and that bad requests get errors, not a dead server.

Usage: client.py PIPEWRIGHT_BINARY. Prints `ok: <check>` per check; exits
0 when all pass, 1 on the first failure, 3 when pygls is not installed.
Every wait is for an event, bounded by a timeout; nothing sleeps.
"""

import asyncio
import os
import subprocess
import sys
import tempfile

try:
    from lsprotocol import types as t
    from pygls.exceptions import JsonRpcException
    from pygls.lsp.client import LanguageClient
except ImportError as e:  # the Rust test decides whether this may skip
    print(f"pygls is not installed: {e}", file=sys.stderr)
    sys.exit(3)

URI = "file:///work/lookup.yml"
# Waits for anything the server does: connecting the demo server for its
# tool list is the slowest (a debug build on a busy CI machine).
TIMEOUT = 60

# Line numbers below are 0-based as LSP counts them. Line 18 puts
# characters outside the BMP (two UTF-16 units) before a reference.
TEXT = """\
vars:
  Q: carol
compositions:
  - name: lookup
    nodes:
      - id: find
        tool: search_user
        args: {query: "${var.Q}"}
      - id: details
        needs: [find]
        tool: get_user_details
        args:
          user_id: "${find.users[0].id}"
        when: ${find.users} | length > 0
      - id: mail
        needs: [find, details]
        tool: send_email
        args:
          to: "${details.email}"
          subject: "hi"
          body: "é😀 ${find.users[0].name}"
    output: details
"""
TYPO_LINE = 6
BODY_LINE = 20


def check(name, cond, detail=""):
    if not cond:
        raise AssertionError(f"{name}: {detail}")
    print(f"ok: {name}", flush=True)


def char_index(line, units):
    """The Python index of a UTF-16 offset into `line`."""
    count = 0
    for i, ch in enumerate(line):
        if count >= units:
            return i
        count += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


def apply(text, edits):
    """`text` with LSP text edits applied (UTF-16 positions)."""
    lines = text.split("\n")
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        s, end = e.range.start, e.range.end
        assert s.line == end.line, "edits stay on one line"
        line = lines[s.line]
        a, b = char_index(line, s.character), char_index(line, end.character)
        lines[s.line] = line[:a] + e.new_text + line[b:]
    return "\n".join(lines)


class Client(LanguageClient):
    def __init__(self):
        super().__init__("pipewright-test", "1")
        self.published = {}
        self.changed = asyncio.Condition()


async def until(client, uri, pred, what):
    """The first diagnostics published for `uri` that satisfy `pred`."""

    async def wait():
        async with client.changed:
            while True:
                got = client.published.get(uri)
                if got is not None and pred(got):
                    return got
                await client.changed.wait()

    try:
        return await asyncio.wait_for(wait(), TIMEOUT)
    except asyncio.TimeoutError:
        raise AssertionError(f"no diagnostics {what} within {TIMEOUT}s; last: {client.published.get(uri)}")


def pos(line, character):
    return t.Position(line=line, character=character)


def doc():
    return t.TextDocumentIdentifier(uri=URI)


async def main(binary):
    client = Client()

    @client.feature(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    async def on_diagnostics(params):
        async with client.changed:
            client.published[params.uri] = params
            client.changed.notify_all()

    @client.feature(t.WINDOW_LOG_MESSAGE)
    def on_log(params):
        print(f"server log: {params.message}", file=sys.stderr)

    await client.start_io(binary, "lsp")

    async def drain_stderr():
        while line := await client._server.stderr.readline():
            sys.stderr.write("server: " + line.decode(errors="replace"))

    stderr_task = asyncio.create_task(drain_stderr())
    try:
        await run(client)
    finally:
        if not client.stopped:
            try:
                await asyncio.wait_for(client.shutdown_async(None), TIMEOUT)
                client.exit(None)
            except Exception as e:  # the failure being reported matters more
                print(f"shutdown: {e}", file=sys.stderr)
            await asyncio.wait_for(client.stop(), TIMEOUT)
        await asyncio.wait_for(stderr_task, TIMEOUT)
    code = client._server.returncode
    check("the server exits 0 after shutdown and exit", code == 0, f"exit code {code}")


RAN = """\
pipe:
  - id: find
    tool: search_users
    args: {query: carol}
  - id: details
    tool: get_user_details
    args:
      user_id: "${find.users[0].id}"
"""


def ran_output(stdout):
    """The id `details` was called with, from `run`'s JSON output."""
    import json

    try:
        return json.loads(stdout)["nodes"]["details"]["args"]["user_id"]
    except (ValueError, KeyError, TypeError):
        return None


async def recorded(client):
    """Runs a file with `pipewright run` (its run saved in the data
    directory the test gave), then opens it: hover on a reference shows the
    value the run recorded, and completion offers the recorded fields."""
    work = tempfile.mkdtemp()
    path = os.path.join(work, "ran.yml")
    with open(path, "w") as f:
        f.write(RAN)
    ran = subprocess.run([sys.argv[1], "run", path, "--format", "json"], capture_output=True, text=True, timeout=120)
    check("the file runs and its run is saved", ran.returncode == 0, ran.stderr)
    uri = "file://" + path
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=RAN)
        )
    )
    await until(client, uri, lambda p: p.version == 1, "for the run file's marks")
    hover = await client.text_document_hover_async(
        t.HoverParams(text_document=t.TextDocumentIdentifier(uri=uri), position=pos(7, 23))
    )
    text = hover.contents.value if hover else ""
    # Carol's id in the demo directory, as the run recorded it.
    carol = ran_output(ran.stdout)
    check(
        "hover on a reference shows the value its last run recorded",
        "Last recorded value" in text and carol is not None and f'"{carol}"' in text,
        (text, ran.stdout),
    )
    typed = RAN.replace('"${find.users[0].id}"', '"${find.')
    client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[t.TextDocumentContentChangeWholeDocument(text=typed)],
        )
    )
    await until(client, uri, lambda p: p.version == 2, "for the edit")
    listed = await client.text_document_completion_async(
        t.CompletionParams(text_document=t.TextDocumentIdentifier(uri=uri), position=pos(7, 23))
    )
    items = listed.items if hasattr(listed, "items") else listed or []
    labels = {i.label for i in items}
    check("completion after `${find.` offers the recorded fields", {"users", "count"} <= labels, labels)


async def run(client):
    init = await asyncio.wait_for(
        client.initialize_async(
            t.InitializeParams(capabilities=t.ClientCapabilities(), process_id=None, root_uri=None)
        ),
        TIMEOUT,
    )
    caps = init.capabilities
    check(
        "initialize names the features",
        caps.hover_provider and caps.definition_provider and caps.completion_provider,
        caps,
    )
    client.initialized(t.InitializedParams())
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=URI, language_id="yaml", version=1, text=TEXT)
        )
    )

    # Diagnostics: the file loads; preflight's come once the demo server's
    # tool list is fetched.
    def has_typo(p):
        return any("search_users" in d.message for d in p.diagnostics)

    published = await until(client, URI, has_typo, "naming `search_users`")
    typo = next(d for d in published.diagnostics if "search_users" in d.message)
    check(
        "the typo'd tool is marked at its line and column",
        typo.range.start == pos(TYPO_LINE, 14) and typo.range.end == pos(TYPO_LINE, 25),
        typo.range,
    )
    check(
        "its message names the tool and suggests the right one",
        "search_user`" in typo.message and "did you mean `search_users`" in typo.message
        and typo.severity == t.DiagnosticSeverity.Error,
        typo.message,
    )
    check("the diagnostics carry the text's version", published.version == 1, published.version)

    # Quick fix.
    actions = await client.text_document_code_action_async(
        t.CodeActionParams(
            text_document=doc(),
            range=typo.range,
            context=t.CodeActionContext(diagnostics=[typo]),
        )
    )
    fixes = [a for a in actions or [] if isinstance(a, t.CodeAction) and "search_users" in a.title]
    check("a quick fix is offered for the typo", len(fixes) == 1, actions)
    edits = fixes[0].edit.changes[URI]
    check(
        "the quick fix replaces the wrong name",
        len(edits) == 1 and edits[0].new_text == "search_users" and edits[0].range == typo.range,
        edits,
    )

    # Completion after `tool: `.
    completion = await client.text_document_completion_async(
        t.CompletionParams(text_document=doc(), position=pos(TYPO_LINE, 14))
    )
    items = completion.items if isinstance(completion, t.CompletionList) else completion or []
    labels = {i.label for i in items}
    check(
        "completion after `tool: ` lists the demo server's tools",
        {"search_users", "get_user_details", "send_email", "delete_user"} <= labels,
        sorted(labels),
    )

    # Hover on a tool.
    hover = await client.text_document_hover_async(
        t.HoverParams(text_document=doc(), position=pos(10, 18))
    )
    text = hover.contents.value if hover else ""
    check(
        "hover on a tool shows its description and arguments",
        "get_user_details" in text and "Look up one user of the demo directory" in text
        and "user_id" in text,
        text,
    )

    # Go to definition from `${find.users[0].id}`.
    found = await client.text_document_definition_async(
        t.DefinitionParams(text_document=doc(), position=pos(12, 23))
    )
    locations = found if isinstance(found, list) else [found] if found else []
    check(
        "definition from `${find.users…}` lands on node find's id",
        len(locations) == 1 and locations[0].range == t.Range(start=pos(5, 12), end=pos(5, 16)),
        found,
    )

    # References: the id, `needs:` twice, and three `${find…}`; the one
    # after `é😀 ` at UTF-16 column 23 (22 characters in).
    refs = await client.text_document_references_async(
        t.ReferenceParams(
            text_document=doc(),
            position=pos(5, 13),
            context=t.ReferenceContext(include_declaration=True),
        )
    )
    places = sorted((r.range.start.line, r.range.start.character) for r in refs or [])
    check(
        "references name every place, in UTF-16 columns",
        places == [(5, 12), (9, 16), (12, 22), (13, 16), (15, 16), (BODY_LINE, 23)],
        places,
    )

    # Rename.
    prepared = await client.text_document_prepare_rename_async(
        t.PrepareRenameParams(text_document=doc(), position=pos(BODY_LINE, 25))
    )
    check(
        "prepareRename offers the id under the cursor",
        getattr(prepared, "placeholder", None) == "find"
        and prepared.range == t.Range(start=pos(BODY_LINE, 23), end=pos(BODY_LINE, 27)),
        prepared,
    )
    try:
        await client.text_document_rename_async(
            t.RenameParams(text_document=doc(), position=pos(5, 13), new_name="details")
        )
        refused = None
    except JsonRpcException as e:
        refused = str(e)
    check("rename to a taken id is refused in words", refused and "already has" in refused, refused)
    edit = await client.text_document_rename_async(
        t.RenameParams(text_document=doc(), position=pos(12, 23), new_name="lookup_users")
    )
    renamed = apply(TEXT, edit.changes[URI])
    check(
        "rename changes the id and every reference",
        "find" not in renamed and renamed.count("lookup_users") == 6,
        renamed,
    )
    client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=URI, version=2),
            content_changes=[t.TextDocumentContentChangeWholeDocument(text=renamed)],
        )
    )
    published = await until(client, URI, lambda p: p.version == 2, "for version 2")
    errors = [d.message for d in published.diagnostics if d.severity == t.DiagnosticSeverity.Error]
    check(
        "the renamed file loads; only the typo is left",
        len(errors) == 1 and "search_users" in errors[0],
        published.diagnostics,
    )

    # Completion in a file that never ran: each field's type comes from
    # the tool's output schema, not from a value shaped like it.
    typed = renamed.replace('"${details.email}"', '"${details.}"')
    client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=URI, version=3),
            content_changes=[t.TextDocumentContentChangeWholeDocument(text=typed)],
        )
    )
    await until(client, URI, lambda p: p.version == 3, "for version 3")
    listed = await client.text_document_completion_async(
        t.CompletionParams(text_document=doc(), position=pos(18, 25))
    )
    items = listed.items if hasattr(listed, "items") else listed or []
    details = {i.label: i.detail for i in items}
    check(
        "completion details give the output schema's types",
        details.get("id") == "string"
        and details.get("email") == "string · email"
        and details.get("teams") == "array of string",
        details,
    )
    client.text_document_did_change(
        t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=URI, version=4),
            content_changes=[t.TextDocumentContentChangeWholeDocument(text=renamed)],
        )
    )
    await until(client, URI, lambda p: p.version == 4, "for version 4")

    # A file that was run: hover and completion read its saved outputs.
    await recorded(client)

    # The outline.
    symbols = await client.text_document_document_symbol_async(
        t.DocumentSymbolParams(text_document=doc())
    )
    outline = [(s.name, [c.name for c in s.children or []]) for s in symbols or []]
    check(
        "document symbols nest nodes in their composition",
        outline == [("lookup", ["lookup_users", "details", "mail"])],
        outline,
    )

    # Bad requests are answered, and the server stays up.
    try:
        await client.protocol.send_request_async("pipewright/nothing", {})
        unknown = None
    except JsonRpcException as e:
        unknown = e
    check(
        "an unknown method is MethodNotFound",
        unknown is not None and getattr(unknown, "code", None) == -32601,
        repr(unknown),
    )
    far = await client.text_document_hover_async(
        t.HoverParams(text_document=doc(), position=pos(999, 999))
    )
    check("a place past the end finds nothing", far is None, far)
    # Malformed input written straight to the server's stdin: a body that
    # is not JSON, a request with bad params (its error answer goes to an
    # id the client never used) and a header line without a colon.
    def framed(body):
        data = body.encode()
        return b"Content-Length: %d\r\n\r\n" % len(data) + data

    client._server.stdin.write(
        framed("{not json")
        + framed('{"jsonrpc":"2.0","id":"x-1","method":"textDocument/hover","params":{"position":"x"}}')
        + b"garbage\r\n\r\n"
    )
    await client._server.stdin.drain()
    again = await asyncio.wait_for(
        client.text_document_hover_async(t.HoverParams(text_document=doc(), position=pos(10, 18))),
        TIMEOUT,
    )
    check(
        "after malformed messages the server still answers",
        again is not None and "get_user_details" in again.contents.value,
        again,
    )


if __name__ == "__main__":
    try:
        asyncio.run(asyncio.wait_for(main(sys.argv[1]), 6 * TIMEOUT))
    except AssertionError as e:
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)
