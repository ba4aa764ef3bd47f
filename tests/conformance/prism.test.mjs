// Stoplight Prism (pinned in package-lock.json) in front of `ngfail serve`, validating every
// request and reply against the official OpenAPI specs: the lifecycle API and execd, every
// route and every fault reply. With --errors, a violation turns the reply into a 500 whose
// `sl-violations` header names it; statuses a spec does not document (the 429, 502, 503
// and 504 real servers send) are warnings, not errors.
//
//   NGFAIL_CLI=build/dev/src/cli/ngfail node --test tests/conformance/prism.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { checkEvent, checker, eventsOf, inject as injectInto, json, key, startPrism, startServe, stopAll,
         streamed } from "./prism_support.mjs";

let serve;     // host:port of ngfail serve
let lifecycle; // Prism in front of /v1
let execd;     // Prism in front of one sandbox's execd
let streams;   // the same, reporting violations in a header instead of replacing the reply
let sandboxId;
let diagnostics; // Prism in front of /v1 with the diagnostics spec

const checked = checker(() => [execd, streams]);
const inject = (fault) => injectInto(serve, fault);

const command = (body) => streamed(checked, streams, "/command", body);

before(async () => {
  serve = await startServe();
  const created = await fetch(`http://${serve}/v1/sandboxes`, {
    method: "POST", headers: { ...key, ...json },
    body: JSON.stringify({ image: { uri: "python:3.11" }, entrypoint: ["sleep", "inf"] }),
  });
  sandboxId = (await created.json()).id;
  lifecycle = await startPrism("sandbox-lifecycle.yml", `http://${serve}/v1`);
  diagnostics = await startPrism("diagnostic-api.yml", `http://${serve}/v1`);
  const direct = await (await fetch(`http://${serve}/v1/sandboxes/${sandboxId}/endpoints/44772`, { headers: key })).json();
  execd = await startPrism("execd-api.yaml", `http://${direct.endpoint}`);
  // With --errors Prism replaces a streamed reply by its verdict; this one passes it through.
  streams = await startPrism("execd-api.yaml", `http://${direct.endpoint}`, { errors: false });
});

after(stopAll);

test("the diagnostics routes, and a create that never starts, as the specs describe them", async () => {
  const created = await checked(lifecycle, "/sandboxes", { method: "POST", headers: { ...key, ...json },
    body: JSON.stringify({ image: { uri: "python:3.11" }, entrypoint: ["sleep", "inf"] }) });
  const id = JSON.parse(created.body).id;
  for (const kind of ["logs", "events"]) {
    for (const scope of ["all", "container", "lifecycle", "runtime", "network", "process"]) {
      const r = await checked(diagnostics, `/sandboxes/${id}/diagnostics/${kind}?scope=${scope}`, { headers: key });
      assert.equal(r.status, 200, r.body);
      const d = JSON.parse(r.body);
      assert.equal(d.kind, kind);
      assert.equal(d.scope, scope);
      assert.equal(d.delivery, "inline");
    }
    assert.equal((await checked(diagnostics, `/sandboxes/${id}/diagnostics/${kind}?scope=kernel`, { headers: key })).status, 400);
    assert.equal((await checked(diagnostics, `/sandboxes/missing/diagnostics/${kind}?scope=all`, { headers: key })).status, 404);
    assert.equal((await checked(diagnostics, `/sandboxes/${id}/diagnostics/${kind}?scope=all`,
                                { headers: { "OPEN-SANDBOX-API-KEY": "wrong" } })).status, 401);
  }
  // pod_ready_timeout: the 504 (a status the lifecycle spec leaves out: a warning), then the
  // sandbox's status and diagnostics name the cause.
  await inject({ operation: "create", action: "pod_ready_timeout", cause: "quota", stall_ms: 50 });
  const timedOut = await checked(lifecycle, "/sandboxes", { method: "POST", headers: { ...key, ...json },
    body: JSON.stringify({ image: { uri: "python:3.11" }, entrypoint: ["sleep", "inf"] }) });
  assert.equal(timedOut.status, 504, timedOut.body);
  const named = /sandbox (\S+) to be Running/.exec(JSON.parse(timedOut.body).message)[1];
  const status = JSON.parse((await checked(lifecycle, `/sandboxes/${named}`, { headers: key })).body).status;
  assert.deepEqual([status.state, status.reason], ["Failed", "QuotaExceeded"]);
  const events = JSON.parse((await checked(diagnostics, `/sandboxes/${named}/diagnostics/events?scope=runtime`,
                                           { headers: key })).body);
  assert.match(events.content, /exceeded quota/);
  // A server without the API: 501, as the spec documents it. Asked directly: Prism's proxy
  // answers an upstream's 501 with a mocked reply of its own (its documented fallback); the
  // body is the same error envelope Prism has checked on the 400 and 404 above.
  const without = await startServe(["--no-diagnostics"]);
  const other = await (await fetch(`http://${without}/v1/sandboxes`, { method: "POST", headers: { ...key, ...json },
    body: JSON.stringify({ image: { uri: "python:3.11" }, entrypoint: ["sleep", "inf"] }) })).json();
  const unserved = await fetch(`http://${without}/v1/sandboxes/${other.id}/diagnostics/logs?scope=all`, { headers: key });
  assert.equal(unserved.status, 501);
  assert.equal((await unserved.json()).code, "NOT_IMPLEMENTED");
});

