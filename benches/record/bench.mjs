// What `pipewright record` costs an agent: the latency it adds per exchange
// and the memory it holds over a long session.
//
//   npm ci --prefix tests/interop && cargo build --release
//   node benches/record/bench.mjs [--calls 10000] [--session 100000]
//
// - Latency: the same hand-rolled JSON-RPC client makes `--calls` echo
//   calls to a server straight and `--calls` through the recorder,
//   interleaved (one straight, one recorded, the order swapping every
//   pair), one call in flight; median and p99 of each side and what the
//   recorder adds. Over stdio the server is `pipewright demo-server`; over
//   Streamable HTTP it is @modelcontextprotocol/server-everything (a
//   keep-alive client on the demo server waits ~40 ms per call for a
//   delayed acknowledgement: its sockets keep Nagle's algorithm on, which
//   would hide the recorder's cost; node's sockets do not).
// - Memory: a session of `--session` echo calls through the recorder over
//   stdio, 32 in flight; the recorder's peak RSS (VmHWM) after 1,000 calls
//   and at the end, and the size of the session file it wrote.
//
// Environment: PIPEWRIGHT_BIN (default target/release/pipewright).
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import http from "node:http";
import net from "node:net";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");
const flag = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const calls = flag("calls", 10000);
const sessionCalls = flag("session", 100000);
const bin = process.env.PIPEWRIGHT_BIN ?? join(root, "target/release/pipewright");
const everything = join(root, "tests/interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
for (const [what, path] of [["pipewright", bin], ["server-everything", everything]]) {
  if (!existsSync(path)) {
    console.error(`${what} is missing at ${path} (cargo build --release; npm ci --prefix tests/interop)`);
    process.exit(2);
  }
}
const work = mkdtempSync(join(tmpdir(), "pw-record-bench-"));
const env = { ...process.env, PIPEWRIGHT_DATA_DIR: join(work, "data"), PIPEWRIGHT_CONFIG_DIR: join(work, "config") };

const initialize = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "bench", version: "1" },
};

/** A JSON-RPC client over a child's stdin and stdout, one line a message. */
class Stdio {
  constructor(command, args) {
    this.child = spawn(command, args, { env, stdio: ["pipe", "pipe", "ignore"] });
    this.pending = new Map();
    this.next = 1;
    let buf = "";
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (chunk) => {
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const m = JSON.parse(line);
        const done = this.pending.get(m.id);
        if (done) {
          this.pending.delete(m.id);
          done(m);
        }
      }
    });
  }
  request(method, params) {
    const id = this.next++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  }
  notify(method) {
    this.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method }) + "\n");
  }
  async open() {
    await this.request("initialize", initialize);
    this.notify("notifications/initialized");
    return this;
  }
  close() {
    this.child.stdin.end();
    return new Promise((resolve) => this.child.on("exit", resolve));
  }
}

/** A JSON-RPC client over Streamable HTTP, one keep-alive connection. */
class Http {
  constructor(url) {
    this.url = new URL(url);
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    this.next = 1;
    this.session = undefined;
  }
  post(body) {
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
    };
    if (this.session) headers["mcp-session-id"] = this.session;
    return new Promise((resolve, reject) => {
      const req = http.request(this.url, { method: "POST", agent: this.agent, headers }, (res) => {
        if (res.headers["mcp-session-id"]) this.session = res.headers["mcp-session-id"];
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (text += c));
        res.on("end", () => resolve(text));
      });
      req.on("error", reject);
      req.end(JSON.stringify(body));
    });
  }
  async request(method, params) {
    const text = await this.post({ jsonrpc: "2.0", id: this.next++, method, params });
    const data = text.split("\n").filter((l) => l.startsWith("data: ") && l.length > 6);
    return JSON.parse(data.length ? data[data.length - 1].slice(6) : text);
  }
  async open() {
    await this.request("initialize", initialize);
    await this.post({ jsonrpc: "2.0", method: "notifications/initialized" });
    return this;
  }
  close() {
    this.agent.destroy();
  }
}

const echo = { name: "echo", arguments: { message: "hello" } };

