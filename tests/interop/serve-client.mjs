// The official TypeScript SDK client against `pipewright serve`, over stdio
// or Streamable HTTP. Upstreams: pipewright's demo server and the reference
// memory server. Prints one line per check; exits 1 if any failed.
//
//   node tests/interop/serve-client.mjs BIN stdio|http
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const [bin, mode] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const memoryBin = join(here, "node_modules/.bin/mcp-server-memory");
const dir = mkdtempSync(join(tmpdir(), "pw-serve-"));
const memoryFile = join(dir, "memory.jsonl");
let failed = 0;
const check = (name, ok, detail = "") => {
  console.log(`${ok ? "ok  " : "FAIL"} - [${mode}] ${name}${ok ? "" : `: ${detail}`}`);
  if (!ok) failed++;
};

const file = (name, text) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
const lookup = file("lookup.yml", `vars: { limit: 1 }
pipe:
  - id: find
    tool: search_users
    args: { query: "\${var.who}", limit: "\${var.limit}" }
  - id: details
    tool: get_user_details
    args: { user_id: "\${find.users[0].id}" }
output: details
`);
const steps = file("steps.yml", `compositions:
  - name: three_steps
    description: Three echoes in a row.
    nodes:
      - { id: one, tool: echo, args: { message: a } }
      - { id: nap1, needs: [one], tool: slow, args: { ms: 40 } }
      - { id: two, needs: [one, nap1], tool: echo, args: { message: "\${one}b" } }
      - { id: nap2, needs: [two], tool: slow, args: { ms: 40 } }
      - { id: three, needs: [two, nap2], tool: echo, args: { message: "\${two}c" } }
    output: three
  - name: nap
    nodes:
      - { id: sleep, tool: slow, args: { ms: 20000 } }
`);
const wipe = file("wipe.yml", `compositions:
  - name: wipe
    nodes:
      - { id: del, tool: delete_user, args: { user_id: "\${var.user}" } }
`);
const memory = file("memory.yml", `servers:
  memory: { command: "${memoryBin}", env: { MEMORY_FILE_PATH: "${memoryFile}" } }
  demo: "${bin} demo-server"
compositions:
  - name: remember_then_fail
    nodes:
      - id: create
        server: memory
        tool: create_entities
        args: { entities: [ { name: "\${var.name}", entityType: person, observations: [ met today ] } ] }
        compensate:
          server: memory
          tool: delete_entities
          args: { entityNames: [ "\${var.name}" ] }
      - id: boom
        needs: [create]
        server: demo
        tool: fail
        args: { message: "mail server down after \${create.entities[0].name}" }
  - name: remember_then_nap
    nodes:
      - id: create
        server: memory
        tool: create_entities
        args: { entities: [ { name: "\${var.name}", entityType: person, observations: [ met today ] } ] }
        compensate:
          server: memory
          tool: delete_entities
          args: { entityNames: [ "\${var.name}" ] }
      - { id: nap, needs: [create], server: demo, tool: slow, args: { ms: 20000 } }
`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const stored = () => (existsSync(memoryFile) ? readFileSync(memoryFile, "utf8") : "");

// Every message the client's transport reads, in the order it read them,
// before the SDK dispatches it: the SDK hands a notification to its handler
// a microtask after a response read in the same chunk, and drops progress
// for a request that has already been answered, so what the handlers see
// depends on the machine's timing; what came over the wire does not.
const wire = [];
function tap(transport) {
  const dispatch = transport.onmessage;
  transport.onmessage = (message, extra) => {
    wire.push(message);
    dispatch?.(message, extra);
  };
}

async function connect(files, extra) {
  const args = ["serve", "--no-save", ...extra, ...files];
  if (mode === "stdio") {
    const transport = new StdioClientTransport({ command: bin, args, stderr: "pipe" });
    const client = new Client({ name: "serve-test", version: "1.0.0" });
    await client.connect(transport);
    tap(transport);
    return { client, stop: async () => client.close() };
  }
  const child = spawn(bin, [...args, "--http", "127.0.0.1:0"], { stdio: ["ignore", "ignore", "pipe"] });
  const url = await new Promise((resolve, reject) => {
    let text = "";
    child.stderr.on("data", (d) => {
      text += d;
      // Only a whole line: a chunk may end in the middle of the port.
      const m = text.match(/listening on (http:\/\/\S+)\r?\n/);
      if (m) resolve(m[1]);
    });
    child.on("exit", (c) => reject(new Error(`serve exited ${c}: ${text}`)));
  });
  const client = new Client({ name: "serve-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  tap(transport);
  return {
    client,
    stop: async () => {
      await client.close();
      child.kill("SIGTERM");
    },
  };
}

const main = await connect([lookup, steps, wipe], []);
const c = main.client;

// tools/list: names, schemas, annotations; destructive left out.
const { tools } = await c.listTools();
const names = tools.map((t) => t.name).sort();
check("tools/list names the compositions", JSON.stringify(names) === JSON.stringify(["lookup", "nap", "three_steps"]), JSON.stringify(names));
const lk = tools.find((t) => t.name === "lookup");
check("a var without a default is required", JSON.stringify(lk?.inputSchema?.required) === '["who"]', JSON.stringify(lk?.inputSchema));
check("a var with a default is optional and typed from it", lk?.inputSchema?.properties?.limit?.type === "integer" && lk.inputSchema.properties.limit.default === 1, JSON.stringify(lk?.inputSchema));
check("annotations follow the tools it calls", lk?.annotations?.readOnlyHint === true && lk.annotations.destructiveHint === false, JSON.stringify(lk?.annotations));
check("the description comes from the file", tools.find((t) => t.name === "three_steps")?.description === "Three echoes in a row.");
check("a destructive composition is not served without --yes", !names.includes("wipe"));

// A successful call, with the default var.
const r = await c.callTool({ name: "lookup", arguments: { who: "bob" } });
check("a call returns the output as structured content", r.structuredContent?.name === "Bob Okafor" && !r.isError, JSON.stringify(r));
check("and as JSON text", JSON.parse(r.content[0].text).email === "bob.okafor@example.com");
check("the run id and totals travel in _meta", /^\d{8}-\d{6}-[0-9a-f]{4}$/.test(r._meta?.["pipewright/run_id"] ?? "") && "pipewright/cost_usd" in r._meta, JSON.stringify(r._meta));

// A bad argument is invalid params naming it.
try {
  await c.callTool({ name: "lookup", arguments: { who: 7 } });
  check("a wrong type is an invalid-params error", false, "no error");
} catch (e) {
  check("a wrong type is an invalid-params error", e.code === -32602 && /who/.test(e.message), `${e.code} ${e.message}`);
}
try {
  await c.callTool({ name: "lookup", arguments: {} });
  check("a missing argument is an invalid-params error", false, "no error");
} catch (e) {
  check("a missing argument is an invalid-params error", e.code === -32602 && /who/.test(e.message), `${e.code} ${e.message}`);
}

// 16 calls at once, each with its own vars and answer.
const people = Array.from({ length: 16 }, (_, i) => ["anders", "bob", "carol", "dmitri"][i % 4]);
const all = await Promise.all(people.map((who) => c.callTool({ name: "lookup", arguments: { who } })));
const own = all.every((res, i) => res.structuredContent?.name?.toLowerCase().includes(people[i]));
check("16 concurrent calls each get their own answer", own, JSON.stringify(all.map((x) => x.structuredContent?.name)));

// Progress as each node ends, every one read before the response.
const seen = [];
const from = wire.length;
const three = await c.callTool({ name: "three_steps", arguments: {} }, undefined, { onprogress: (p) => seen.push(p) });
check("a three-step call answers", three.structuredContent?.result === "abc", JSON.stringify(three));
const read = wire.slice(from);
const answered = read.findIndex((m) => m.result?.structuredContent?.result === "abc");
const token = read[answered]?.id;
const progressed = read
  .slice(0, answered)
  .filter((m) => m.method === "notifications/progress" && m.params?.progressToken === token)
  .map((m) => m.params);
const order = ["one", "nap1", "two", "nap2", "three"];
// Log messages at the level the client set: one per node end, each read
// before the call's response.
const logsOf = (start) => {
  const read = wire.slice(start);
  const end = read.findIndex((m) => m.result?.structuredContent?.result === "abc");
  return end < 0 ? [] : read.slice(0, end).filter((m) => m.method === "notifications/message").map((m) => m.params);
};
c.setNotificationHandler(LoggingMessageNotificationSchema, () => {});
check("logging/setLevel answers", JSON.stringify(await c.setLoggingLevel("info")) === "{}");
let start = wire.length;
const logged = await c.callTool({ name: "three_steps", arguments: {} });
const logs = logsOf(start);
const ends = logs.filter((p) => p.data?.event === "node_finished").map((p) => p.data.node);
check("log messages name each node as it ends", logged.structuredContent?.result === "abc" && ["one", "nap1", "two", "nap2"].every((n) => ends.includes(n)) && logs.every((p) => p.logger === "pipewright" && p.level !== "debug"), JSON.stringify(logs));
await c.setLoggingLevel("error");
start = wire.length;
await c.callTool({ name: "three_steps", arguments: {} });
const quiet = wire.slice(start).filter((m) => m.method === "notifications/message");
check("at error a run that succeeds logs nothing", quiet.length === 0, JSON.stringify(quiet));
check("progress comes as each node ends, before the response", progressed.length === 5 && progressed.every((p, i) => p.progress === i + 1 && p.total === 5 && p.message === order[i]), JSON.stringify(progressed));
check("the SDK hands progress to the caller's handler in order", seen.length >= 1 && seen.every((p, i) => p.message === order[i]), JSON.stringify(seen));

// Cancellation returns promptly; the server still answers.
const ac = new AbortController();
const t0 = Date.now();
const napping = c.callTool({ name: "nap", arguments: {} }, undefined, { signal: ac.signal });
setTimeout(() => ac.abort(), 300);
let aborted = false;
try {
  await napping;
} catch {
  aborted = true;
}
check("cancelling a call returns promptly", aborted && Date.now() - t0 < 3000, `${Date.now() - t0} ms`);
const after = await c.callTool({ name: "lookup", arguments: { who: "carol" } });
check("the server still answers after a cancel", after.structuredContent?.name === "Carol Nguyen", JSON.stringify(after));

// 2025-11-25 tasks (Streamable HTTP): a handle at once, polled to the result.
if (mode === "http") {
  const listed = (await c.listTools()).tools.find((t) => t.name === "three_steps");
  check("tools/list marks compositions taskSupport optional", listed?.execution?.taskSupport === "optional", JSON.stringify(listed));
  const events = [];
  for await (const m of c.experimental.tasks.callToolStream({ name: "three_steps", arguments: {} }, undefined, { task: { ttl: 60000 } })) events.push(m);
  const last = events[events.length - 1];
  check("a task call answers with a handle at once", events[0]?.type === "taskCreated" && /^[0-9a-f-]{36}$/.test(events[0].task.taskId), JSON.stringify(events[0]));
  check("polling shows it working, then completed", events.some((e) => e.type === "taskStatus" && e.task.status === "working") && events.some((e) => e.type === "taskStatus" && e.task.status === "completed"), JSON.stringify(events.map((e) => e.task?.status ?? e.type)));
  check("tasks/result is the composition's result", last?.type === "result" && last.result.structuredContent?.result === "abc", JSON.stringify(last));
  const { tasks: mine } = await c.experimental.tasks.listTasks();
  check("tasks/list lists the session's task", mine.some((t) => t.taskId === events[0].task.taskId && t.status === "completed"), JSON.stringify(mine));
}
await main.stop();

// A failed run compensates: the memory server's entity is removed again.
const saga = await connect([memory], ["--yes"]);
const f = await saga.client.callTool({ name: "remember_then_fail", arguments: { name: "Ada" } });
check("a failed run is isError with one sentence first", f.isError === true && /^Node `boom` failed: mail server down after Ada/.test(f.content[0].text), JSON.stringify(f));
check("its envelope names the failed step and what was compensated", f.structuredContent?.failed_step === "boom" && f.structuredContent?.compensated?.[0]?.status === "ok" && JSON.stringify(f.structuredContent?.completed_step_ids) === '["create"]', JSON.stringify(f.structuredContent));
check("the compensation really undid the write", !stored().includes("Ada"), stored());

// tasks/cancel mid-run: the run stops, and its compensation deletes the entity.
if (mode === "http") {
  const stream = saga.client.experimental.tasks.callToolStream({ name: "remember_then_nap", arguments: { name: "Grace" } }, undefined, { task: { ttl: 60000 } });
  const first = (await stream.next()).value;
  const id = first?.task?.taskId;
  for (let i = 0; i < 100 && !stored().includes("Grace"); i++) await sleep(50);
  check("the task's first node wrote its entity", stored().includes("Grace"), stored());
  // Cancel once the run has the node done, not only its write (a call cut
  // off in flight has nothing to undo): the task's status message says so.
  let said = "";
  for (let i = 0; i < 100 && !said.includes("1 of 2 nodes done"); i++) {
    said = (await saga.client.experimental.tasks.getTask(id)).statusMessage ?? "";
    if (!said.includes("1 of 2 nodes done")) await sleep(50);
  }
  check("the task's status message says the node is done", said === "`remember_then_nap`: 1 of 2 nodes done (`create`)", said);
  const cancelled = await saga.client.experimental.tasks.cancelTask(id);
  check("tasks/cancel answers with the task", cancelled.taskId === id, JSON.stringify(cancelled));
  const rest = [];
  for await (const m of stream) rest.push(m);
  const end = rest[rest.length - 1];
  check("the task ends cancelled", end?.type === "error" && /cancelled/.test(end.error.message) && rest.some((e) => e.task?.status === "cancelled"), JSON.stringify(rest));
  check("and its compensation deleted the entity", !stored().includes("Grace"), stored());
}
await saga.stop();

console.log(`serve-client ${mode}: ${failed === 0 ? "all passed" : `${failed} failed`}`);
process.exit(failed === 0 ? 0 : 1);
