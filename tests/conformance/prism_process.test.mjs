// Stoplight Prism in front of `ngfail serve --runtime process`, validating against the
// official OpenAPI specs what real commands, files, sessions and code contexts answer: the lifecycle API,
// execd and diagnostics, each route the process runtime serves and its error replies. The
// suite is skipped, with the server's one line saying why, where this host cannot run
// process sandboxes (bubblewrap, namespaces, a writable cgroup).
//
//   NGFAIL_CLI=build/dev/src/cli/ngfail node --test tests/conformance/prism_process.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { checker, inject as injectInto, json, key, startPrism, startServe, stopAll, streamed,
         Unavailable } from "./prism_support.mjs";

let serve;
let lifecycle;
let diagnostics;
let execd;
let streams;
let sandboxId;
let unavailable = false;

const checked = checker(() => [execd, streams]);
const inject = (fault) => injectInto(serve, fault);
const command = (body) => streamed(checked, streams, "/command", body);
const post = (body) => ({ method: "POST", headers: json, body: JSON.stringify(body) });

before(async () => {
  try {
    serve = await startServe(["--runtime", "process"]);
  } catch (e) {
    if (!(e instanceof Unavailable)) throw e;
    unavailable = e.message;
    return;
  }
  lifecycle = await startPrism("sandbox-lifecycle.yml", `http://${serve}/v1`);
  diagnostics = await startPrism("diagnostic-api.yml", `http://${serve}/v1`);
  const created = await checked(lifecycle, "/sandboxes", { method: "POST", headers: { ...key, ...json },
    body: JSON.stringify({ image: { uri: "python:3.11" }, entrypoint: ["sleep", "inf"], timeout: 3600,
                           resourceLimits: { cpu: "500m", memory: "256Mi" }, metadata: { team: "rl" } }) });
  assert.equal(created.status, 202, created.body);
  sandboxId = JSON.parse(created.body).id;
  const direct = JSON.parse((await checked(lifecycle, `/sandboxes/${sandboxId}/endpoints/44772`, { headers: key })).body);
  execd = await startPrism("execd-api.yaml", `http://${direct.endpoint}`);
  streams = await startPrism("execd-api.yaml", `http://${direct.endpoint}`, { errors: false });
});

after(stopAll);

function check(name, body) {
  return test(name, async (t) => {
    if (unavailable) {
      t.skip(unavailable);
      return;
    }
    await body();
  });
}

check("the lifecycle routes of a real sandbox", async () => {
  assert.equal((await checked(lifecycle, `/sandboxes/${sandboxId}`, { headers: key })).status, 200);
  const listed = JSON.parse((await checked(lifecycle, "/sandboxes?state=Running&metadata=team%3Drl", { headers: key })).body);
  assert.deepEqual(listed.items.map((s) => s.id), [sandboxId]);
  assert.equal((await checked(lifecycle, `/sandboxes/${sandboxId}/metadata`, { method: "PATCH", headers: { ...key, ...json },
                                                                                body: JSON.stringify({ stage: "eval" }) })).status, 200);
  const renewed = await checked(lifecycle, `/sandboxes/${sandboxId}/renew-expiration`, { method: "POST", headers: { ...key, ...json },
    body: JSON.stringify({ expiresAt: new Date(Date.now() + 7200e3).toISOString() }) });
  assert.equal(renewed.status, 200);
  assert.equal((await checked(lifecycle, `/sandboxes/${sandboxId}/pause`, { method: "POST", headers: key })).status, 202);
  assert.equal((await checked(lifecycle, `/sandboxes/${sandboxId}/resume`, { method: "POST", headers: key })).status, 202);
  assert.equal((await checked(lifecycle, "/sandboxes/missing", { headers: key })).status, 404);
  for (const kind of ["logs", "events"]) {
    const d = JSON.parse((await checked(diagnostics, `/sandboxes/${sandboxId}/diagnostics/${kind}?scope=all`,
                                        { headers: key })).body);
    assert.equal(d.kind, kind);
  }
});