test("every lifecycle route, as the spec describes it", async () => {
  const created = await checked(lifecycle, "/sandboxes", { method: "POST", headers: { ...key, ...json },
    body: JSON.stringify({ image: { uri: "python:3.11" }, entrypoint: ["python", "/app/main.py"], timeout: 3600,
                           resourceLimits: { cpu: "500m", memory: "512Mi" }, metadata: { team: "rl" } }) });
  assert.equal(created.status, 202);
  const id = JSON.parse(created.body).id;
  assert.equal((await checked(lifecycle, `/sandboxes/${id}`, { headers: key })).status, 200);
  assert.equal((await checked(lifecycle, "/sandboxes?page=1&pageSize=10", { headers: key })).status, 200);
  const filtered = await checked(lifecycle, "/sandboxes?state=running&state=Paused&metadata=team%3Drl", { headers: key });
  assert.deepEqual(JSON.parse(filtered.body).items.map((s) => s.id), [id]);
  const none = await checked(lifecycle, "/sandboxes?metadata=team%3Drl%26stage%3Dnone", { headers: key });
  assert.deepEqual(JSON.parse(none.body).items, []);
  assert.equal((await checked(lifecycle, `/sandboxes/${id}/endpoints/44772`, { headers: key })).status, 200);
  assert.equal((await checked(lifecycle, `/sandboxes/${id}/endpoints/8080?use_server_proxy=true`, { headers: key })).status, 200);
  assert.equal((await checked(lifecycle, `/sandboxes/${id}/metadata`, { method: "PATCH", headers: { ...key, ...json },
                                                                         body: JSON.stringify({ stage: "eval" }) })).status, 200);
  const renewed = await checked(lifecycle, `/sandboxes/${id}/renew-expiration`, { method: "POST", headers: { ...key, ...json },
    body: JSON.stringify({ expiresAt: new Date(Date.now() + 7200e3).toISOString() }) });
  assert.equal(renewed.status, 200);
  assert.equal((await checked(lifecycle, `/sandboxes/${id}/pause`, { method: "POST", headers: key })).status, 202);
  assert.equal((await checked(lifecycle, `/sandboxes/${id}/resume`, { method: "POST", headers: key })).status, 202);
  const snapshot = await checked(lifecycle, `/sandboxes/${id}/snapshots`, { method: "POST", headers: { ...key, ...json },
                                                                         body: JSON.stringify({ name: "checkpoint" }) });
  assert.equal(snapshot.status, 202, snapshot.body);
  const snapshotId = JSON.parse(snapshot.body).id;
  assert.equal((await checked(lifecycle, `/snapshots/${snapshotId}`, { headers: key })).status, 200);
  const snapshots = await checked(lifecycle, `/snapshots?sandboxId=${id}&state=Ready&state=Failed&page=1&pageSize=5`, { headers: key });
  assert.deepEqual(JSON.parse(snapshots.body).items.map((s) => s.id), [snapshotId]);
  const restored = await checked(lifecycle, "/sandboxes", { method: "POST", headers: { ...key, ...json },
                                                             body: JSON.stringify({ snapshotId }) });
  assert.equal(restored.status, 202, restored.body);
  assert.equal((await checked(lifecycle, `/snapshots/${snapshotId}`, { method: "DELETE", headers: key })).status, 204);
  assert.equal((await checked(lifecycle, `/snapshots/${snapshotId}`, { headers: key })).status, 404);
  assert.equal((await checked(lifecycle, `/sandboxes/${id}`, { method: "DELETE", headers: key })).status, 204);
});

