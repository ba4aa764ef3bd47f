// What the Prism suites share: `ngfail serve` and Stoplight Prism started and stopped, a
// request sent through Prism that fails on any validation error, and a command's event
// stream checked against execd's ServerStreamEvent schema.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const specs = path.join(here, "specs");  // the official specs, copied unchanged
export const cli = process.env.NGFAIL_CLI;
if (!cli) throw new Error("set NGFAIL_CLI to the ngfail binary");
export const apiKey = "sk-prism-1";
export const key = { "OPEN-SANDBOX-API-KEY": apiKey };
export const json = { "content-type": "application/json" };
const children = [];

// A server that cannot start here (the process runtime without bubblewrap or cgroups) says
// why in one line, "ngfail serve: …": a suite is then skipped with that line.
export class Unavailable extends Error {}

function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// `ngfail serve` with `args`; its host:port.
export async function startServe(args = []) {
  const child = spawn(cli, ["serve", ...args], { env: { ...process.env, OPEN_SANDBOX_API_KEY: apiKey },
                                                 stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let said = "";
  child.stderr.on("data", (bytes) => { said += bytes; process.stderr.write(bytes); });
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise((resolve, reject) => {
    lines.once("line", resolve);
    child.once("exit", (code) => {
      const why = said.trim().split("\n")[0] ?? "";
      reject(why.startsWith("ngfail serve: ") ? new Unavailable(why) : new Error(`ngfail serve exited with ${code}`));
    });
  });
  return /^listening on http:\/\/(.+)$/.exec(first)[1];
}

// Prism's proxy for `spec` in front of `upstream`; its base URL. With --errors a violation
// turns the reply into a 500 whose `sl-violations` header names it.
export async function startPrism(spec, upstream, { errors = true } = {}) {
  const port = await freePort();
  const child = spawn(path.join(here, "node_modules/.bin/prism"),
                      ["proxy", path.join(specs, spec), upstream, ...(errors ? ["--errors"] : []),
                       "-p", String(port), "-h", "127.0.0.1"],
                      { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  const lines = createInterface({ input: child.stdout });
  await new Promise((resolve, reject) => {
    lines.on("line", (l) => { if (l.includes("Prism is listening")) resolve(); });
    child.once("exit", (code) => reject(new Error(`prism exited with ${code}`)));
  });
  return `http://127.0.0.1:${port}`;
}

export function stopAll() { for (const c of children) c.kill("SIGTERM"); }

export async function inject(serve, fault) {
  const res = await fetch(`http://${serve}/_ngfail/faults`, { method: "POST", headers: { ...key, ...json },
                                                             body: JSON.stringify(fault) });
  assert.equal(res.status, 201);
}

// A function that sends through Prism and fails on any validation error, returning the
// reply. Requests to the bases in `execdBases` carry X-EXECD-ACCESS-TOKEN, which execd's spec
// requires (execd ignores it unless the sandbox asked for secure access).
export function checker(execdBases) {
  return async function checked(base, route, init = {}) {
    const headers = execdBases().includes(base) ? { "X-EXECD-ACCESS-TOKEN": "token", ...(init.headers ?? {}) }
                                                : init.headers;
    const res = await fetch(base + route, { ...init, headers });
    let violations = JSON.parse(res.headers.get("sl-violations") ?? "[]");
    const body = await res.text();
    if (init.stream) {
      // Prism reads a whole event stream as one body that must be a ServerStreamEvent object, a
      // check real execd fails too; each event is checked against that schema instead.
      violations = violations.filter((v) => !(v.code === "type" && v.location.join(".") === "response.body"));
    }
    const errors = violations.filter((v) => v.severity === "Error");
    assert.deepEqual(errors, [], `${init.method ?? "GET"} ${route}: ${body}`);
    return { status: res.status, body, headers: res.headers };
  };
}

// execd's ServerStreamEvent schema, checked on each event of a stream.
const eventTypes = ["init", "status", "error", "stdout", "stderr", "result", "execution_complete",
                    "execution_count", "ping"];
const fieldTypes = { type: "string", text: "string", execution_count: "integer", execution_time: "integer",
                     timestamp: "integer", results: "object", error: "object" };

export function checkEvent(event) {
  assert.equal(typeof event, "object");
  assert.ok(eventTypes.includes(event.type), `event type ${event.type}`);
  for (const [field, value] of Object.entries(event)) {
    const want = fieldTypes[field];
    if (!want) continue;
    if (want === "integer") assert.ok(Number.isInteger(value), `${field} is an integer`);
    else assert.equal(typeof value, want, field);
  }
  if (event.error) {
    assert.equal(typeof event.error.ename, "string");
    assert.equal(typeof event.error.evalue, "string");
    assert.ok(Array.isArray(event.error.traceback) && event.error.traceback.every((t) => typeof t === "string"));
  }
}

// A stream's events (execd sends one JSON object a frame, frames apart by a blank line).
export function eventsOf(body) {
  return body.split("\n\n").filter((f) => f.trim() !== "").map((f) => JSON.parse(f));
}

// A POST of `body` to a streaming route through `base` (a Prism that reports in a header):
// the reply and its events, each checked against the schema.
export async function streamed(checked, base, route, body) {
  const r = await checked(base, route, { method: "POST", headers: json, body: JSON.stringify(body), stream: true });
  if (r.status !== 200) return { ...r, events: [] };
  assert.match(r.headers.get("content-type") ?? "", /^text\/event-stream/);
  const events = eventsOf(r.body);
  events.forEach(checkEvent);
  return { ...r, events };
}
