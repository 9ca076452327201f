// Whole-process comparison: `pipewright run` against a hand-rolled JSON-RPC
// client (raw-client.mjs), both on @modelcontextprotocol/server-everything
// over stdio, in interleaved pairs. Also the peak memory of a 3-node run on
// the demo server and the time of `pipewright check`.
//
//   npm ci --prefix tests/interop && cargo build --release
//   node benches/whole-process/bench.mjs [--pairs 7] [--grace-ms 100]
//
// Environment: PIPEWRIGHT_BIN (default target/release/pipewright) and, to
// compare, BASE_BIN (another build, e.g. of the previous main), timed in
// the same interleaved rounds (base, new, raw client).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync, readdirSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");
const flag = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const pairs = Number(flag("pairs", 7));
const grace = Number(flag("grace-ms", 100));
const bin = process.env.PIPEWRIGHT_BIN ?? join(root, "target/release/pipewright");
const base = process.env.BASE_BIN;
const serverJs = join(root, "tests/interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
for (const [what, path] of [["pipewright", bin], ["server-everything", serverJs]]) {
  if (!existsSync(path)) {
    console.error(`${what} is missing at ${path}: run \`npm ci --prefix tests/interop && cargo build --release\``);
    process.exit(2);
  }
}

const work = mkdtempSync(join(tmpdir(), "pw-whole-"));
const dataHome = join(work, "data");
const server = `servers:\n  everything:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(serverJs)}, stdio]\n`;
const loads = {
  fan: { label: "2,000 echo, 32 in flight", n: 2000, width: 32 },
  seq: { label: "1,000 sequential echo", n: 1000, width: 1 },
};
{
  const items = Array.from({ length: loads.fan.n }, (_, i) => `message ${i}`);
  writeFileSync(join(work, "fan.yml"),
    `${server}vars:\n  items: ${JSON.stringify(items)}\ncompositions:\n  - name: fan\n    nodes:\n      - id: each\n        tool: echo\n        for_each: "\${var.items[*]}"\n        max_concurrency: ${loads.fan.width}\n        args: { message: "\${item}" }\n`);
  let pipe = `${server}pipe:\n`;
  for (let i = 0; i < loads.seq.n; i++) pipe += `  - id: s${i}\n    tool: echo\n    args: { message: "message ${i}" }\n`;
  writeFileSync(join(work, "seq.yml"), pipe);
}

function timed(cmd, args, env = {}) {
  return new Promise((done, fail) => {
    const start = process.hrtime.bigint();
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
    let out = "", err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", (code) => {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (code !== 0) fail(new Error(`${cmd} ${args.join(" ")} exited ${code}: ${err}`));
      else done({ ms, out, err });
    });
  });
}

function latestRunMs() {
  const dir = join(dataHome, "pipewright/runs");
  const newest = readdirSync(dir).filter((f) => f.endsWith(".json")).sort().at(-1);
  const trace = JSON.parse(readFileSync(join(dir, newest), "utf8"));
  return trace.composition.duration_ms;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const f2 = (x) => x.toFixed(2);

async function pipewright(load, which = bin) {
  const r = await timed(which, ["run", join(work, `${load}.yml`), "--shutdown-grace", `${grace}ms`], { XDG_DATA_HOME: dataHome });
  return { wall: r.ms, inside: latestRunMs() };
}
async function raw(load) {
  const { n, width } = loads[load];
  const r = await timed(process.execPath, [join(here, "raw-client.mjs"), serverJs, load, String(n), String(width), String(grace)]);
  return { wall: r.ms, inside: JSON.parse(r.out).call_ms };
}

const rows = [];
const row = (label, pw, rw) => {
  const whole = pw.map((p, i) => p.wall / rw[i].wall);
  const inside = pw.map((p, i) => p.inside / rw[i].inside);
  return {
    label,
    pw: `${f2(median(pw.map((p) => p.wall)) / 1000)} s`,
    raw: `${f2(median(rw.map((p) => p.wall)) / 1000)} s`,
    wholeMedian: f2(median(whole)),
    wholeWorst: f2(Math.max(...whole)),
    insideMedian: f2(median(inside)),
    insideWorst: f2(Math.max(...inside)),
  };
};
for (const load of Object.keys(loads)) {
  await pipewright(load); // warm the page cache and node's compile cache
  if (base) await pipewright(load, base);
  await raw(load);
  const pw = [], bs = [], rw = [];
  for (let i = 0; i < pairs; i++) {
    if (base) bs.push(await pipewright(load, base));
    pw.push(await pipewright(load));
    rw.push(await raw(load));
    const was = base ? `, base ${bs[i].wall.toFixed(0)} ms (run ${bs[i].inside} ms)` : "";
    process.stderr.write(`${load} round ${i + 1}: pipewright ${pw[i].wall.toFixed(0)} ms (run ${pw[i].inside} ms)${was}, raw ${rw[i].wall.toFixed(0)} ms (calls ${rw[i].inside.toFixed(0)} ms)\n`);
  }
  if (base) rows.push(row(`${loads[load].label} (base)`, bs, rw));
  rows.push(row(loads[load].label, pw, rw));
}

// Peak memory: GNU time's maximum resident set of `pipewright run` on a
// 3-node pipe against the built-in demo server (an upper bound: it is the
// largest of pipewright and the children it waited for).
const example = join(root, "examples/search-then-update.yml");
const peaks = [];
for (let i = 0; i < 5; i++) {
  const r = spawnSync("/usr/bin/time", ["-f", "%M", bin, "run", example, "--format", "json"], {
    env: { ...process.env, XDG_DATA_HOME: dataHome }, encoding: "utf8",
  });
  const lines = r.stderr.trim().split("\n");
  peaks.push(Number(lines.at(-1)) / 1024);
}
// `pipewright check` of the same example.
const checks = [];
for (let i = 0; i < 21; i++) checks.push((await timed(bin, ["check", example])).ms);

console.log(`pairs: ${pairs}, shutdown grace: ${grace} ms, server-everything over stdio\n`);
console.log("| load | pipewright (median wall) | raw client (median wall) | whole process: median / worst ratio | inside the run vs raw calls: median / worst ratio |");
console.log("|---|---|---|---|---|");
for (const r of rows) console.log(`| ${r.label} | ${r.pw} | ${r.raw} | ${r.wholeMedian} / ${r.wholeWorst} | ${r.insideMedian} / ${r.insideWorst} |`);
console.log(`\npeak memory, 3-node run on the demo server: ${f2(Math.max(...peaks))} MiB (max of 5; median ${f2(median(peaks))} MiB)`);
console.log(`pipewright check ${example.slice(root.length + 1)}: median ${f2(median(checks))} ms, worst ${f2(Math.max(...checks))} ms (21 runs)`);
rmSync(work, { recursive: true, force: true });