test("every lifecycle error reply, documented or not", async () => {
  assert.equal((await checked(lifecycle, "/sandboxes/missing", { headers: key })).status, 404);
  assert.equal((await checked(lifecycle, `/sandboxes/${sandboxId}`, { headers: { "OPEN-SANDBOX-API-KEY": "wrong" } })).status, 401);
  for (const [status, code] of [[409, "KUBERNETES::INVALID_STATE"], [500, "KUBERNETES::API_ERROR"],
                                [429, "KUBERNETES::POOL_CAPACITY_EXHAUSTED"], [502, "BACKEND_CONNECTION_FAILED"],
                                [503, "KUBERNETES::INITIALIZATION_ERROR"], [504, "KUBERNETES::POD_READY_TIMEOUT"],
                                [403, "KUBERNETES::QUOTA_EXCEEDED"]]) {
    await inject({ operation: "create", action: "http_error", status, code, message: "injected", retry_after_s: 3 });
    const r = await checked(lifecycle, "/sandboxes", { method: "POST", headers: { ...key, ...json },
      body: JSON.stringify({ image: { uri: "python:3.11" }, entrypoint: ["sleep", "inf"] }) });
    assert.equal(r.status, status, r.body);
  }
  for (const action of ["image_pull_failure"]) {
    await inject({ operation: "create", action });
    const r = await checked(lifecycle, "/sandboxes", { method: "POST", headers: { ...key, ...json },
      body: JSON.stringify({ image: { uri: "nope:1" }, entrypoint: ["x"] }) });
    assert.equal(r.status, 504);
  }
  await inject({ operation: "get", action: "sandbox_status", state: "Failed", reason: "FAILED" });
  assert.equal((await checked(lifecycle, `/sandboxes/${sandboxId}`, { headers: key })).status, 200);
});

