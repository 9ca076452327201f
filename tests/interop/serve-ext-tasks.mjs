// The official TypeScript SDK's v2 client (@modelcontextprotocol/client)
// with the Tasks extension's client (@modelcontextprotocol/ext-tasks)
// against `pipewright serve`, at the 2026-07-28 wire: a served composition
// called as a task under `io.modelcontextprotocol/tasks`, its progress (the
// task's status message as each node ends), a cancel whose compensation
// runs, and a failure returned through the task with its compensation run.
// tests/serve_ext_tasks.rs writes the served file (upstreams: the demo
// server, and the reference memory server, whose file shows each write and
// its undo) and, over HTTP, starts serve itself. Prints one line per check;
// exits 1 if any failed.
//
//   node tests/interop/serve-ext-tasks.mjs stdio MEMORY_FILE BIN SERVED_FILE
//   node tests/interop/serve-ext-tasks.mjs http MEMORY_FILE URL
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import { readFileSync, existsSync } from "node:fs";

const [mode, memoryFile, target, served] = process.argv.slice(2);
let failed = 0;
const check = (name, ok, detail = "") => {
  console.log(`${ok ? "ok  " : "FAIL"} - [${mode}] ${name}${ok ? "" : `: ${detail}`}`);
  if (!ok) failed++;
};
const show = (v) => JSON.stringify(v);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const stored = () => (existsSync(memoryFile) ? readFileSync(memoryFile, "utf8") : "");
const iso = (s) => typeof s === "string" && !Number.isNaN(Date.parse(s));
// A hung exchange fails the run instead of holding the test forever.
setTimeout(() => {
  check("the run ended within a minute", false, "timed out");
  process.exit(1);
}, 60000).unref();

// Every message the client's transport reads, in order, before the SDK
// sees it; and the host's own request coordinator, which ext-tasks needs
// for the 2026-07-28 task wire (the SDK's `request` refuses a result whose
// `resultType` is `task`): it sends a request with an id of its own on the
// client's transport and takes the matching response off it.
const wire = [];
const sent = [];
function coordinate(transport) {
  const waiting = new Map();
  const dispatch = transport.onmessage;
  transport.onmessage = (message, extra) => {
    wire.push(message);
    // A response to one of ours (answered after its request was aborted,
    // too) is never the SDK's.
    if (typeof message.id === "string" && message.id.startsWith("ext-tasks-") && ("result" in message || "error" in message)) {
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
      return;
    }
    dispatch?.(message, extra);
  };
  let next = 0;
  return async (request, options = {}) => {
    const id = `ext-tasks-${++next}`;
    const message = { jsonrpc: "2.0", id, ...request };
    sent.push(message);
    const answered = new Promise((resolve, reject) => {
      waiting.set(id, resolve);
      const abort = () => {
        waiting.delete(id);
        reject(options.signal.reason);
      };
      if (options.signal?.aborted) abort();
      else options.signal?.addEventListener("abort", abort, { once: true });
    });
    // ext-tasks aborts a poll in flight when it cancels: the rejection is
    // awaited below, but may come while the send is still going.
    answered.catch(() => {});
    try {
      await transport.send(message, options.context?.headers ? { headers: options.context.headers } : undefined);
    } catch (e) {
      waiting.delete(id);
      throw e;
    }
    const reply = await answered;
    return reply.error ? { kind: "error", error: reply.error } : { kind: "result", result: reply.result };
  };
}

