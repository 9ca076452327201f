// An agent, scripted: the official TypeScript SDK client (2025-11-25) doing
// what a model does with a server's tools — list them, call one, copy
// values out of its result into the next call's arguments, go over the
// items of a list, answer the question the server asks — and printing what
// it saw, one line per step, so a run through `pipewright record` can be
// compared with a run straight to the server (tests/record.rs).
//
//   node tests/record/agent.mjs demo|everything|python stdio COMMAND ARGS…
//   node tests/record/agent.mjs demo|everything|python http URL
//
// Exits 1 if a step did not get what it expected.
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const sdk = (path) =>
  import(pathToFileURL(join(here, "../interop/node_modules/@modelcontextprotocol/sdk/dist/esm", path)).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { CreateMessageRequestSchema, ElicitRequestSchema } = await sdk("types.js");

const [server, how, ...target] = process.argv.slice(2);
let failed = 0;
const check = (name, ok, detail) => {
  if (!ok) {
    console.log(`FAIL - ${name}: ${JSON.stringify(detail)}`);
    failed++;
  }
};

const client = new Client(
  { name: "ts-agent", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} }, sampling: {} } },
);
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  console.log(`asked: ${request.params.message}`);
  const content = {
    demo: { signature: "Ada", tone: "friendly", send: true },
    everything: { name: "Ada Lovelace", check: true, email: "ada@example.org" },
    python: { name: "Ada Lovelace" },
  }[server];
  return { action: "accept", content };
});
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  console.log(`asked the model: ${request.params.systemPrompt ?? ""}`);
  return { role: "assistant", content: { type: "text", text: "A short line." }, model: "ts-model" };
});

const transport =
  how === "stdio"
    ? new StdioClientTransport({ command: target[0], args: target.slice(1), env: process.env, stderr: "ignore" })
    : new StreamableHTTPClientTransport(new URL(target[0]));

/** A result as the agent reads it: its structured content, else its
 * text (parsed, when it is JSON). */
const read = (result) => {
  if (result.structuredContent) return result.structuredContent;
  const text = (result.content ?? []).map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");
  try {
    const parsed = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null ? parsed : text;
  } catch {
    return text;
  }
};

/** Calls a tool and prints the call and what came back. */
const call = async (name, args) => {
  const result = await client.callTool({ name, arguments: args });
  const got = read(result);
  console.log(`${name} ${JSON.stringify(args)} -> ${result.isError ? "error " : ""}${JSON.stringify(got)}`);
  return { result, got };
};

const agents = {
  // Find a user, read their details, go over a list, ask before sending,
  // send, and use an id the agent had from elsewhere.
  async demo() {
    const { got: found } = await call("search_users", { query: "ali", limit: 5 });
    check("found users", found.users?.length === 2, found);
    const { got: user } = await call("get_user_details", { user_id: found.users[0].id });
    check("details", user.email === "alice@example.com", user);
    const { got: listed } = await call("list_items", { count: 3, prefix: "item-" });
    for (const item of listed) {
      await call("echo", { message: item.id });
    }
    const subject = `Welcome, ${user.name}`;
    const { got: confirmed } = await call("confirm_send", { to: user.email, subject });
    check("confirmed", confirmed.send === true, confirmed);
    const { got: sent } = await call("send_email", {
      to: user.email,
      subject,
      body: `Hello ${user.name.split(" ")[0]},\n-- ${confirmed.signature}`,
    });
    check("sent", sent.message_id?.startsWith("msg-"), sent);
    await call("echo", { message: "4f1c9a2e-77b0-4c1e-9a53-0d2e8b6f1a90" });
    const { got: draft } = await call("draft_reply", { to: user.name, topic: subject });
    check("drafted", draft.text === "A short line.", draft);
  },
  // Read the weather, add two of its numbers, echo a phrase made of a
  // third, then fill in the server's form.
  async everything() {
    const { got: weather } = await call("get-structured-content", { location: "Chicago" });
    check("weather", weather.temperature === 36, weather);
    const { got: sum } = await call("get-sum", { a: weather.temperature, b: weather.humidity });
    check("sum", String(sum).includes("118"), sum);
    await call("echo", { message: `Chicago: ${weather.conditions}` });
    const { got: form } = await call("trigger-elicitation-request", {});
    check("form answered", String(form).includes("Ada Lovelace"), form);
  },
  // Count, ask for a name for what was counted, summarize the name.
  async python() {
    const { got: counted } = await call("count", { n: 3 });
    check("counted", counted.count === 3, counted);
    const { got: named } = await call("ask_name", { who: `agent-${counted.count}` });
    check("named", named.name === "Ada Lovelace", named);
    const { got: summary } = await call("summarize", { text: named.name });
    check("summarized", summary.summary === "A short line.", summary);
  },
};

try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  console.log(`tools: ${tools.map((t) => t.name).sort().join(" ")}`);
  await agents[server]();
} catch (e) {
  console.log(`FAIL - ${e?.stack ?? e}`);
  failed++;
} finally {
  await client.close();
}
console.log(failed ? `${failed} check(s) failed` : "all checks passed");
process.exit(failed ? 1 : 0);
