// The official TypeScript SDK client (protocol 2025-11-25) calling the
// compositions `pipewright serve` serves from FILE, whose nodes are asked
// for a name by their upstream servers (see serve_asking_client.py).
//
//   node tests/interop/serve-asking-client.mjs BIN FILE stdio|URL answer|none
//
// `answer`: the client declares the elicitation capability and answers
// every form with a name; it declares sampling too and writes every model
// message as "short"; `none`: it declares nothing and handles nothing.
// Prints one line per call with its structured result and run id; exits 1
// on any failed check.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [bin, file, where, mode] = process.argv.slice(2);
const answering = mode === "answer";
const asked = [];
const client = new Client(
  { name: "ts-agent", version: "1.0.0" },
  { capabilities: answering ? { elicitation: { form: {} }, sampling: {} } : {} },
);
if (answering) {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    return { action: "accept", content: { name: `Lin (${request.params.message})` } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    asked.push(request.params.systemPrompt);
    return { role: "assistant", content: { type: "text", text: "short" }, model: "ts-model" };
  });
}
const transport =
  where === "stdio"
    ? new StdioClientTransport({ command: bin, args: ["serve", file], env: process.env, stderr: "ignore" })
    : new StreamableHTTPClientTransport(new URL(where));
let failed = 0;
const check = (name, ok, detail) => {
  if (!ok) {
    console.log(`FAIL - ${name}: ${JSON.stringify(detail)}`);
    failed++;
  }
};
try {
  await client.connect(transport);
  const ask = await client.callTool({ name: "ask", arguments: { who: "ts" } });
  check("ask is no error", !ask.isError, ask);
  console.log(`ask -> ${JSON.stringify(ask.structuredContent)} run ${ask._meta?.["pipewright/run_id"]}`);
  const greet = await client.callTool({ name: "greet", arguments: {} });
  console.log(
    `greet -> ${JSON.stringify(greet.structuredContent)} error ${greet.isError} run ${greet._meta?.["pipewright/run_id"]}`,
  );
  const sum = await client.callTool({ name: "sum", arguments: {} });
  console.log(`sum -> ${JSON.stringify(sum.structuredContent)} error ${sum.isError} run ${sum._meta?.["pipewright/run_id"]}`);
  if (answering) {
    check("sum got the model's message", sum.structuredContent?.summary === "short" && sum.structuredContent?.model === "ts-model", sum);
    check("ask got the answer", ask.structuredContent?.name === "Lin (Name for ts)", ask.structuredContent);
    check("greet got the answer", greet.structuredContent?.greeting === "Hello, Lin (What is your name?)!", greet);
    check("both were asked", JSON.stringify(asked) === JSON.stringify(["Name for ts", "What is your name?", "You write one-line summaries."]), asked);
  } else {
    check("ask was declined", ask.structuredContent?.action === "decline", ask.structuredContent);
    check("greet failed on the decline", greet.isError === true, greet);
    check("sum failed on the declined sampling", sum.isError === true, sum);
  }
} catch (e) {
  console.log(`FAIL - ${e?.stack ?? e}`);
  failed++;
} finally {
  await client.close();
}
console.log(failed ? `${failed} check(s) failed` : "all checks passed");
process.exit(failed ? 1 : 0);
