// `ngfail serve`'s interactive terminals checked by a WebSocket client that is not ours:
// undici's `WebSocket` (Node's own implementation, pinned in package-lock.json as a
// dependency of the packages there). It attaches to a terminal, exchanges execd's frames
// (0x00 + stdin in; 0x01 + stdout, 0x03 + offset + replay out; JSON text frames), and sees a
// takeover close it with 4001 TAKEN_OVER.
//
//   NGFAIL_CLI=build/dev/src/cli/ngfail node --test tests/conformance/terminal.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { WebSocket } from "undici";

const cli = process.env.NGFAIL_CLI;
if (!cli) throw new Error("set NGFAIL_CLI to the ngfail binary");

let child;
let domain;

before(async () => {
  child = spawn(cli, ["serve"], { stdio: ["ignore", "pipe", "inherit"] });
  const first = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`ngfail serve exited with ${code}`)));
  });
  const match = /^listening on http:\/\/(.+)$/.exec(first);
  assert.ok(match, `first line: ${first}`);
  domain = match[1];
});

after(async () => {
  const code = await new Promise((resolve) => {
    child.once("exit", resolve);
    child.kill("SIGTERM");
  });
  assert.equal(code, 0);
});

async function newTerminal() {
  const sandbox = await fetch(`http://${domain}/v1/sandboxes`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ image: { uri: "python:3.11" }, entrypoint: ["sleep", "inf"] }),
  });
  assert.equal(sandbox.status, 202);
  const { id } = await sandbox.json();
  const execd = `${domain}/sandboxes/${id}/proxy/44772`;
  const made = await fetch(`http://${execd}/pty`, { method: "POST" });
  assert.equal(made.status, 201);
  const { session_id } = await made.json();
  return { execd, terminal: session_id };
}

// A peer: every frame it receives, in order, and its close.
function attach(url) {
  const ws = new WebSocket(url);
  ws.binaryType = "arraybuffer";
  const frames = [];
  let wake = () => {};
  ws.onmessage = (m) => {
    frames.push(typeof m.data === "string" ? { text: m.data } : { bytes: new Uint8Array(m.data) });
    wake();
  };
  const closed = new Promise((resolve) => {
    ws.onclose = (e) => {
      resolve({ code: e.code, reason: e.reason });
      wake();
    };
  });
  const opened = new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  // Waits until `done(frames)` holds (5 s at most).
  const until = async (done) => {
    const deadline = Date.now() + 5000;
    while (!done(frames)) {
      assert.ok(Date.now() < deadline, `waited for frames; have ${JSON.stringify(frames)}`);
      await new Promise((resolve) => {
        wake = resolve;
        setTimeout(resolve, 50);
      });
    }
  };
  const output = () =>
    frames
      .filter((f) => f.bytes && (f.bytes[0] === 1 || f.bytes[0] === 2))
      .map((f) => Buffer.from(f.bytes.subarray(1)).toString())
      .join("");
  const type = (text) => ws.send(Uint8Array.from([0, ...Buffer.from(text)]));
  return { ws, frames, closed, opened, until, output, type };
}

test("an independent WebSocket client attaches, types, reads, and re-attaches with replay", async () => {
  const { execd, terminal } = await newTerminal();
  const first = attach(`ws://${execd}/pty/${terminal}/ws`);
  await first.opened;
  await first.until((f) => f.some((x) => x.text));
  assert.deepEqual(JSON.parse(first.frames.find((x) => x.text).text), {
    type: "connected",
    session_id: terminal,
    mode: "pty",
  });
  first.type("echo from-node\r");
  await first.until(() => first.output().includes("from-node\r\n$ "));
  first.ws.send(JSON.stringify({ type: "ping" }));
  await first.until((f) => f.some((x) => x.text && JSON.parse(x.text).type === "pong"));
  first.ws.close(1000);
  await first.closed;

  const status = await (await fetch(`http://${execd}/pty/${terminal}`)).json();
  assert.equal(status.running, true);
  const again = attach(`ws://${execd}/pty/${terminal}/ws?since=0`);
  await again.opened;
  await again.until((f) => f.length >= 2);
  const replay = again.frames[0].bytes;
  assert.equal(replay[0], 3, "the replay frame comes first");
  const offset = new DataView(replay.buffer, replay.byteOffset + 1, 8).getBigInt64(0);
  assert.equal(offset, 0n);
  assert.equal(replay.length - 9, status.output_offset);
  assert.match(Buffer.from(replay.subarray(9)).toString(), /echo from-node\r\nfrom-node\r\n\$ /);
  again.ws.close(1000);
  await again.closed;
});

test("a second client is refused while one holds it, and a takeover closes the holder with 4001", async () => {
  const { execd, terminal } = await newTerminal();
  const holder = attach(`ws://${execd}/pty/${terminal}/ws`);
  await holder.opened;
  const refused = attach(`ws://${execd}/pty/${terminal}/ws`);
  await assert.rejects(refused.opened, "the upgrade is declined (409)");
  const taker = attach(`ws://${execd}/pty/${terminal}/ws?takeover=1`);
  await taker.opened;
  const { code, reason } = await holder.closed;
  assert.equal(code, 4001);
  assert.equal(reason, "TAKEN_OVER");
  taker.type("exit 7\r");
  await taker.until((f) => f.some((x) => x.text && JSON.parse(x.text).type === "exit"));
  const exit = JSON.parse(taker.frames.filter((x) => x.text).at(-1).text);
  assert.deepEqual(exit, { type: "exit", exit_code: 7 });
  assert.equal((await taker.closed).code, 1000);
});
