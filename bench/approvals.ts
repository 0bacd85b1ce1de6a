/**
 * 1,000 runs waiting for a person's approval at once on one dev server and one worker process:
 * how long until all of them wait, the worker's RSS while they do (with most of them evicted from
 * its workflow cache), then all of them approved by Update: from each Update to its tool's start,
 * and from the first approval to all 1,000 completed. Compared in the same run with a floor.
 * About 5 minutes on 2 cores.
 *
 *   npx tsx bench/approvals.ts
 *   (env: BENCH_APPROVALS, default 1000; BENCH_MAX_CACHED, default 100; BENCH_IN_FLIGHT, default 50;
 *    BENCH_WORKER_HEAP_MB, default 512; BENCH_TIMEOUT_S, default 900)
 *
 * keel arm: an agent (model `openai:bench-approvals`, scripted here) whose one tool has
 * `requiresApproval: true`. On turn 1 the model asks for one call of it, with call ID `call_<i>`;
 * the run waits (status `awaiting_approval`, also in the KeelStatus search attribute). Approved,
 * the tool runs and the model answers on turn 2: the run completes.
 *
 * The baseline, a floor (bench/approval-floor-workflow.ts): the same shape in a plain Temporal
 * workflow with nothing of keel's: an empty "model" activity, the same search attribute set to
 * `awaiting_approval`, a `condition` that an `approve` Update with a validator satisfies, the
 * "tool" activity, another empty "model" activity, the result. It is what any Temporal workflow
 * pays to wait for an Update and then run an activity, on the same dev server, with the same
 * worker options (and workflow cache size), so the difference between the arms is keel's: its
 * tool gate, its larger workflow code, state and history (more to replay for an evicted run),
 * the libraries its worker loads, the scripted model's HTTP round trips (the floor's model
 * activities are empty: that shows in the time to all waiting and to all completed, not between an
 * Update and the tool). A keel run whose tool needs no approval would not be a baseline for
 * "approve -> tool": it has no decision to measure from.
 *
 * The arms run one after the other (floor first, so keel's is measured on the fuller database),
 * each with a worker process of its own (bench/support/approval-worker.ts, so its RSS is the
 * worker's alone), on one dev server. Per arm:
 *   1. N runs are started, 20 start RPCs at a time, with at most BENCH_IN_FLIGHT runs started and
 *      not yet waiting (as visibility last counted, every 0.25 s). The time until visibility counts
 *      N runs with KeelStatus = 'awaiting_approval' is the time to all waiting.
 *   2. The worker's main thread collects its garbage (node --expose-gc; its workflow thread's heap
 *      is not forced), a few seconds pass, and its RSS is the mean of 5 samples, a second apart.
 *      The worker's workflow cache holds BENCH_MAX_CACHED runs (maxCachedWorkflows, via
 *      workerOptions): the other waiting runs are evicted and their approval replays them.
 *   3. Every run is approved by Update (keel: RunHandle.approve(callId)), oldest first (the longest
 *      evicted), with at most BENCH_IN_FLIGHT runs between their Update and their result, so that
 *      the runs in progress fit in the cache (more would evict each other between their workflow
 *      tasks and replay each time: that measures the cache's thrashing, not an approval). Per run:
 *      the Update's round trip (sent -> executeUpdate returned: the replay of an evicted run and
 *      the workflow task that records the decision and schedules the tool), returned -> the tool's
 *      start (as the tool itself records it in the worker process, on a clock lined up with this
 *      one by IPC pings; it can be below 0: the server hands out the tool's activity task and
 *      answers the Update at the same time), and sent -> tool start. Results are awaited on a
 *      second connection; the time from the first Update sent to the last result is the throughput.
 *   4. Workflow tasks that replayed an evicted run are counted from the worker's sticky cache
 *      misses (Temporal's worker metrics, buffered in the worker process) and, for the Updates'
 *      tasks, from history (a task given to the normal task queue comes with the whole history).
 *   5. The burst's latencies are mostly queueing: 50 runs in progress on 2 cores. So after it,
 *      one approval at a time: 20 more runs wait, then BENCH_MAX_CACHED more that evict them; each
 *      of the 20 is approved, and completes, before the next Update is sent. Its figures are over
 *      those whose approval did replay the run (a sticky cache miss meanwhile, or history).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { AgentClient } from '../src/client/agent-client.js';
import type { AgentRunResult } from '../src/core/run.js';
import { startModelServer, type Responder } from '../test/support/model-server.js';
import { floorApproveUpdate } from './approval-floor-workflow.js';
import { LIMIT_FLAGS, startDevServer, stopAllDevServers } from './support/dev-server.js';
import { fmt, quantile, table } from './support/stats.js';

const N = Number(process.env.BENCH_APPROVALS ?? 1000);
const MAX_CACHED = Number(process.env.BENCH_MAX_CACHED ?? 100);
/** At most this many runs started and not yet waiting, and approved and not yet completed. */
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 50);
/** As bench/sleeping-monitors.ts: the worker's V8 heap limit, as a worker in a container would have. */
const HEAP_MB = Number(process.env.BENCH_WORKER_HEAP_MB ?? 512);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_S ?? 900) * 1000;
const START_CONCURRENCY = 20;
/** Runs approved one at a time, after the burst: the latency of an approval on an idle worker. */
const PROBES = 20;
/** A wait that sees no progress for this long fails: something is stuck, not slow. */
const STALL_MS = 120_000;
const PORT = 7683;
const MODEL = 'bench-approvals';
const AGENT = 'bench-approvals';
const MIB = 1024 * 1024;
/** As bench/sleeping-monitors.ts: the dev server's database is a throwaway; its disk is not what is measured. */
const DEV_FLAGS = '--sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=off';
const root = fileURLToPath(new URL('..', import.meta.url));

