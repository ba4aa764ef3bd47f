// The official TypeScript SDK's exec rate against a running `ngfail serve`, for
// benchmarks/run: one exec at a time, and `parallel` at once (as many workers, each starting
// the next exec when its last one ends, as client_benchmark and the Go SDK's program do), each
// on one sandbox made with the SDK's default options. Prints Google Benchmark JSON (ns per exec),
// plus the per-exec latency distribution of the one-at-a-time run, so a ratio is quoted
// only when neither side is handicapped.
//   node sdk_benchmark.mjs HOST:PORT API_KEY ROUNDS PARALLEL
import { Sandbox, ConnectionConfig } from "@alibaba-group/opensandbox";

const [domain, apiKey, roundsText, parallelText] = process.argv.slice(2);
const rounds = Number(roundsText ?? 500);
const parallel = Number(parallelText ?? 256);

const sandbox = await Sandbox.create({
  image: "python:3.11",
  connectionConfig: new ConnectionConfig({ domain, apiKey, protocol: "http" }),
});

async function echo(i) {
  const run = await sandbox.commands.run(`echo ${i}`);
  if (run.exitCode !== 0 && run.exitCode !== undefined && run.exitCode !== null) throw new Error(`exit ${run.exitCode}`);
}

for (let i = 0; i < 50; ++i) await echo(i);  // warm up: connections, JIT

const latencies = [];
let start = process.hrtime.bigint();
for (let i = 0; i < rounds; ++i) {
  const t = process.hrtime.bigint();
  await echo(i);
  latencies.push(Number(process.hrtime.bigint() - t));
}
const oneAtATime = Number(process.hrtime.bigint() - start) / rounds;

start = process.hrtime.bigint();
const total = Math.max(rounds, parallel);
let next = 0;
async function worker() {
  while (next < total) await echo(next++);
}
await Promise.all(Array.from({ length: parallel }, worker));
const atOnce = Number(process.hrtime.bigint() - start) / total;

latencies.sort((a, b) => a - b);
const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
await sandbox.kill();
console.log(JSON.stringify({
  benchmarks: [
    { name: "sdk_exec_one_at_a_time", run_name: "sdk_exec_one_at_a_time", real_time: oneAtATime, time_unit: "ns",
      p50_ns: at(0.5), p99_ns: at(0.99), max_ns: latencies[latencies.length - 1] },
    { name: `sdk_exec_${parallel}_at_once`, run_name: `sdk_exec_${parallel}_at_once`, real_time: atOnce, time_unit: "ns" },
  ],
}));