const clientInfo = { name: "serve-ext-tasks-test", version: "1.0.0" };
let serveErr = "";
async function connect() {
  let transport;
  if (mode === "stdio") {
    // The test's own environment (pipewright's directories set, nothing of
    // the user's), not the SDK's default few variables.
    transport = new StdioClientTransport({ command: target, args: ["serve", "--no-save", "--yes", served], env: { ...process.env }, stderr: "pipe" });
    transport.stderr?.on("data", (d) => (serveErr += d));
  } else {
    transport = new StreamableHTTPClientTransport(new URL(target));
  }
  // The 2026-07-28 wire only (`server/discover`, no `initialize`): the SDK
  // connects to a 2025 server by default.
  const client = new Client(clientInfo, { capabilities: {}, versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await client.connect(transport);
  return { client, rawDispatch: coordinate(transport), stop: () => client.close() };
}

const { client, rawDispatch, stop } = await connect();
try {
  check("the client negotiated the 2026-07-28 wire", client.getProtocolEra() === "modern" && client.getNegotiatedProtocolVersion() === "2026-07-28", client.getNegotiatedProtocolVersion());
  check(
    "serve declares the tasks extension with no settings",
    show(client.getServerCapabilities()?.extensions?.["io.modelcontextprotocol/tasks"]) === "{}",
    show(client.getServerCapabilities()),
  );
  const session = createTaskSessionFromClient(client, {
    endpointId: `pipewright-serve-${mode}`,
    rawDispatch,
    v2RequestFraming: { protocolVersion: client.getNegotiatedProtocolVersion(), clientInfo, clientCapabilities: {} },
  });
  check("ext-tasks sees a V2 (extension) task server", session.capabilities.execution === true && session.capabilities.cancellation === true, show(session.capabilities));

  // (1) A task: its handle at once, progress as each node ends, the result.
  let from = wire.length;
  const execution = await session.callTool("three_steps", { word: "done" });
  check("tools/call answers with a task handle", execution.kind === "task" && /^[0-9a-f-]{36}$/.test(execution.handle.taskId), show(execution.handle));
  const call = sent.find((m) => m.method === "tools/call" && m.params.name === "three_steps");
  check(
    "the call declared the extension in its own capabilities",
    show(call?.params?._meta?.["io.modelcontextprotocol/clientCapabilities"]) === '{"extensions":{"io.modelcontextprotocol/tasks":{}}}' &&
      call.params._meta["io.modelcontextprotocol/protocolVersion"] === "2026-07-28",
    show(call?.params),
  );
  const created = wire.slice(from).find((m) => m.id === call?.id)?.result ?? {};
  const { createdAt, lastUpdatedAt, ...rest } = created;
  check(
    "the CreateTaskResult is flat: resultType task, working, the run's status message, ttl and poll interval",
    show(Object.keys(rest).sort()) === show(["pollIntervalMs", "resultType", "status", "statusMessage", "taskId", "ttlMs"]) &&
      rest.resultType === "task" &&
      rest.taskId === execution.handle.taskId &&
      rest.status === "working" &&
      rest.statusMessage === "running `three_steps`" &&
      rest.ttlMs === 3600000 &&
      rest.pollIntervalMs === 250,
    show(created),
  );
  check("with its timestamps", iso(createdAt) && iso(lastUpdatedAt), show(created));
  const seen = [];
  const settled = await execution.settle({ onEvent: (e) => e.type === "task" && seen.push(e.task.statusMessage) });
  const messages = [...new Set(seen)];
  const steps = ["running `three_steps`", "`three_steps`: 1 of 3 nodes done (`one`)", "`three_steps`: 2 of 3 nodes done (`two`)", "`three_steps`: 3 of 3 nodes done (`three`)", "`three_steps` completed"];
  // Polled every 250 ms (serve's hint), a node's message lasts until the
  // next ends: a nap's second is seen, the echo's instant may not be.
  check(
    "progress: the status message says each node as it ends, in order",
    messages.every((m) => steps.includes(m)) &&
      messages.every((m, i) => i === 0 || steps.indexOf(m) > steps.indexOf(messages[i - 1])) &&
      messages.some((m) => /[12] of 3/.test(m)) &&
      messages[messages.length - 1] === "`three_steps` completed",
    show(seen),
  );
  const { outcome } = settled;
  check("the task completes", outcome.status === "completed" && outcome.task?.status === "completed", show(outcome));
  check(
    "its result is the composition's output",
    outcome.result?.resultType === "complete" && outcome.result.structuredContent?.result === "done" && outcome.result.content?.[0]?.text === '{"result":"done"}' && outcome.result.isError !== true,
    show(outcome.result),
  );
  check("the run id travels in the result's _meta", /^\d{8}-\d{6}-[0-9a-f]{4}$/.test(outcome.result?._meta?.["pipewright/run_id"] ?? ""), show(outcome.result?._meta));
  const gets = sent.filter((m) => m.method === "tasks/get" && m.params.taskId === execution.handle.taskId);
  const lastGet = wire.find((m) => m.id === gets[gets.length - 1]?.id)?.result;
  check("tasks/get answers resultType complete with the task inlined", lastGet?.resultType === "complete" && lastGet.status === "completed" && lastGet.taskId === execution.handle.taskId && lastGet.result?.structuredContent?.result === "done", show(lastGet));
  const progress = wire.filter((m) => m.method === "notifications/progress" || m.method === "notifications/message");
  check("no progress or log notifications on a task (the extension has none)", progress.length === 0, show(progress));

  // (2) Cancel mid-run: the run stops, and its compensation undoes the write.
  const napping = await session.callTool("remember_then_nap", { name: "Grace" });
  const id = napping.handle?.taskId;
  // Cancel once the run has the write done (its status message says so):
  // a call cut off in flight is not one to undo.
  let status = "";
  for (let i = 0; i < 200 && !status.includes("1 of 2 nodes done"); i++) {
    status = (await session.task(id).snapshot()).statusMessage ?? "";
    if (!status.includes("1 of 2 nodes done")) await sleep(50);
  }
  check("the task says its first node is done", status === "`remember_then_nap`: 1 of 2 nodes done (`create`)", status);
  check("and that node wrote its entity", stored().includes("Grace"), stored());
  await napping.cancel();
  const local = await napping.result();
  check("the execution settles cancelled once the server acknowledged", local.status === "cancelled", show(local));
  // The server's own view: polled until its run stopped and compensated.
  const after = await session.task(id).result();
  check("tasks/cancel stops the run: the task ends cancelled", after.status === "cancelled" && after.task?.status === "cancelled", show(after));
  const cancels = sent.filter((m) => m.method === "tasks/cancel");
  const ack = wire.find((m) => m.id === cancels[0]?.id);
  check("tasks/cancel is acknowledged with an empty complete result", cancels.length === 1 && cancels[0].params.taskId === id && show(ack?.result) === '{"resultType":"complete"}', show(ack));
  check("and its compensation deleted the entity (the memory file shows the write undone)", existsSync(memoryFile) && !stored().includes("Grace"), stored());
  const snap = await session.task(id).snapshot();
  check("the cancelled task says what it undid", snap.status === "cancelled" && snap.statusMessage === "`remember_then_nap` cancelled; compensated `create`", show(snap));

  // (3) A failed step: the failure comes back through the task, compensated.
  const failing = await session.callTool("remember_then_fail", { name: "Ada" });
  const { outcome: f } = await failing.settle();
  check("a failed run completes the task with a tool error (not a JSON-RPC failure)", f.status === "completed" && f.result?.isError === true, show(f));
  check("one sentence first", /^Node `boom` failed: mail server down after Ada/.test(f.result?.content?.[0]?.text ?? ""), show(f.result?.content));
  check(
    "its envelope names the failed step and what was compensated",
    f.result?.structuredContent?.failed_step === "boom" && show(f.result.structuredContent.completed_step_ids) === '["create"]' && f.result.structuredContent.compensated?.[0]?.node === "create" && f.result.structuredContent.compensated[0].status === "ok",
    show(f.result?.structuredContent),
  );
  check("the compensation really undid the write", existsSync(memoryFile) && !stored().includes("Ada"), stored());
  const failedSnap = await session.task(failing.handle.taskId).snapshot();
  check("the task's status message says it failed and what it undid", failedSnap.statusMessage === "`remember_then_fail` failed at `boom`; compensated `create`", show(failedSnap));

  // A task id nobody made is invalid params.
  try {
    await session.task("no-such-task").snapshot();
    check("tasks/get of an unknown task is an error", false, "no error");
  } catch (e) {
    check("tasks/get of an unknown task is invalid params", e.code === -32602, `${e.code} ${e.message}`);
  }
  await session.close();
} catch (e) {
  check("the run went through", false, `${e?.stack ?? e}\n${serveErr}`);
} finally {
  await stop();
}

console.log(`serve-ext-tasks ${mode}: ${failed === 0 ? "all passed" : `${failed} failed`}`);
process.exit(failed === 0 ? 0 : 1);
