// The official OpenSandbox TypeScript SDK (pinned in package-lock.json), unchanged and with
// its default options, against `ngfail serve`: what a user of the SDK would do, and what the
// SDK surfaces when the emulator injects the faults real deployments show.
//
//   NGFAIL_CLI=build/dev/src/cli/ngfail node --test tests/conformance/sdk.test.mjs
//
// NGFAIL_RUNTIME=process runs the same against `ngfail serve --runtime process` (real
// commands in bubblewrap sandboxes); where this host cannot run it, every test is skipped
// with the server's reason. What differs is what differs in a real image: files live in
// its writable folders, its users are root and sandbox, and it takes no snapshots yet.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { Sandbox, SandboxManager, ConnectionConfig, SandboxApiException } from "@alibaba-group/opensandbox";

const cli = process.env.NGFAIL_CLI;
if (!cli) throw new Error("set NGFAIL_CLI to the ngfail binary");
const apiKey = "sk-conformance-1";
const runtime = process.env.NGFAIL_RUNTIME ?? "simulated";
const real = runtime === "process";
const runtimeArgs = real ? ["--runtime", "process"] : [];

let server;
let domain;

async function startServer(args) {
  const child = spawn(cli, ["serve", "--pending-ms", "300", ...args], {
    env: { ...process.env, OPEN_SANDBOX_API_KEY: apiKey },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let said = "";
  child.stderr.on("data", (bytes) => {
    said += bytes;
    process.stderr.write(bytes);
  });
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise((resolve, reject) => {
    lines.once("line", resolve);
    child.once("exit", (code) => {
      const why = said.trim().split("\n")[0] ?? "";
      reject(real && why.startsWith("ngfail serve: ") ? new Unavailable(why) : new Error(`ngfail serve exited with ${code}`));
    });
  });
  const match = /^listening on http:\/\/(.+)$/.exec(first);
  assert.ok(match, `first line: ${first}`);
  return { child, domain: match[1] };
}

function stopServer(s) {
  return new Promise((resolve) => {
    s.child.once("exit", (code, signal) => resolve({ code, signal }));
    s.child.kill("SIGTERM");
  });
}

class Unavailable extends Error {}

// The process runtime refuses to start, with one line saying why, where the host lacks what
// it needs: then every test is skipped with that line.
let unavailable = false;
try {
  server = await startServer(runtimeArgs);
  domain = server.domain;
} catch (e) {
  if (!(e instanceof Unavailable)) throw e;
  unavailable = e.message;
}
const skipAll = unavailable ? { skip: unavailable } : {};

after(async () => {
  if (!server) return;
  const { code } = await stopServer(server);
  assert.equal(code, 0, "ngfail serve exits cleanly on SIGTERM");
});

// Each test, skipped where the runtime cannot run (or `notReal` says why the process
// runtime does not do what it checks).
function check(name, options, body) {
  if (typeof options === "function") [body, options] = [options, {}];
  const skip = unavailable || (real && options.notReal);
  return test(name, skip ? { skip } : {}, body);
}

const connection = () => new ConnectionConfig({ domain, apiKey, protocol: "http" });

async function injectFault(fault) {
  const res = await fetch(`http://${domain}/_ngfail/faults`, {
    method: "POST",
    headers: { "OPEN-SANDBOX-API-KEY": apiKey, "content-type": "application/json" },
    body: JSON.stringify(fault),
  });
  assert.equal(res.status, 201, await res.text());
}

// A sandbox made with the SDK's defaults, killed whatever the body does.
async function withSandbox(body) {
  const sandbox = await Sandbox.create({ image: "python:3.11", connectionConfig: connection() });
  try {
    await body(sandbox);
  } finally {
    await sandbox.kill();
  }
}

// What a command printed. Real execd (and the process runtime) sends a line per event,
// without its end (a blank line as "\n"); the simulated runtime sends what a run printed
// in one event.
const stdoutOf = (execution) =>
  execution.logs.stdout.map((m) => (!real ? m.text : m.text === "\n" ? "\n" : `${m.text}\n`)).join("");

check("the default create waits for readiness (Pending, then execd /ping) and runs commands", async () => {
  await withSandbox(async (sandbox) => {
    const info = await sandbox.getInfo();
    assert.equal(info.status.state, "Running");
    const hello = await sandbox.commands.run("echo hello");
    assert.equal(stdoutOf(hello), "hello\n");
    assert.equal(hello.exitCode, 0);
    assert.ok(hello.id, "the init event names the execution");
    const failed = await sandbox.commands.run("exit 3");
    assert.equal(failed.exitCode, 3);
    const status = await sandbox.commands.getCommandStatus(hello.id);
    assert.equal(status.running, false);
    assert.equal(status.exitCode, 0);
    assert.equal(status.content, "echo hello");
    assert.ok(status.startedAt instanceof Date && status.finishedAt instanceof Date);
  });
});

check("a command through the server proxy, as useServerProxy asks", async () => {
  const sandbox = await Sandbox.create({
    image: "python:3.11",
    connectionConfig: new ConnectionConfig({ domain, apiKey, protocol: "http", useServerProxy: true }),
  });
  try {
    const endpoint = await sandbox.getEndpoint(44772);
    assert.match(endpoint.endpoint, /\/sandboxes\/[^/]+\/proxy\/44772$/);
    assert.equal(stdoutOf(await sandbox.commands.run("echo via proxy")), "via proxy\n");
  } finally {
    await sandbox.kill();
  }
});

check("background commands, their logs with the tail cursor, and interrupt", async () => {
  await withSandbox(async (sandbox) => {
    let completed = 0;
    const started = await sandbox.commands.run("echo from the background", { background: true },
                                               { onExecutionComplete: () => void completed++ });
    assert.ok(started.id);
    assert.ok(started.complete, "execd completes a background command's run once it has started");
    assert.equal(completed, 1);
    let status;
    for (let i = 0; i < 50; i++) {
      status = await sandbox.commands.getCommandStatus(started.id);
      if (!status.running) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(status.exitCode, 0);
    const logs = await sandbox.commands.getBackgroundCommandLogs(started.id);
    assert.equal(logs.content, "from the background\n");
    const later = await sandbox.commands.getBackgroundCommandLogs(started.id, logs.cursor);
    assert.equal(later.content, "", "nothing after the cursor");

    const long = await sandbox.commands.run("sleep 30", { background: true });
    await sandbox.commands.interrupt(long.id);
    for (let i = 0; i < 50; i++) {
      status = await sandbox.commands.getCommandStatus(long.id);
      if (!status.running) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(status.exitCode, -1, "interrupted: killed by a signal");
  });
});

check("metrics: the SDK reads execd's sample", async () => {
  await withSandbox(async (sandbox) => {
    const m = await sandbox.metrics.getMetrics();
    assert.ok(m.cpuCount > 0 || m.cpu_count > 0, JSON.stringify(m));
  });
});

check("files: write, read back, and cat in a command", async () => {
  await withSandbox(async (sandbox) => {
    await sandbox.files.writeFiles([{ path: "/workspace/notes.txt", data: "line one\nline two\n" }]);
    assert.equal(await sandbox.files.readFile("/workspace/notes.txt"), "line one\nline two\n");
    assert.equal(stdoutOf(await sandbox.commands.run("cat /workspace/notes.txt")), "line one\nline two\n");
  });
});

check("snapshots: taken, polled to Ready, listed, restored with the files, deleted",
      { notReal: "the process runtime takes no snapshots yet (a 501)" }, async () => {
  const manager = SandboxManager.create({ connectionConfig: connection() });
  await withSandbox(async (sandbox) => {
    await sandbox.files.writeFiles([{ path: "/workspace/state.txt", data: "kept" }]);
    const taken = await manager.createSnapshot(sandbox.id, { name: "checkpoint" });
    assert.equal(taken.sandboxId, sandbox.id);
    assert.equal(taken.status.state, "Creating");
    let ready = await manager.getSnapshot(taken.id);
    for (let i = 0; i < 100 && ready.status.state === "Creating"; ++i) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      ready = await manager.getSnapshot(taken.id);
    }
    assert.equal(ready.status.state, "Ready");
    const listed = await manager.listSnapshots({ sandboxId: sandbox.id, states: ["Ready"] });
    assert.deepEqual(listed.items.map((s) => s.id), [taken.id]);
    const restored = await Sandbox.create({ snapshotId: taken.id, connectionConfig: connection() });
    try {
      assert.equal(await restored.files.readFile("/workspace/state.txt"), "kept");
    } finally {
      await restored.kill();
    }
    await manager.deleteSnapshot(taken.id);
    await assert.rejects(manager.getSnapshot(taken.id), apiError(404, "SNAPSHOT::NOT_FOUND"));
  });
});

check("bash sessions keep their directory and variables between runs", async () => {
  await withSandbox(async (sandbox) => {
    const session = await sandbox.commands.createSession({ workingDirectory: "/workspace/app" });
    await sandbox.commands.runInSession(session, "export GREETING=hello && cd /tmp");
    const run = await sandbox.commands.runInSession(session, "pwd && echo $GREETING");
    assert.equal(stdoutOf(run), "/tmp\nhello\n");
    await sandbox.commands.deleteSession(session);
    await assert.rejects(sandbox.commands.deleteSession(session), apiError(404, "CONTEXT_NOT_FOUND"));
  });
});

check("directories and files: made, listed, described, moved, searched, rewritten, read in parts, deleted", async () => {
  await withSandbox(async (sandbox) => {
    const files = sandbox.files;
    const w = real ? "/workspace/w" : "/w";  // a real image's writable folders
    const [owner, group] = real ? ["sandbox", "sandbox"] : ["app", "staff"];
    await files.createDirectories([{ path: `${w}/src`, mode: 755 }]);
    await files.writeFiles([{ path: `${w}/src/a.py`, data: "print('localhost')\n" },
                            { path: `${w}/conf.yaml`, data: "host: localhost\nport: 80\n" }]);
    const listed = await files.listDirectory({ path: w, depth: 2 });
    assert.deepEqual(listed.map((f) => f.path), [`${w}/conf.yaml`, `${w}/src`, `${w}/src/a.py`]);
    const info = await files.getFileInfo([`${w}/conf.yaml`]);
    assert.equal(info[`${w}/conf.yaml`].size, 25);
    await files.moveFiles([{ src: `${w}/src/a.py`, dest: `${w}/lib/a.py` }]);
    await files.setPermissions([{ path: `${w}/lib/a.py`, mode: 700, owner, group }]);
    assert.equal((await files.getFileInfo([`${w}/lib/a.py`]))[`${w}/lib/a.py`].mode, 700);
    const found = await files.search({ path: w, pattern: "*.{py,yaml}" });
    assert.deepEqual(found.map((f) => f.path).sort(), [`${w}/conf.yaml`, `${w}/lib/a.py`]);
    const replaced = await files.replaceContentsDetailed([{ path: `${w}/conf.yaml`, oldContent: "localhost", newContent: "0.0.0.0" }]);
    assert.deepEqual(replaced.map((r) => r.replacedCount), [1]);
    assert.equal(await files.readFile(`${w}/conf.yaml`, { range: "bytes=6-12" }), "0.0.0.0");
    assert.equal(await files.readFile(`${w}/conf.yaml`, { offset: 2, limit: 1 }), "port: 80");
    await files.deleteFiles([`${w}/conf.yaml`]);
    await files.deleteDirectories([w]);
    await assert.rejects(files.getFileInfo([`${w}/lib/a.py`]), apiError(404, "FILE_NOT_FOUND"));
  });
});

check("renew, metadata, pause and resume, then kill: the sandbox is gone", async () => {
  const sandbox = await Sandbox.create({
    image: "python:3.11",
    metadata: { team: "rl" },
    connectionConfig: connection(),
  });
  const renewed = await sandbox.renew(3600);
  assert.ok(Date.parse(renewed.expiresAt) > Date.now());
  const patched = await sandbox.patchMetadata({ stage: "eval", team: null });
  assert.deepEqual(patched.metadata, { stage: "eval" });
  await sandbox.pause();
  assert.equal((await sandbox.getInfo()).status.state, "Paused");
  await sandbox.resume();
  assert.equal((await sandbox.getInfo()).status.state, "Running");
  await sandbox.kill();
  await assert.rejects(sandbox.getInfo(), apiError(404, "KUBERNETES::SANDBOX_NOT_FOUND"));
});

check("a command killed by a signal reports exit -1, as execd does", async () => {
  await withSandbox(async (sandbox) => {
    await injectFault({ operation: "exec", action: "signal_exit" });
    const killed = await sandbox.commands.run("python train.py");
    assert.equal(killed.exitCode, -1);
    assert.equal(killed.error.value, "-1");
  });
});

check("an OOM kill on Kubernetes: exit -1, then Failed with OOMKilled only in the message", async () => {
  await withSandbox(async (sandbox) => {
    await injectFault({ operation: "exec", action: "oom_kill" });
    const killed = await sandbox.commands.run("python train.py");
    assert.equal(killed.exitCode, -1);
    const info = await sandbox.getInfo();
    assert.equal(info.status.state, "Failed");
    assert.equal(info.status.reason, "FAILED");
    assert.match(info.status.message, /OOMKilled/);
  });
});

// What the SDK surfaces for an API error: the status, the envelope's code and message, and
// the request id the server sent.
const apiError = (status, code) => (e) =>
  e instanceof SandboxApiException && e.statusCode === status && e.error.code === code &&
  /^[0-9a-f-]{36}$/.test(e.requestId ?? "");

check("faults on create surface as the SDK's API exceptions with their status and code", async () => {
  await injectFault({ operation: "create", action: "http_error", status: 429,
                      code: "KUBERNETES::POOL_CAPACITY_EXHAUSTED", message: "the pool is full", retry_after_s: 7 });
  await assert.rejects(Sandbox.create({ image: "python:3.11", connectionConfig: connection() }),
                       apiError(429, "KUBERNETES::POOL_CAPACITY_EXHAUSTED"));
  await injectFault({ operation: "create", action: "http_error", status: 502, code: "BACKEND_CONNECTION_FAILED",
                      message: "Could not connect to the backend sandbox" });
  await assert.rejects(Sandbox.create({ image: "python:3.11", connectionConfig: connection() }),
                       apiError(502, "BACKEND_CONNECTION_FAILED"));
  await injectFault({ operation: "create", action: "image_pull_failure" });
  await assert.rejects(Sandbox.create({ image: "registry.invalid/nope:1", connectionConfig: connection() }),
                       apiError(504, "KUBERNETES::POD_READY_TIMEOUT"));
  const wrongKey = new ConnectionConfig({ domain, apiKey: "sk-wrong", protocol: "http" });
  await assert.rejects(Sandbox.create({ image: "python:3.11", connectionConfig: wrongKey }),
                       apiError(401, "INVALID_API_KEY"));
});

check("an expired sandbox is gone, as Kubernetes deletes it", async () => {
  const sandbox = await Sandbox.create({ image: "python:3.11", connectionConfig: connection() });
  await injectFault({ operation: "get", action: "expire" });
  await assert.rejects(sandbox.getInfo(), apiError(404, "KUBERNETES::SANDBOX_NOT_FOUND"));
});