for (const [name, value] of Object.entries({ BENCH_APPROVALS: N, BENCH_MAX_CACHED: MAX_CACHED, BENCH_IN_FLIGHT: IN_FLIGHT })) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number of at least 1, got ${value}`);
}
if (!Number.isInteger(HEAP_MB) || HEAP_MB < 0) throw new Error(`BENCH_WORKER_HEAP_MB must be a whole number, 0 or more, got ${HEAP_MB}`);

type Arm = 'keel' | 'floor';
const ARMS: { arm: Arm; label: string; taskQueue: string; workflowType: string; id: (i: number) => string }[] = [
  { arm: 'floor', label: 'floor', taskQueue: 'bench-approvals-floor', workflowType: 'approvalFloor', id: (i) => `floor-${i}` },
  { arm: 'keel', label: 'keel', taskQueue: 'bench-approvals', workflowType: 'agentRun', id: (i) => `approve-${i}` },
];

/** This process's clock, in ms: the worker records tool starts on the same kind of clock. */
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Turn 1: one call of the guarded tool, `call_<i>`; turn 2 (after its result): the answer. */
const responder: Responder = (request) => {
  const messages = (request.body?.messages ?? []) as { role: string; content?: unknown }[];
  const prompt = String(messages.find((m) => m.role === 'user')?.content ?? '');
  const run = /^approval run (\d+):/.exec(prompt);
  if (!run) throw new Error(`unexpected prompt: ${prompt.slice(0, 100)}`);
  const i = Number(run[1]);
  const usage = { inputTokens: 20, outputTokens: 5 };
  if (!messages.some((m) => m.role === 'tool')) {
    return { toolCalls: [{ id: `call_${i}`, name: 'guarded_step', arguments: { run: i } }], usage };
  }
  return { text: 'Done.', usage };
};

interface Sample {
  at: number;
  rss: number;
  heap: number;
  cached: number;
  /** The worker's sticky cache hits and misses so far. */
  hits: number;
  misses: number;
}

interface WorkerProcess {
  child: ChildProcess;
  samples: Sample[];
  /** Tool starts by workflow ID, on the worker's clock. */
  toolAt: Map<string, number>;
  toolStarts: number;
  /** The worker's clock minus this process's, ms. */
  offset: number;
  exited: boolean;
}

let stopping = false;
const workers = new Set<WorkerProcess>();
process.on('exit', () => {
  for (const w of workers) if (!w.exited) w.child.kill('SIGKILL');
});

function spawnWorker(env: Record<string, string>): Promise<WorkerProcess> {
  return new Promise((resolve, reject) => {
    const heap = HEAP_MB > 0 ? [`--max-old-space-size=${HEAP_MB}`] : [];
    const child = spawn(process.execPath, [...heap, '--expose-gc', '--import', 'tsx', 'bench/support/approval-worker.ts'], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const worker: WorkerProcess = { child, samples: [], toolAt: new Map(), toolStarts: 0, offset: 0, exited: false };
    workers.add(worker);
    const timer = setTimeout(() => reject(new Error('the worker process was not ready within 180 s')), 180_000);
    child.on('message', (message: Omit<Sample, 'at'> & { type: string; workflowId: string; at: number }) => {
      if (message.type === 'sample') {
        const { rss, heap, cached, hits, misses } = message;
        worker.samples.push({ at: now(), rss, heap, cached, hits, misses });
      }
      else if (message.type === 'tool') {
        worker.toolStarts++;
        if (!worker.toolAt.has(message.workflowId)) worker.toolAt.set(message.workflowId, message.at);
      } else if (message.type === 'ready') {
        clearTimeout(timer);
        resolve(worker);
      }
    });
    child.once('exit', (code, signal) => {
      worker.exited = true;
      clearTimeout(timer);
      reject(new Error(`the worker process exited (${code ?? signal}) before it was ready`));
      if (!stopping) {
        console.error(`the worker process exited (${code ?? signal}) during the benchmark`);
        process.exit(1);
      }
    });
  });
}

/** Lines up the worker's clock with this one: the ping with the shortest round trip of 20. */
async function lineUpClocks(worker: WorkerProcess): Promise<{ offset: number; rtt: number }> {
  let best = { offset: 0, rtt: Infinity };
  for (let id = 0; id < 20; id++) {
    const sent = now();
    const at = await new Promise<number>((resolve) => {
      const onMessage = (message: { type: string; id: number; at: number }) => {
        if (message.type === 'pong' && message.id === id) {
          worker.child.off('message', onMessage);
          resolve(message.at);
        }
      };
      worker.child.on('message', onMessage);
      worker.child.send({ type: 'ping', id });
    });
    const back = now();
    if (back - sent < best.rtt) best = { offset: at - (sent + back) / 2, rtt: back - sent };
  }
  return best;
}

async function stopWorker(worker: WorkerProcess): Promise<void> {
  if (worker.exited) return;
  const exited = new Promise((r) => worker.child.once('exit', r));
  worker.child.kill('SIGTERM');
  await Promise.race([exited, sleep(10_000)]);
  if (!worker.exited) worker.child.kill('SIGKILL');
  await exited;
  workers.delete(worker);
}

/** Runs `task(i)` for i in 0..n-1, `concurrency` at a time. */
async function pool(n: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const runner = async () => {
    while (next < n) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, runner));
}

/** Waits until `done()`; fails when `progress()` has not changed for STALL_MS. */
async function waitUntil(what: string, done: () => Promise<boolean> | boolean, progress: () => number, everyMs = 500): Promise<void> {
  let last = progress();
  let lastChange = Date.now();
  while (!(await done())) {
    await sleep(everyMs);
    const current = progress();
    if (current !== last) {
      last = current;
      lastChange = Date.now();
    } else if (Date.now() - lastChange > STALL_MS) {
      throw new Error(`stuck: no progress for ${STALL_MS / 1000} s while waiting for ${what} (at ${current})`);
    }
  }
}

interface ArmResult {
  label: string;
  idleRss: number;
  /** Sticky cache misses and hits of the worker from the first start to all waiting. */
  startMisses: number;
  startHits: number;
  toAllWaitingSeconds: number;
  waitingRss: number;
  waitingHeap: number;
  cachedWhileWaiting: number;
  clockRtt: number;
  updateRtt: number[];
  returnedToTool: number[];
  sentToTool: number[];
  allCompletedSeconds: number;
  peakRss: number;
  /** Settled RSS once all runs completed, and the runs then cached. */
  afterRss: number;
  cachedAfter: number;
  /** Sticky cache misses and hits of the worker from the first Update to the last result. */
  misses: number;
  hits: number;
  /** Update workflow tasks on the worker's normal task queue: given the whole history, so the run was replayed too. */
  normalQueue: number;
  /** Per run: its start to its status `awaiting_approval`, from history, ms. */
  startToWaiting: number[];
  toolStarts: number;
  /** One approval at a time, each of a run evicted from the cache: ms per probe, and the sticky cache misses meanwhile. */
  probe: { updateRtt: number[]; returnedToTool: number[]; sentToTool: number[]; cold: number };
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
/** temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL (the package is CommonJS: its enums are not importable by name here). */
const TASK_QUEUE_KIND_NORMAL = 1;

/**
 * From a run's history: the time from its start to its first search attribute upsert (the status
 * `awaiting_approval`), ms; and whether the workflow task that accepted its Update was given to
 * the worker's normal task queue (then with the whole history: a replay, whatever the cache
 * held) rather than its sticky one (where a run no longer cached is a sticky cache miss).
 */
function readHistory(events: HistoryEvent[]): { startToWaiting: number; normalQueue: boolean } {
  const millis = (e: HistoryEvent | undefined) => (e?.eventTime ? Number(e.eventTime.seconds ?? 0) * 1000 + (e.eventTime.nanos ?? 0) / 1e6 : Number.NaN);
  const upsert = events.find((e) => e.upsertWorkflowSearchAttributesEventAttributes);
  const accepted = events.findIndex((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
  const scheduled = events
    .slice(0, Math.max(accepted, 0))
    .reverse()
    .find((e) => e.workflowTaskScheduledEventAttributes);
  return {
    startToWaiting: millis(upsert) - millis(events[0]),
    normalQueue: scheduled?.workflowTaskScheduledEventAttributes?.taskQueue?.kind === TASK_QUEUE_KIND_NORMAL,
  };
}

async function measure(
  spec: (typeof ARMS)[number],
  env: Record<string, string>,
  client: Client,
  resultClient: Client,
): Promise<ArmResult> {
  const { arm, label, taskQueue, workflowType, id } = spec;
  const worker = await spawnWorker({ ...env, KEEL_TASK_QUEUE: taskQueue, BENCH_ARM: arm });
  try {
    const clocks = await lineUpClocks(worker);
    worker.offset = clocks.offset;
    const settled = async () => {
      worker.child.send({ type: 'gc' });
      await sleep(3000);
      worker.child.send({ type: 'gc' });
      const from = worker.samples.length;
      await waitUntil('5 RSS samples', () => worker.samples.length >= from + 5, () => worker.samples.length);
      const last = worker.samples.slice(-5);
      const avg = (f: (s: Sample) => number) => last.reduce((n, s) => n + f(s), 0) / last.length;
      return { rss: avg((s) => s.rss), heap: avg((s) => s.heap), cached: last.at(-1)!.cached };
    };
    const idle = await settled();
    console.log(`  ${label}: idle worker RSS ${fmt(idle.rss / MIB, 0)} MiB (clocks lined up to within ${fmt(clocks.rtt / 2, 2)} ms)`);

    const agents = new AgentClient({ client, taskQueue });
    const waitingCount = async () =>
      (await client.workflow.count(`WorkflowType = '${workflowType}' AND KeelStatus = 'awaiting_approval'`)).count;
    let lastLine = Date.now();
    const progress = (line: () => string) => {
      if (Date.now() - lastLine < 10_000) return;
      lastLine = Date.now();
      const s = worker.samples.at(-1);
      console.log(`  ${label}: ${line()}, worker RSS ${fmt((s?.rss ?? 0) / MIB, 0)} MiB, cached ${s?.cached ?? '-'}`);
    };

    /** Starts runs from..to-1 and returns once all of them wait (besides `others` already waiting). */
    const startRuns = async (from: number, to: number, others = 0): Promise<void> => {
      const began = now();
      lastLine = Date.now();
      let startedRuns = 0;
      let waiting = 0;
      const starting = pool(to - from, START_CONCURRENCY, async (k) => {
        const i = from + k;
        // At most IN_FLIGHT runs started and not yet waiting (as of the last count).
        while (startedRuns - waiting >= IN_FLIGHT) await sleep(50);
        startedRuns++;
        if (arm === 'keel') {
          await agents.start(AGENT, `approval run ${i}: do the guarded step, then answer.`, { workflowId: id(i) });
        } else {
          await client.workflow.start('approvalFloor', { taskQueue, workflowId: id(i), args: [`call_${i}`] });
        }
      });
      let startError: unknown;
      starting.catch((err: unknown) => (startError = err));
      await waitUntil(
        `${to - from} runs awaiting approval (visibility: KeelStatus = 'awaiting_approval')`,
        async () => {
          if (startError) throw startError;
          waiting = (await waitingCount()) - others;
          progress(() => `started ${startedRuns}/${to - from}, awaiting approval ${waiting}, ${fmt((now() - began) / 1000, 0)} s`);
          return waiting >= to - from;
        },
        () => waiting + startedRuns,
        250,
      );
      await starting;
    };

    /** Approves run i by Update and waits for its result: when the Update was sent, when it returned, when the result came. */
    const approve = async (i: number, onReturned: () => void = () => undefined) => {
      const workflowId = id(i);
      const sent = now();
      if (arm === 'keel') {
        const receipt = await agents.getHandle(workflowId).approve(`call_${i}`);
        if (receipt.decision !== 'allow' || receipt.callId !== `call_${i}`) throw new Error(`${workflowId}: unexpected receipt ${JSON.stringify(receipt)}`);
      } else {
        await client.workflow.getHandle(workflowId).executeUpdate(floorApproveUpdate, { args: [{ callId: `call_${i}` }] });
      }
      const returned = now();
      onReturned();
      const result: unknown = await resultClient.workflow.getHandle(workflowId).result();
      const done = now();
      if (arm === 'keel') {
        const r = result as AgentRunResult;
        if (r.status !== 'completed' || r.turns !== 2) throw new Error(`${workflowId} ended ${r.status} after ${r.turns} turns, expected completed after 2`);
      } else if (result !== 'done') throw new Error(`${workflowId} returned ${JSON.stringify(result)}`);
      return { sent, returned, done };
    };
    const toolAt = (i: number) => worker.toolAt.get(id(i))! - worker.offset;
    /** A sample the worker took after this call. */
    const sampleNow = async () => {
      const at = now();
      worker.child.send({ type: 'sample' });
      await waitUntil('a worker sample', () => worker.samples.at(-1)!.at > at, () => worker.samples.length, 5);
      return worker.samples.at(-1)!;
    };

    // 1. Start N runs and wait until all of them wait.
    const startSample = worker.samples.at(-1)!;
    const began = now();
    await startRuns(0, N);
    const toAllWaitingSeconds = (now() - began) / 1000;
    const startedSample = await sampleNow();
    if (worker.toolStarts > 0) throw new Error(`${worker.toolStarts} tools started before any approval`);

    if (arm === 'keel') {
      // A few of the last started (cached anyway): the status query shows the call the model asked for.
      for (const i of [N - 1, N - 2, N - 3].filter((i) => i >= 0)) {
        const handle = agents.getHandle(id(i));
        const state = await handle.status();
        const pending = await handle.pending();
        const call = pending[0];
        if (state.status !== 'awaiting_approval' || pending.length !== 1 || call?.callId !== `call_${i}` || call.tool !== 'guarded_step' || call.stage !== 'tool') {
          throw new Error(`${id(i)}: status ${state.status}, pending ${JSON.stringify(pending)}; expected one call call_${i} of guarded_step (stage tool)`);
        }
      }
    }

    // 2. The worker's RSS while they wait.
    const waitingState = await settled();
    console.log(
      `  ${label}: all ${N} awaiting approval after ${fmt(toAllWaitingSeconds, 1)} s; worker RSS ${fmt(waitingState.rss / MIB, 0)} MiB, ` +
        `${waitingState.cached} runs cached`,
    );

    // 3. Approve all, oldest first; at most IN_FLIGHT runs between their Update and their result.
    const times: { sent: number; returned: number; done: number }[] = [];
    let returned = 0;
    let completed = 0;
    const firstSent = now();
    lastLine = Date.now();
    const firstSample = worker.samples.length;
    const before = worker.samples[firstSample - 1]!;
    const approving = pool(N, IN_FLIGHT, async (i) => {
      times[i] = await approve(i, () => returned++);
      completed++;
    });
    let approveError: unknown;
    let approved = false;
    approving.then(
      () => (approved = true),
      (err: unknown) => (approveError = err),
    );
    await waitUntil(
      `${N} approved runs to complete`,
      () => {
        if (approveError) throw approveError;
        progress(() => `approved ${returned}/${N}, completed ${completed}, ${fmt((now() - firstSent) / 1000, 0)} s`);
        return approved;
      },
      () => completed,
      250,
    );
    const lastDone = Math.max(...times.map((t) => t.done));
    const allCompletedSeconds = (lastDone - firstSent) / 1000;
    await waitUntil(`${N} tool starts reported by the worker`, () => worker.toolAt.size >= N, () => worker.toolAt.size, 100);
    const after = await sampleNow();
    const peakRss = Math.max(...worker.samples.slice(firstSample).map((s) => s.rss), 0);
    // None waits any more (a completed run leaves the cache): what the worker keeps of the work it did.
    const afterState = await settled();

    // 4. From the histories: start -> waiting per run, and Update tasks on the normal queue.
    const startToWaiting: number[] = [];
    let normalQueue = 0;
    await pool(N, 20, async (i) => {
      const history = readHistory((await client.workflow.getHandle(id(i)).fetchHistory()).events ?? []);
      startToWaiting.push(history.startToWaiting);
      if (history.normalQueue) normalQueue++;
    });

    // 5. One approval at a time on an otherwise idle worker: PROBES runs, then MAX_CACHED more
    // that evict them from the cache (those stay waiting); each probe is approved and completes
    // before the next one's Update is sent.
    await startRuns(N, N + PROBES);
    await startRuns(N + PROBES, N + PROBES + MAX_CACHED, PROBES);
    await sleep(1000);
    const probes: { i: number; sent: number; returned: number; done: number; cold: boolean }[] = [];
    for (let i = N; i < N + PROBES; i++) {
      const before = await sampleNow();
      const times = await approve(i);
      await sleep(100);
      const after = await sampleNow();
      const history = readHistory((await client.workflow.getHandle(id(i)).fetchHistory()).events ?? []);
      probes.push({ i, ...times, cold: after.misses > before.misses || history.normalQueue });
    }
    await waitUntil(`${PROBES} probe tool starts`, () => probes.every((p) => worker.toolAt.has(id(p.i))), () => worker.toolAt.size, 100);
    const cold = probes.filter((p) => p.cold);
    const indexes = Array.from({ length: N }, (_, i) => i);

    return {
      label,
      idleRss: idle.rss,
      startMisses: startedSample.misses - startSample.misses,
      startHits: startedSample.hits - startSample.hits,
      toAllWaitingSeconds,
      waitingRss: waitingState.rss,
      waitingHeap: waitingState.heap,
      cachedWhileWaiting: waitingState.cached,
      clockRtt: clocks.rtt,
      updateRtt: indexes.map((i) => times[i]!.returned - times[i]!.sent),
      returnedToTool: indexes.map((i) => toolAt(i) - times[i]!.returned),
      sentToTool: indexes.map((i) => toolAt(i) - times[i]!.sent),
      probe: {
        updateRtt: cold.map((p) => p.returned - p.sent),
        returnedToTool: cold.map((p) => toolAt(p.i) - p.returned),
        sentToTool: cold.map((p) => toolAt(p.i) - p.sent),
        cold: cold.length,
      },
      allCompletedSeconds,
      peakRss,
      afterRss: afterState.rss,
      cachedAfter: afterState.cached,
      misses: after.misses - before.misses,
      hits: after.hits - before.hits,
      normalQueue,
      startToWaiting,
      toolStarts: worker.toolStarts,
    };
  } finally {
    stopping = true;
    await stopWorker(worker);
    stopping = false;
  }
}

async function main(): Promise<void> {
  const began = Date.now();
  const deadline = setTimeout(() => {
    console.error(`\nbench/approvals: not finished after ${TIMEOUT_MS / 1000} s; giving up (BENCH_TIMEOUT_S raises the limit).`);
    process.exit(1); // the exit hooks kill the worker and stop the dev server
  }, TIMEOUT_MS);
  deadline.unref();

  console.log(
    `Approvals: ${N} runs waiting for approval at once on one dev server and one worker process, then all approved by Update.\n` +
      `  keel: an agent whose tool has requiresApproval: true (turn 1 calls it, turn 2 answers); floor: a plain workflow that waits\n` +
      `  for an "approve" Update, then runs a "tool" activity (bench/approval-floor-workflow.ts). Arms in turn, floor first, each\n` +
      `  with a worker process of its own: maxCachedWorkflows ${MAX_CACHED} (set via workerOptions, so ${Math.max(0, N - MAX_CACHED)} or more\n` +
      `  of the waiting runs are evicted and an approval replays them), ` +
      `${HEAP_MB > 0 ? `node --max-old-space-size=${HEAP_MB}` : 'no heap limit (Node default)'}, other worker options at their defaults.\n` +
      `  Starting: ${START_CONCURRENCY} start RPCs at a time, at most ${IN_FLIGHT} runs started and not yet waiting. Approving: oldest run first,\n` +
      `  at most ${IN_FLIGHT} runs between their Update and their result (so the runs in progress fit in the cache).\n` +
      `  Dev server flags: ${[LIMIT_FLAGS, DEV_FLAGS].join(' ').trim()}.\n`,
  );

  const models = await startModelServer();
  models.script(MODEL, responder);
  const dev = startDevServer({ port: PORT, uiPort: PORT + 1000, flags: DEV_FLAGS });
  const connection = await Connection.connect({ address: dev.address });
  // Results are awaited on a connection of their own, so that a thousand waiting long polls
  // never hold up the Updates.
  const resultConnection = await Connection.connect({ address: dev.address });
  const client = new Client({ connection, namespace: 'default' });
  const resultClient = new Client({ connection: resultConnection, namespace: 'default' });
  const env = { TEMPORAL_ADDRESS: dev.address, MODEL_SERVER_URL: models.url, BENCH_MAX_CACHED: String(MAX_CACHED) };
  const results: ArmResult[] = [];
  try {
    for (const arm of ARMS) results.push(await measure(arm, env, client, resultClient));
  } finally {
    await connection.close().catch(() => undefined);
    await resultConnection.close().catch(() => undefined);
    await models.close();
    stopAllDevServers();
    clearTimeout(deadline);
  }
  // Two requests per approved run, one per run left waiting.
  const expectedRequests = 2 * (N + PROBES) + MAX_CACHED;
  const keelRequests = models.requests(MODEL).length;
  if (keelRequests !== expectedRequests) console.log(`  note: the scripted model saw ${keelRequests} requests, expected ${expectedRequests}`);

  const keel = results.find((r) => r.label === 'keel')!;
  const floor = results.find((r) => r.label === 'floor')!;
  const ms = (values: number[]) => `${fmt(quantile(values, 0.5))} / ${fmt(quantile(values, 0.95))}`;
  const both = (f: (r: ArmResult) => string) => [f(keel), f(floor)];
  console.log(`\n${N} runs waiting for approval, then approved by Update (ms: p50 / p95 over the ${N} runs; MiB = 2^20 bytes)\n`);
  console.log(
    table([
      ['', 'keel', 'floor'],
      ['starting', '', ''],
      [`  first start -> all ${N} awaiting approval, s`, ...both((r) => fmt(r.toAllWaitingSeconds, 1))],
      ['  per run: start -> awaiting, ms', ...both((r) => ms(r.startToWaiting))],
      ['  workflow tasks that replayed an evicted run', ...both((r) => `${r.startMisses} of ${r.startHits + r.startMisses}`)],
      [`waiting`, '', ''],
      ['  worker RSS idle (before starting), MiB', ...both((r) => fmt(r.idleRss / MIB, 0))],
      [`  worker RSS with ${N} waiting, MiB`, ...both((r) => fmt(r.waitingRss / MIB, 0))],
      ['  main-thread heap, MiB', ...both((r) => fmt(r.waitingHeap / MIB, 0))],
      ['  runs in the workflow cache', ...both((r) => String(r.cachedWhileWaiting))],
      ['approving', '', ''],
      ['  Update sent -> returned, ms', ...both((r) => ms(r.updateRtt))],
      ['  Update returned -> tool start, ms', ...both((r) => ms(r.returnedToTool))],
      ['  Update sent -> tool start, ms', ...both((r) => ms(r.sentToTool))],
      [`  first Update -> all ${N} completed, s`, ...both((r) => fmt(r.allCompletedSeconds, 1))],
      ['  workflow tasks that replayed an evicted run', ...both((r) => `${r.misses + r.normalQueue} of ${r.hits + r.misses + r.normalQueue}`)],
      ['  worker peak RSS, MiB', ...both((r) => fmt(r.peakRss / MIB, 0))],
      ['  worker RSS after all completed, MiB', ...both((r) => `${fmt(r.afterRss / MIB, 0)} (${r.cachedAfter} cached)`)],
      [`one approval at a time (of ${PROBES} evicted runs, those replayed)`, '', ''],
      ['  approvals that replayed an evicted run', ...both((r) => `${r.probe.cold} of ${PROBES}`)],
      ['  Update sent -> returned, ms', ...both((r) => ms(r.probe.updateRtt))],
      ['  Update returned -> tool start, ms', ...both((r) => ms(r.probe.returnedToTool))],
      ['  Update sent -> tool start, ms', ...both((r) => ms(r.probe.sentToTool))],
    ]),
  );
  console.log(
    `  A run takes 2 workflow tasks to wait (its first, the model's reply's) and 3 from its Update on (the Update's, the tool's\n` +
      `  result's, the model's answer's); one that replayed an evicted run = a sticky cache miss (worker metrics) or, when\n` +
      `  approving, an Update's task given to the normal queue with the whole history (read back from history).\n` +
      `  per run start -> awaiting: from history, the run's start to the upsert of its status.\n` +
      `  returned -> tool start: from executeUpdate returning here to the tool's first line in the worker (clocks lined up\n` +
      `  to within ${fmt(Math.max(keel.clockRtt, floor.clockRtt) / 2, 2)} ms); below 0 when the tool started before the Update's answer arrived.\n` +
      `  one at a time: after the burst, ${PROBES} more runs wait, then ${MAX_CACHED} more that evict them from the cache; each of the\n` +
      `  ${PROBES} is approved and completes before the next Update is sent (the worker has nothing else to do); figures over\n` +
      `  those whose approval replayed the run (a sticky cache miss meanwhile, or the Update's task on the normal queue).\n` +
      `  The floor's model activities are empty; keel's make an HTTP request to the scripted model (no delay).` +
      (keel.toolStarts !== N + PROBES || floor.toolStarts !== N + PROBES
        ? `\n  tool starts: keel ${keel.toolStarts}, floor ${floor.toolStarts} (expected ${N + PROBES} each)`
        : ''),
  );
  console.log(
    `\napprovals: approve→tool p50 / p95 ms ${ms(keel.returnedToTool)} (floor ${ms(floor.returnedToTool)}; ` +
      `from the Update sent ${ms(keel.sentToTool)}, floor ${ms(floor.sentToTool)}; ` +
      `one at a time ${ms(keel.probe.returnedToTool)}, floor ${ms(floor.probe.returnedToTool)}); ` +
      `worker RSS MB with ${N} waiting ${fmt(keel.waitingRss / MIB, 0)} (floor ${fmt(floor.waitingRss / MIB, 0)}); ` +
      `approve all→completed ${fmt(keel.allCompletedSeconds, 1)} s (floor ${fmt(floor.allCompletedSeconds, 1)} s)`,
  );
  console.log(`  total time ${fmt((Date.now() - began) / 1000, 0)} s.`);
}

main().catch((err: unknown) => {
  console.error(err);
  stopAllDevServers();
  process.exit(1);
});