test("every execd route, as the spec describes it", async () => {
  assert.equal((await checked(execd, "/ping")).status, 200);
  const ran = await command({ command: "echo hello", cwd: "/workspace", timeout: 30000 });
  assert.equal(ran.status, 200);
  assert.deepEqual(ran.events.map((e) => e.type), ["init", "ping", "stdout", "execution_complete"]);
  const commandId = ran.events[0].text;
  const status = await checked(execd, `/command/status/${commandId}`);
  assert.equal(JSON.parse(status.body).content, "echo hello");
  const bg = await command({ command: "echo bg", background: true });
  // execd completes a background command's run once it has started; the command goes on.
  assert.deepEqual(bg.events.map((e) => e.type), ["init", "ping", "execution_complete"]);
  const bgId = bg.events[0].text;
  await new Promise((r) => setTimeout(r, 100));
  const logs = await checked(execd, `/command/${bgId}/logs?cursor=0`);
  assert.equal(logs.body, "bg\n");
  assert.equal(logs.headers.get("execd-commands-tail-cursor"), "3");
  const form = new FormData();
  form.append("metadata", new Blob([JSON.stringify({ path: "/tmp/a.txt" })], { type: "application/json" }), "metadata");
  form.append("file", new Blob(["content"], { type: "application/octet-stream" }), "a.txt");
  assert.equal((await checked(execd, "/files/upload", { method: "POST", body: form })).status, 200);
  const file = await checked(execd, "/files/download?path=/tmp/a.txt");
  assert.equal(file.body, "content");
  const ranged = await checked(execd, "/files/download?path=/tmp/a.txt", { headers: { Range: "bytes=1-3" } });
  assert.equal(ranged.status, 206);
  assert.equal(ranged.body, "ont");
  assert.equal((await checked(execd, "/files/download?path=/tmp/a.txt&offset=1&limit=1")).body, "content");
  const json = { "Content-Type": "application/json" };
  assert.equal((await checked(execd, "/directories", { method: "POST", headers: json,
                                                        body: JSON.stringify({ "/tmp/d/e": { mode: 755 } }) })).status, 200);
  const listed = JSON.parse((await checked(execd, "/directories/list?path=/tmp&depth=2")).body);
  assert.deepEqual(listed.map((e) => e.path), ["/tmp/a.txt", "/tmp/d", "/tmp/d/e"]);
  const info = JSON.parse((await checked(execd, "/files/info?path=/tmp/a.txt&path=/tmp/d")).body);
  assert.deepEqual(Object.keys(info).sort(), ["/tmp/a.txt", "/tmp/d"]);
  const post = (body) => ({ method: "POST", headers: json, body: JSON.stringify(body) });
  assert.equal((await checked(execd, "/files/mv", post([{ src: "/tmp/a.txt", dest: "/tmp/m/a.txt" }]))).status, 200);
  assert.equal((await checked(execd, "/files/permissions",
                              post({ "/tmp/m/a.txt": { mode: 600, owner: "app", group: "app" } }))).status, 200);
  const searched = JSON.parse((await checked(execd, "/files/search?path=/tmp&pattern=*.txt")).body);
  assert.deepEqual(searched.map((e) => [e.path, e.mode, e.owner]), [["/tmp/m/a.txt", 600, "app"]]);
  const counts = JSON.parse((await checked(execd, "/files/replace?verbose=true",
                                           post({ "/tmp/m/a.txt": { old: "content", new: "text" } }))).body);
  assert.deepEqual(counts, { "/tmp/m/a.txt": { replacedCount: 1 } });
  assert.equal((await checked(execd, "/files/mv", post([{ src: "/tmp/m/a.txt", dest: "/tmp/a.txt" }]))).status, 200);
  assert.equal((await checked(execd, "/files/mv", post([{ src: "/tmp/gone", dest: "/tmp/b" }]))).status, 404);
  assert.equal((await checked(execd, "/files?path=/tmp/a.txt", { method: "DELETE" })).status, 200);
  assert.equal((await checked(execd, "/directories?path=/tmp/d", { method: "DELETE" })).status, 200);
  assert.equal((await checked(execd, "/directories/list?path=/tmp/d")).status, 404);
  const session = JSON.parse((await checked(execd, "/session", { method: "POST", headers: json,
                                                                body: JSON.stringify({ cwd: "/tmp" }) })).body).session_id;
  const inSession = await checked(streams, `/session/${session}/run`, { method: "POST", headers: json, stream: true,
                                                                     body: JSON.stringify({ command: "pwd", timeout: 5000 }) });
  assert.equal(inSession.status, 200);
  assert.match(inSession.body, /"text":"\/tmp\\n"/);
  assert.equal((await checked(execd, `/session/${session}`, { method: "DELETE" })).status, 200);
  assert.equal((await checked(execd, `/session/${session}`, { method: "DELETE" })).status, 404);
  assert.equal((await checked(execd, "/metrics")).status, 200);
  const context = JSON.parse((await checked(execd, "/code/context", post({ language: "python", cwd: "/tmp" }))).body);
  assert.equal(context.language, "python");
  assert.equal(JSON.parse((await checked(execd, `/code/contexts/${context.id}`)).body).id, context.id);
  assert.deepEqual(JSON.parse((await checked(execd, "/code/contexts?language=python")).body).map((c) => c.id), [context.id]);
  const code = await checked(streams, "/code", { method: "POST", headers: json, stream: true,
                                                 body: JSON.stringify({ context: { id: context.id, language: "python" },
                                                                        code: "x = 1\nprint(x + 1)\nx" }) });
  assert.equal(code.status, 200);
  const codeEvents = eventsOf(code.body);
  codeEvents.forEach(checkEvent);
  assert.deepEqual(codeEvents.map((e) => e.type), ["init", "ping", "stdout", "execution_count", "result", "execution_complete"]);
  assert.deepEqual(codeEvents[4].results, { text: "1" });
  assert.equal((await checked(execd, `/code?id=${context.id}`, { method: "DELETE" })).status, 200);
  assert.equal((await checked(execd, `/code/contexts/${context.id}`, { method: "DELETE" })).status, 200);
  assert.equal((await checked(execd, `/code/contexts/${context.id}`)).status, 404);
  assert.equal((await checked(execd, "/code/contexts?language=python", { method: "DELETE" })).status, 200);
  const longId = (await command({ command: "sleep 30", background: true })).events[0].text;
  assert.equal((await checked(execd, `/command?id=${longId}`, { method: "DELETE" })).status, 200);
});

test("every execd fault reply", async () => {
  assert.equal((await checked(execd, "/command/status/unknown")).status, 404);
  assert.equal((await checked(execd, "/files/download?path=/nope")).status, 404);
  await inject({ operation: "exec", action: "http_error", status: 500, code: "RUNTIME_ERROR", message: "injected" });
  assert.equal((await command({ command: "x" })).status, 500);
  // oom_kill last: it fails the sandbox, after which execd answers 502 as the proxy would
  for (const action of ["signal_exit", "no_terminal_event", "oom_kill"]) {
    await inject({ operation: "exec", action });
    assert.equal((await command({ command: "x" })).status, 200);
  }
  const gone = await checked(lifecycle, `/sandboxes/${sandboxId}`, { headers: key });
  assert.equal(JSON.parse(gone.body).status.state, "Failed");
});