/** Times one call, in milliseconds. */
async function timed(client) {
  const t = process.hrtime.bigint();
  const r = await client.request("tools/call", echo);
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (!r.result) throw new Error(`no result: ${JSON.stringify(r)}`);
  return ms;
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/** `calls` pairs of calls, straight and recorded, interleaved. */
async function compare(what, straight, recorded) {
  for (let i = 0; i < 200; i++) {
    await timed(straight);
    await timed(recorded);
  }
  const a = [], b = [];
  for (let i = 0; i < calls; i++) {
    if (i % 2 === 0) {
      a.push(await timed(straight));
      b.push(await timed(recorded));
    } else {
      b.push(await timed(recorded));
      a.push(await timed(straight));
    }
  }
  const row = (name, xs) => `| ${what} | ${name} | ${quantile(xs, 0.5).toFixed(3)} | ${quantile(xs, 0.99).toFixed(3)} |`;
  console.log(row("straight", a));
  console.log(row("through the recorder", b));
  console.log(
    `| ${what} | added | ${(quantile(b, 0.5) - quantile(a, 0.5)).toFixed(3)} | ${(quantile(b, 0.99) - quantile(a, 0.99)).toFixed(3)} |`,
  );
}

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** Starts a process and waits for `pattern` on its stdout or stderr. */
function started(command, args, pattern, extraEnv = {}) {
  const child = spawn(command, args, { env: { ...env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
  return new Promise((resolve, reject) => {
    let seen = "";
    const look = (c) => {
      seen += c;
      const m = seen.match(pattern);
      if (m) resolve({ child, match: m });
    };
    child.stdout.on("data", look);
    child.stderr.on("data", look);
    child.on("exit", () => reject(new Error(`${command} exited: ${seen}`)));
  });
}

const vmHwm = (pid) => {
  const m = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmHWM:\s+(\d+) kB/);
  return m ? Number(m[1]) : NaN;
};

console.log(`pipewright record: ${calls} echo calls a side, interleaved (${bin})\n`);
console.log("| transport | client talks | median ms | p99 ms |");
console.log("|---|---|---|---|");

// stdio
{
  const out = join(work, "stdio");
  const straight = await new Stdio(bin, ["demo-server"]).open();
  const recorded = await new Stdio(bin, ["record", "--out", out, "--", bin, "demo-server"]).open();
  await compare("stdio", straight, recorded);
  await straight.close();
  await recorded.close();
}

// Streamable HTTP
{
  const port = await freePort();
  const upstream = await started("node", [everything, "streamableHttp"], /listening on port/, { PORT: String(port) });
  const url = `http://127.0.0.1:${port}/mcp`;
  const rec = await started(bin, ["record", "--http", "127.0.0.1:0", "--to", url, "--out", join(work, "http")], /listening on (http:\S+)/);
  const straight = await new Http(url).open();
  const recorded = await new Http(rec.match[1]).open();
  await compare("HTTP", straight, recorded);
  straight.close();
  recorded.close();
  rec.child.kill("SIGINT");
  upstream.child.kill();
}

// Memory over a long session
{
  const out = join(work, "long");
  const c = await new Stdio(bin, ["record", "--out", out, "--", bin, "demo-server"]).open();
  const pid = c.child.pid;
  let sent = 0, early = NaN;
  const t = Date.now();
  const worker = async () => {
    while (sent < sessionCalls) {
      sent++;
      const r = await c.request("tools/call", echo);
      if (!r.result) throw new Error(JSON.stringify(r));
      if (sent === 1000) early = vmHwm(pid);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  const peak = vmHwm(pid);
  const seconds = (Date.now() - t) / 1000;
  await c.close();
  const file = readdirSync(out).map((f) => join(out, f))[0];
  const size = statSync(file).size;
  console.log(
    `\nA session of ${sessionCalls} echo calls (32 in flight) through the recorder over stdio: ` +
      `${seconds.toFixed(1)} s; the recorder's peak RSS ${(early / 1024).toFixed(1)} MiB after 1,000 calls, ` +
      `${(peak / 1024).toFixed(1)} MiB at the end; the session file ${(size / 1048576).toFixed(1)} MiB.`,
  );
}
rmSync(work, { recursive: true, force: true });