check("commands, background commands and sessions run for real", async () => {
  assert.equal((await checked(execd, "/ping")).status, 200);
  const ran = await command({ command: "python3 -c 'print(6*7)'", cwd: "/workspace", timeout: 30000 });
  assert.equal(ran.status, 200);
  assert.deepEqual(ran.events.filter((e) => e.type === "stdout").map((e) => e.text), ["42"]);
  const failed = await command({ command: "false" });
  assert.equal(failed.events.find((e) => e.type === "error")?.error.evalue, "1");
  const id = ran.events[0].text;
  assert.equal(JSON.parse((await checked(execd, `/command/status/${id}`)).body).exit_code, 0);
  const started = await command({ command: "echo bg", background: true });
  assert.deepEqual(started.events.map((e) => e.type), ["init", "ping", "execution_complete"]);
  const bg = started.events[0].text;
  let logs;
  for (let i = 0; i < 50; i++) {
    logs = await checked(execd, `/command/${bg}/logs?cursor=0`);
    if (logs.body === "bg\n") break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(logs.body, "bg\n");
  const long = (await command({ command: "sleep 30", background: true })).events[0].text;
  assert.equal((await checked(execd, `/command?id=${long}`, { method: "DELETE" })).status, 200);
  assert.equal((await checked(execd, "/command/status/unknown")).status, 404);
  const session = JSON.parse((await checked(execd, "/session", post({ cwd: "/tmp" }))).body).session_id;
  const first = await streamed(checked, streams, `/session/${session}/run`, { command: "cd /workspace && export V=7" });
  assert.equal(first.status, 200);
  const second = await streamed(checked, streams, `/session/${session}/run`, { command: "echo $PWD $V" });
  assert.deepEqual(second.events.filter((e) => e.type === "stdout").map((e) => e.text), ["/workspace 7"]);
  assert.equal((await checked(execd, `/session/${session}`, { method: "DELETE" })).status, 200);
  assert.equal((await checked(execd, "/metrics")).status, 200);
});

check("code contexts run real interpreters", async () => {
  const context = JSON.parse((await checked(execd, "/code/context", post({ language: "python", cwd: "/workspace" }))).body);
  assert.equal(context.language, "python");
  const cell = (code) => streamed(checked, streams, "/code", { code, context: { id: context.id, language: "python" } });
  await cell("x = 6 * 7");
  const second = await cell("print('value')\nx");
  assert.equal(second.status, 200);
  assert.deepEqual(second.events.filter((e) => e.type === "stdout").map((e) => e.text), ["value\n"]);
  assert.equal(second.events.find((e) => e.type === "result")?.results.text, "42");
  assert.equal(second.events.find((e) => e.type === "execution_count")?.execution_count, 2);
  const raised = await cell("1 / 0");
  assert.equal(raised.events.find((e) => e.type === "error")?.error.ename, "ZeroDivisionError");
  const listed = JSON.parse((await checked(execd, "/code/contexts?language=python")).body);
  assert.deepEqual(listed.map((c) => c.id), [context.id]);
  assert.equal((await checked(execd, "/code/context", post({ language: "java" }))).status, 500);
  assert.equal((await checked(execd, `/code/contexts/${context.id}`, { method: "DELETE" })).status, 200);
});

check("files and directories on the sandbox's own tree", async () => {
  const form = new FormData();
  form.append("metadata", new Blob([JSON.stringify({ path: "/workspace/a.txt" })], { type: "application/json" }), "metadata");
  form.append("file", new Blob(["content"], { type: "application/octet-stream" }), "a.txt");
  assert.equal((await checked(execd, "/files/upload", { method: "POST", body: form })).status, 200);
  assert.equal((await checked(execd, "/files/download?path=/workspace/a.txt")).body, "content");
  const ranged = await checked(execd, "/files/download?path=/workspace/a.txt", { headers: { Range: "bytes=1-3" } });
  assert.equal(ranged.status, 206);
  assert.equal(ranged.body, "ont");
  assert.equal((await checked(execd, "/directories", post({ "/workspace/d/e": { mode: 755 } }))).status, 200);
  const listed = JSON.parse((await checked(execd, "/directories/list?path=/workspace&depth=2")).body);
  assert.deepEqual(listed.map((e) => e.path).sort(), ["/workspace/a.txt", "/workspace/d", "/workspace/d/e"]);
  const info = JSON.parse((await checked(execd, "/files/info?path=/workspace/a.txt&path=/workspace/d")).body);
  assert.deepEqual(Object.keys(info).sort(), ["/workspace/a.txt", "/workspace/d"]);
  assert.equal((await checked(execd, "/files/mv", post([{ src: "/workspace/a.txt", dest: "/workspace/m/a.txt" }]))).status, 200);
  assert.equal((await checked(execd, "/files/permissions", post({ "/workspace/m/a.txt": { mode: 600 } }))).status, 200);
  const searched = JSON.parse((await checked(execd, "/files/search?path=/workspace&pattern=*.txt")).body);
  assert.deepEqual(searched.map((e) => [e.path, e.mode]), [["/workspace/m/a.txt", 600]]);
  const counts = JSON.parse((await checked(execd, "/files/replace?verbose=true",
                                           post({ "/workspace/m/a.txt": { old: "content", new: "text" } }))).body);
  assert.deepEqual(counts, { "/workspace/m/a.txt": { replacedCount: 1 } });
  assert.equal((await checked(execd, "/files/mv", post([{ src: "/workspace/gone", dest: "/workspace/b" }]))).status, 404);
  assert.equal((await checked(execd, "/files/download?path=/workspace/nope")).status, 404);
  assert.equal((await checked(execd, "/files?path=/workspace/m/a.txt", { method: "DELETE" })).status, 200);
  assert.equal((await checked(execd, "/directories?path=/workspace/d", { method: "DELETE" })).status, 200);
  assert.equal((await checked(execd, "/directories/list?path=/workspace/d")).status, 404);
});

check("faults on a real sandbox, its kill last", async () => {
  await inject({ operation: "exec", action: "http_error", status: 500, code: "RUNTIME_ERROR", message: "injected" });
  assert.equal((await command({ command: "true" })).status, 500);
  await inject({ operation: "exec", action: "signal_exit" });
  assert.equal((await command({ command: "true" })).status, 200);
  assert.equal((await checked(lifecycle, `/sandboxes/${sandboxId}`, { method: "DELETE", headers: key })).status, 204);
  assert.equal((await checked(lifecycle, `/sandboxes/${sandboxId}`, { headers: key })).status, 404);
});
