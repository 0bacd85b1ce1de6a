/**
 * First, what one run asleep in a worker's cache costs, with the worker's default settings: the RSS
 * per cached run of keel's sleeping monitor and of the floor (a bare workflow on a timer), and
 * their ratio (goal: at most 2 x), BENCH_CACHED runs of each in a worker of their own.
 *
 * Then 10,000 monitors sleeping at once on one dev server and one worker: the worker's RSS as their
 * number grows (flat: a sleeping monitor costs the worker nothing, its workflow cache evicts it),
 * then a burst of 500 of them woken together: the time until all have finished a turn, and the
 * worker's peak RSS meanwhile. About 10 minutes on 2 cores.
 *
 *   npx tsx bench/sleeping-monitors.ts
 *   (env: BENCH_CACHED, default 400; BENCH_TEMPORAL_PORT, default 7673; BENCH_MONITORS, default 10000; BENCH_BURST, default 500; BENCH_IN_FLIGHT, default 200;
 *    BENCH_MAX_CACHED, default 1000; BENCH_WORKER_HEAP_MB, default 512; BENCH_TIMEOUT_S, default 2400)
 *
 * The worker runs in a child process (bench/support/monitor-worker.ts) so that its RSS is its
 * own; it prints its RSS, main-thread V8 heap and number of cached workflows every second. Each
 * monitor's first turn (agent without tools, model `openai:bench-sleeper`, scripted here) calls
 * schedule_next_turn with `at` = one common time a day ahead, then answers: the monitor sleeps.
 * Monitors are started in steps up to N/10, N/5, N/2 and N; at most BENCH_IN_FLIGHT of them are
 * started and not yet asleep at any time, so a 2-core machine copes. After each step the
 * benchmark waits until visibility counts that many monitors with KeelStatus = 'sleeping', lets
 * the worker settle for a few seconds, and records its RSS.
 *
 * The burst: the first BENCH_BURST monitors started (asleep the longest, long evicted from the
 * worker's cache when N - BURST > the cache size, so each wake replays its run) get a `wake`
 * signal, all at once. Signals rather than their `at` time: that is set in their first turn,
 * minutes before anyone knows when the last of 10,000 will be asleep. Each then does one more
 * turn, in which the model calls report_done and answers: the monitor completes. The figures are
 * per monitor from the wake instant (just before the signals are sent): its wake turn's first
 * model request, and its completion as seen by a client waiting on its result.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { AgentClient } from '../src/client/agent-client.js';
import type { MonitorHandle } from '../src/client/monitor-handle.js';
import { startModelServer, type RecordedRequest, type Responder } from '../test/support/model-server.js';
import { LIMIT_FLAGS, startDevServer, stopAllDevServers } from './support/dev-server.js';
import { fmt, quantile, table } from './support/stats.js';

const N = Number(process.env.BENCH_MONITORS ?? 10_000);
const BURST = Number(process.env.BENCH_BURST ?? 500);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 200);
const MAX_CACHED = Number(process.env.BENCH_MAX_CACHED ?? 1000);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_S ?? 2400) * 1000;
/**
 * The worker's V8 heap limit (node --max-old-space-size, which also bounds its workflow thread),
 * as a worker in a container would have; 0: Node's default. Without a limit V8 collects evicted
 * runs lazily: on a 24 GB machine the worker's RSS rose from 629 MiB (1,000 asleep) to 1,149 MiB
 * (10,000 asleep), in a sawtooth (one collection took it from 1,116 to 852 MiB), with 1,000
 * cached runs all along.
 */
const HEAP_MB = Number(process.env.BENCH_WORKER_HEAP_MB ?? 512);
/** A wait that sees no progress for this long fails: something is stuck, not slow. */
const STALL_MS = 180_000;
/** After a step, the worker finishes its last tasks and the RSS settles before it is read. */
const SETTLE_MS = 4_000;
/** BENCH_ONLY_CACHED=1: the first part only (runs asleep in the cache of a worker with default settings). */
const ONLY_CACHED = process.env.BENCH_ONLY_CACHED === '1';
/** The first part: the least time after a step before the worker's RSS is read (see measureCached). */
const QUIET_MS = 60_000;
/** Start RPCs in flight at once (within the IN_FLIGHT window of monitors not yet asleep). */
const START_CONCURRENCY = 20;
/** The dev server's port (its UI: this + 1000): BENCH_TEMPORAL_PORT, so that benchmarks run side by side stay apart. */
const PORT = Number(process.env.BENCH_TEMPORAL_PORT ?? 7673);
/**
 * The first part: this many runs asleep in a worker's cache, a worker with every option at its
 * default, for keel's monitor and for the floor (a bare workflow on a timer), measured at half and
 * all of them.
 */
const CACHED = Number(process.env.BENCH_CACHED ?? 400);
const TASK_QUEUE = 'bench-sleepers';
const MODEL = 'bench-sleeper';
const AGENT = 'bench-sleeper';
const MIB = 1024 * 1024;
/**
 * The dev server's SQLite database is a throwaway: without a sync to disk at every commit it
 * starts monitors about twice as fast on this kind of machine (measured: ~10/s -> ~20/s), and
 * what is measured is the worker, not the dev server's disk.
 */
const DEV_FLAGS = '--sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=off';
const root = fileURLToPath(new URL('..', import.meta.url));

for (const [name, value] of Object.entries({ BENCH_CACHED: CACHED, BENCH_TEMPORAL_PORT: PORT, BENCH_MONITORS: N, BENCH_BURST: BURST, BENCH_IN_FLIGHT: IN_FLIGHT, BENCH_MAX_CACHED: MAX_CACHED })) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number of at least 1, got ${value}`);
}
if (!Number.isInteger(HEAP_MB) || HEAP_MB < 0) throw new Error(`BENCH_WORKER_HEAP_MB must be a whole number, 0 or more, got ${HEAP_MB}`);
if (BURST > N) throw new Error(`BENCH_BURST (${BURST}) must be at most BENCH_MONITORS (${N})`);

const CHECKPOINTS = [...new Set([N / 10, N / 5, N / 2, N].map((n) => Math.max(1, Math.round(n))))];

interface Sample {
  at: number;
  rss: number;
  heap: number;
  cached: number;
}

/** What the scripted model has seen of each monitor, by its index. */
const asleep = new Set<number>();
const wakeRequestAt = new Map<number, number>();
/** The monitors of the first part (`cached <i>: ...`) asleep, by index. */
const cachedAsleep = new Set<number>();
let onAsleep: () => void = () => undefined;

/**
 * A monitor's prompt names it: `sleeper <i>: ...` is its goal (first turn), `wake-turn <i>` the
 * prompt it scheduled. A turn's first request gets the tool call, the second (after the tool
 * result) the answer that ends the turn.
 */
function responder(wakeAt: string): Responder {
  return (request: RecordedRequest) => {
    const messages = (request.body?.messages ?? []) as { role: string; content?: string | null }[];
    let lastUser = -1;
    messages.forEach((m, i) => {
      if (m.role === 'user') lastUser = i;
    });
    const prompt = String(messages[lastUser]?.content ?? '');
    const afterTool = messages.slice(lastUser + 1).some((m) => m.role === 'tool');
    const usage = { inputTokens: 20, outputTokens: 5 };
    const cached = /^cached (\d+):/.exec(prompt);
    if (cached) {
      const i = Number(cached[1]);
      if (!afterTool) {
        return {
          toolCalls: [{ id: `cached_${i}`, name: 'schedule_next_turn', arguments: { at: wakeAt, next_prompt: `wake-cached ${i}`, reason: 'look again tomorrow' } }],
          usage,
        };
      }
      cachedAsleep.add(i);
      return { text: 'Nothing to do until tomorrow.', usage };
    }
    const sleeper = /^sleeper (\d+):/.exec(prompt);
    if (sleeper) {
      const i = Number(sleeper[1]);
      if (!afterTool) {
        return {
          toolCalls: [{ id: `sched_${i}`, name: 'schedule_next_turn', arguments: { at: wakeAt, next_prompt: `wake-turn ${i}`, reason: 'look again tomorrow' } }],
          usage,
        };
      }
      if (!asleep.has(i)) {
        asleep.add(i);
        onAsleep();
      }
      return { text: 'Nothing to do until tomorrow.', usage };
    }
    const wake = /^wake-turn (\d+)/.exec(prompt);
    if (wake) {
      const i = Number(wake[1]);
      if (!afterTool) {
        if (!wakeRequestAt.has(i)) wakeRequestAt.set(i, request.receivedAt);
        return { toolCalls: [{ id: `done_${i}`, name: 'report_done', arguments: { detail: `sleeper ${i} looked again` } }], usage };
      }
      return { text: 'Done.', usage };
    }
    throw new Error(`unexpected prompt: ${prompt.slice(0, 100)}`);
  };
}

interface WorkerProcess {
  child: ChildProcess;
  samples: Sample[];
  exited: boolean;
  /** The worker's workflow cache size, as the worker compiled its options. */
  maxCached: number;
}

/** `heapMb` 0: Node's default heap limit. */
function spawnWorker(env: Record<string, string>, heapMb = HEAP_MB): Promise<WorkerProcess> {
  return new Promise((resolve, reject) => {
    const heap = heapMb > 0 ? [`--max-old-space-size=${heapMb}`] : [];
    const child = spawn(process.execPath, [...heap, '--import', 'tsx', 'bench/support/monitor-worker.ts'], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const worker: WorkerProcess = { child, samples: [], exited: false, maxCached: 0 };
    let buffer = '';
    const timer = setTimeout(() => reject(new Error('the worker process was not ready within 180 s')), 180_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) {
        const m = /^rss (\d+) heap (\d+) cached (\d+)/.exec(line);
        if (m) worker.samples.push({ at: Date.now(), rss: Number(m[1]), heap: Number(m[2]), cached: Number(m[3]) });
        else if (line.startsWith('ready')) {
          worker.maxCached = Number(line.split(' ')[2]);
          clearTimeout(timer);
          resolve(worker);
        }
      }
    });
    child.once('exit', (code, signal) => {
      worker.exited = true;
      clearTimeout(timer);
      reject(new Error(`the worker process exited (${code ?? signal}) before it was ready`));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `done()`; fails when `progress()` has not changed for STALL_MS. */
async function waitUntil(what: string, done: () => Promise<boolean> | boolean, progress: () => Promise<number> | number, everyMs = 1000): Promise<void> {
  let last = await progress();
  let lastChange = Date.now();
  while (!(await done())) {
    await sleep(everyMs);
    const now = await progress();
    if (now !== last) {
      last = now;
      lastChange = Date.now();
    } else if (Date.now() - lastChange > STALL_MS) {
      throw new Error(`stuck: no progress for ${STALL_MS / 1000} s while waiting for ${what} (at ${now})`);
    }
  }
}

interface CachedFigures {
  kind: 'keel' | 'floor';
  maxCached: number;
  idle: number;
  half: number;
  full: number;
  /** Bytes of RSS per cached run: from half to all of them asleep in the cache. */
  perRun: number;
  seconds: number;
}

/**
 * The first part: CACHED runs asleep in one worker's cache, a worker with Temporal's and keel's
 * defaults (no maxCachedWorkflows, no heap limit), in a process of its own. `keel`: keel's worker,
 * each run a monitor asleep after its first turn (schedule_next_turn); `floor`: a plain Temporal
 * worker of bench/timer-floor-workflow.ts, each run a bare workflow waiting on a timer. The
 * worker's settled RSS is read at CACHED/2 and CACHED runs cached; their difference over CACHED/2
 * is the cost of one cached run, without what the first run pays once (compiled code, the shared
 * modules).
 */
async function measureCached(
  kind: 'keel' | 'floor',
  ctx: { address: string; modelsUrl: string; client: Client; agents: AgentClient },
): Promise<CachedFigures> {
  const began = Date.now();
  const taskQueue = `bench-cached-${kind}`;
  const w = await spawnWorker(
    { TEMPORAL_ADDRESS: ctx.address, KEEL_TASK_QUEUE: taskQueue, MODEL_SERVER_URL: ctx.modelsUrl, BENCH_FLOOR: kind === 'floor' ? '1' : '', BENCH_MAX_CACHED: '' },
    0,
  );
  try {
    if (w.maxCached < CACHED) {
      throw new Error(`the worker's default cache holds ${w.maxCached} runs, fewer than BENCH_CACHED (${CACHED})`);
    }
    const settled = () => w.samples.slice(-3).reduce((n, s) => n + s.rss, 0) / Math.min(3, w.samples.length);
    const cachedNow = () => w.samples.at(-1)?.cached ?? 0;
    // Right after a step the workflow thread's heap still holds the garbage of the runs' tasks; V8
    // collects it once the worker is idle (its memory reducer: a few collections over about a
    // minute; seen: 437 -> 390 MiB at 30-55 s with 400 floor runs). The RSS read is the settled
    // one: at least QUIET_MS after the step, once it has not moved by more than 1 MiB for 15 s.
    const quiet = async () => {
      const from = Date.now();
      for (;;) {
        await sleep(1000);
        const recent = w.samples.filter((s) => s.at >= Date.now() - 15_000).map((s) => s.rss);
        const still = recent.length >= 10 && Math.max(...recent) - Math.min(...recent) <= MIB;
        if ((Date.now() - from >= QUIET_MS && still) || Date.now() - from >= 3 * QUIET_MS) return settled();
      }
    };
    await sleep(SETTLE_MS);
    const idle = settled();
    let next = 0;
    const startUpTo = async (target: number) => {
      const starter = async () => {
        for (;;) {
          while (kind === 'keel' && next - cachedAsleep.size >= IN_FLIGHT) await sleep(50);
          if (next >= target) return;
          const i = next++;
          if (kind === 'keel') {
            await ctx.agents.startMonitor(AGENT, `cached ${i}: look at the service, then decide when to look again.`, {
              workflowId: `cached-sleeper-${i}`,
              taskQueue,
            });
          } else {
            await ctx.client.workflow.start('floorSleeper', { taskQueue, workflowId: `cached-floor-${i}` });
          }
        }
      };
      await Promise.all(Array.from({ length: START_CONCURRENCY }, starter));
      const query =
        kind === 'keel'
          ? `TaskQueue = '${taskQueue}' AND KeelStatus = 'sleeping'`
          : `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`;
      let asleepCount = 0;
      await waitUntil(
        `${target} ${kind} runs asleep and cached`,
        async () => {
          asleepCount = (await ctx.client.workflow.count(query)).count;
          return asleepCount >= target && cachedNow() >= target && (kind === 'floor' || cachedAsleep.size >= target);
        },
        () => asleepCount + cachedNow(),
      );
      return quiet();
    };
    const half = await startUpTo(CACHED / 2);
    const full = await startUpTo(CACHED);
    return { kind, maxCached: w.maxCached, idle, half, full, perRun: (full - half) / (CACHED / 2), seconds: (Date.now() - began) / 1000 };
  } finally {
    w.child.kill('SIGTERM');
    await Promise.race([new Promise((r) => w.child.once('exit', r)), sleep(10_000)]);
    if (!w.exited) w.child.kill('SIGKILL');
  }
}

function printCached(figures: CachedFigures[]): void {
  const keel = figures.find((f) => f.kind === 'keel')!;
  const floor = figures.find((f) => f.kind === 'floor')!;
  console.log(
    `\nA run asleep in the worker's cache, with the worker's default settings (no maxCachedWorkflows: the default cache holds\n` +
      `${keel.maxCached} runs; no heap limit); ${CACHED} runs cached, each worker in a process of its own. Per cached run: the worker's\n` +
      `RSS from ${CACHED / 2} to ${CACHED} runs cached, over ${CACHED / 2}, each read once settled (at least ${QUIET_MS / 1000} s after the step,\n` +
      `when V8 has collected the garbage of the runs' tasks); KiB = 1024 bytes.\n`,
  );
  console.log(
    table([
      ['run asleep in the cache', 'idle RSS MiB', `${CACHED / 2} cached MiB`, `${CACHED} cached MiB`, 'per cached run KiB', `${CACHED} cached over idle, per run KiB`],
      ...[keel, floor].map((f) => [
        f.kind === 'keel' ? "keel's monitor (after one turn)" : 'floor: bare workflow on a timer',
        fmt(f.idle / MIB, 0),
        fmt(f.half / MIB, 0),
        fmt(f.full / MIB, 0),
        fmt(f.perRun / 1024, 0),
        fmt((f.full - f.idle) / CACHED / 1024, 0),
      ]),
    ]),
  );
  const ratio = keel.perRun / floor.perRun;
  console.log(`  keel's sleeping monitor / floor, per cached run: ${fmt(ratio, 2)} x (goal: at most 2 x${ratio <= 2 ? ', met' : ', NOT MET'}).`);
}

async function main(): Promise<void> {
  const began = Date.now();
  const deadline = setTimeout(() => {
    console.error(`\nbench/sleeping-monitors: not finished after ${TIMEOUT_MS / 1000} s; giving up (BENCH_TIMEOUT_S raises the limit).`);
    process.exit(1); // the exit hooks kill the worker and stop the dev server
  }, TIMEOUT_MS);
  deadline.unref();

  const wakeAt = new Date(Date.now() + 24 * 3600_000).toISOString();
  console.log(
    `Sleeping monitors: first ${CACHED} runs asleep in the cache of a worker with default settings, keel's monitor and the floor;\n` +
      `then ${N} monitors asleep at once on one dev server and one worker process, then ${BURST} of them woken together.\n` +
      `  worker: maxCachedWorkflows ${MAX_CACHED} (so sleepers are evicted), ` +
      `${HEAP_MB > 0 ? `node --max-old-space-size=${HEAP_MB}` : 'no heap limit (Node default)'}, other worker options at their defaults\n` +
      `  (maxConcurrentWorkflowTaskExecutions 40, maxConcurrentActivityTaskExecutions 100); at most ${IN_FLIGHT} monitors started and\n` +
      `  not yet asleep at a time; each sleeps until ${wakeAt} (schedule_next_turn at).` +
      `\n  Dev server flags: ${[LIMIT_FLAGS, DEV_FLAGS].join(' ').trim()}.\n`,
  );

  const models = await startModelServer();
  models.script(MODEL, responder(wakeAt));
  const dev = startDevServer({ port: PORT, uiPort: PORT + 1000, flags: DEV_FLAGS });
  let worker: WorkerProcess | undefined;
  const killWorker = () => {
    if (worker && !worker.exited) worker.child.kill('SIGKILL');
  };
  process.on('exit', killWorker);
  const connection = await Connection.connect({ address: dev.address });
  const client = new Client({ connection, namespace: 'default' });
  const agents = new AgentClient({ client, taskQueue: TASK_QUEUE });
  let cachedPart: CachedFigures[];
  try {
    cachedPart = [];
    for (const kind of ['keel', 'floor'] as const) {
      const figures = await measureCached(kind, { address: dev.address, modelsUrl: models.url, client, agents });
      cachedPart.push(figures);
      console.log(
        `  ${kind === 'keel' ? "keel's sleeping monitor" : 'floor (bare workflow on a timer)'}: ${CACHED} cached, ` +
          `${fmt(figures.perRun / 1024, 0)} KiB of worker RSS per cached run (${CACHED / 2} -> ${CACHED}), ` +
          `idle ${fmt(figures.idle / MIB, 0)} MiB, ${fmt(figures.full / MIB, 0)} MiB with ${CACHED} cached`,
      );
    }
    if (ONLY_CACHED) {
      printCached(cachedPart);
      return;
    }
    worker = await spawnWorker({
      TEMPORAL_ADDRESS: dev.address,
      KEEL_TASK_QUEUE: TASK_QUEUE,
      MODEL_SERVER_URL: models.url,
      BENCH_MAX_CACHED: String(MAX_CACHED),
    });
    const w = worker;
    w.child.once('exit', (code, signal) => {
      if (!stopping) {
        console.error(`the worker process exited (${code ?? signal}) during the benchmark`);
        process.exit(1);
      }
    });
    const latest = () => w.samples.at(-1);
    /** The settled figures: the mean of the last three samples. */
    const settled = () => {
      const last = w.samples.slice(-3);
      const avg = (f: (s: Sample) => number) => last.reduce((n, s) => n + f(s), 0) / last.length;
      return { rss: avg((s) => s.rss), heap: avg((s) => s.heap), cached: last.at(-1)!.cached };
    };
    const peakSince = (from: number) => Math.max(...w.samples.filter((s) => s.at >= from).map((s) => s.rss), 0);
    const sleepingCount = async () =>
      (await client.workflow.count(`TaskQueue = '${TASK_QUEUE}' AND KeelStatus = 'sleeping'`)).count;

    await sleep(SETTLE_MS);
    const idle = settled();
    console.log(`  idle worker (ready, no monitors yet): RSS ${fmt(idle.rss / MIB, 0)} MiB`);
    const rows: (string | number)[][] = [
      ['sleeping monitors', 'worker RSS MiB', 'over idle MiB', 'cached workflows', 'main-thread heap MiB', 'peak RSS in step MiB', 'step s', 'started/s'],
    ];

    // Starting: START_CONCURRENCY starters take the next index while fewer than IN_FLIGHT are
    // started and not yet asleep (the model's answer after schedule_next_turn frees a place).
    const handles: MonitorHandle[] = [];
    const rssByCount = new Map<number, number>();
    let next = 0;
    let waiting: (() => void)[] = [];
    onAsleep = () => {
      const wake = waiting;
      waiting = [];
      for (const resolve of wake) resolve();
    };
    const startUpTo = async (target: number) => {
      const starter = async () => {
        for (;;) {
          while (next - asleep.size >= IN_FLIGHT) await new Promise<void>((resolve) => waiting.push(resolve));
          if (next >= target) return;
          const i = next++;
          handles[i] = await agents.startMonitor(AGENT, `sleeper ${i}: look at the service, then decide when to look again.`, {
            workflowId: `sleeper-${i}`,
          });
        }
      };
      await Promise.all(Array.from({ length: START_CONCURRENCY }, starter));
    };

    let count = 0;
    let lastLine = 0;
    const progress = (label: string) => {
      if (Date.now() - lastLine < 10_000) return;
      lastLine = Date.now();
      const s = latest();
      console.log(
        `  ${label}: started ${next}/${N}, asleep ${count} (visibility), worker RSS ${fmt((s?.rss ?? 0) / MIB, 0)} MiB, ` +
          `cached ${s?.cached ?? '-'}, ${fmt((Date.now() - began) / 1000, 0)} s`,
      );
    };

    for (const target of CHECKPOINTS) {
      const stepStart = Date.now();
      const before = next;
      let starting = true;
      const started = startUpTo(target).finally(() => {
        starting = false;
      });
      started.catch(() => undefined); // awaited below; a failed start fails the benchmark there
      const reporter = (async () => {
        while (starting) {
          count = await sleepingCount().catch(() => count);
          progress(`to ${target}`);
          await sleep(1000);
        }
      })();
      await waitUntil(`${target} monitors started`, () => !starting, () => asleep.size);
      await started;
      await reporter;
      await waitUntil(
        `${target} monitors asleep (visibility: KeelStatus = 'sleeping')`,
        async () => {
          count = await sleepingCount();
          progress(`to ${target}`);
          return count >= target;
        },
        () => count,
      );
      const stepSeconds = (Date.now() - stepStart) / 1000;
      const peak = peakSince(stepStart);
      await sleep(SETTLE_MS);
      const s = settled();
      rssByCount.set(target, s.rss);
      // The model server records every request: forget them (all are asleep, none is in flight).
      models.reset();
      models.script(MODEL, responder(wakeAt));
      rows.push([
        target,
        fmt(s.rss / MIB, 0),
        fmt((s.rss - idle.rss) / MIB, 0),
        s.cached,
        fmt(s.heap / MIB, 0),
        fmt(peak / MIB, 0),
        fmt(stepSeconds, 0),
        fmt((target - before) / stepSeconds, 1),
      ]);
      console.log(`  ${target} asleep: worker RSS ${fmt(s.rss / MIB, 0)} MiB, cached ${s.cached}, step ${fmt(stepSeconds, 0)} s`);
    }

    // The burst: the monitors asleep the longest are woken together.
    const burst = handles.slice(0, BURST);
    const before = settled();
    const completions = burst.map((h, i) =>
      h.result().then((result) => {
        if (result.status !== 'completed' || result.turns !== 2) {
          throw new Error(`sleeper ${i} ended ${result.status} after ${result.turns} turns, expected completed after 2`);
        }
        return Date.now();
      }),
    );
    const wokeAt = Date.now();
    await Promise.all(burst.map((h) => h.wake()));
    const sentSeconds = (Date.now() - wokeAt) / 1000;
    console.log(`  burst: ${BURST} wake signals sent in ${fmt(sentSeconds, 2)} s`);
    let completed = 0;
    let finished = false;
    const all = Promise.all(completions.map((p) => p.then((t) => (completed++, t))));
    void all.then(
      () => (finished = true),
      () => (finished = true),
    );
    await waitUntil(`${BURST} woken monitors to complete`, () => finished, () => completed);
    const doneAt = await all;
    await sleep(1500); // one more RSS sample after the last completion
    const peak = peakSince(wokeAt - 500);
    const after = settled();
    const completion = doneAt.map((t) => (t - wokeAt) / 1000);
    const firstRequest = burst.map((_, i) => ((wakeRequestAt.get(i) ?? Number.NaN) - wokeAt) / 1000);
    const stillAsleep = await sleepingCount();

    console.log(
      `\nWorker RSS as the number of sleeping monitors grows (idle worker: ${fmt(idle.rss / MIB, 0)} MiB; read ${SETTLE_MS / 1000} s after each step; MiB = 2^20 bytes)\n`,
    );
    console.log(table(rows));
    console.log(
      `  main-thread heap = the V8 heap of the worker's main thread (activities, the conversation cache); workflows run in a\n` +
        `  workflow thread whose heap only RSS shows. step s = from the step's first start until visibility counts all asleep.`,
    );
    const full = CHECKPOINTS.filter((c) => c >= MAX_CACHED);
    const rssAt = (c: number) => rssByCount.get(c)!;
    if (full.length >= 2) {
      // Compared from the second step with the cache full, when the first wave of evictions (and
      // the garbage it leaves in the workflow thread's heap) is behind, if there is one.
      const base = full.length >= 3 ? full[1]! : full[0]!;
      const ratio = rssAt(N) / rssAt(base);
      const perSleeper = (rssAt(N) - rssAt(base)) / (N - base);
      const perCached = (rssAt(full[0]!) - idle.rss) / MAX_CACHED;
      console.log(
        `  From ${base} to ${N} asleep: RSS ${fmt(rssAt(base) / MIB, 0)} -> ${fmt(rssAt(N) / MIB, 0)} MiB, ${fmt(ratio, 2)} x ` +
          `(${ratio <= 1.1 ? 'flat' : 'GROWS'}): each sleeping monitor past the cache\n` +
          `  added ${fmt(perSleeper / 1024, 1)} KiB of worker RSS; a cached one ${fmt(perCached / 1024, 0)} KiB ` +
          `(${full[0]} asleep and cached: ${fmt((rssAt(full[0]!) - idle.rss) / MIB, 0)} MiB over the idle worker).`,
      );
    } else {
      console.log(`  (${N} monitors: too few to fill the worker's cache of ${MAX_CACHED} runs twice over; flatness is not shown.)`);
    }

    printCached(cachedPart);

    console.log(
      `\nBurst: ${BURST} monitors woken together by wake signals (the first started: asleep the longest` +
        `${N - BURST >= MAX_CACHED ? ', evicted from the worker cache' : ', possibly still cached'}); each does one more turn\n` +
        `(model: report_done, then its answer) and completes. Seconds from the wake instant (before the signals were sent):\n`,
    );
    console.log(
      table([
        ['per woken monitor', 'median s', 'p95 s', 'max s'],
        ['wake turn: first model request', fmt(quantile(firstRequest, 0.5), 2), fmt(quantile(firstRequest, 0.95), 2), fmt(Math.max(...firstRequest), 2)],
        ['completed (result seen by a client)', fmt(quantile(completion, 0.5), 2), fmt(quantile(completion, 0.95), 2), fmt(Math.max(...completion), 2)],
      ]),
    );
    console.log(
      `  all ${BURST} completed ${fmt(Math.max(...completion), 2)} s after the wake instant (${fmt(BURST / Math.max(...completion), 0)} monitors/s); ` +
        `signals sent in ${fmt(sentSeconds, 2)} s.\n` +
        `  worker RSS: ${fmt(before.rss / MIB, 0)} MiB before the burst, peak ${fmt(peak / MIB, 0)} MiB during it, ${fmt(after.rss / MIB, 0)} MiB after; ` +
        `${stillAsleep} monitors still asleep (visibility).\n` +
        `  total time ${fmt((Date.now() - began) / 1000, 0)} s.`,
    );
  } finally {
    stopping = true;
    if (worker && !worker.exited) {
      const w = worker;
      w.child.kill('SIGTERM');
      await Promise.race([new Promise((r) => w.child.once('exit', r)), sleep(10_000)]);
      killWorker();
    }
    await connection.close().catch(() => undefined);
    await models.close();
    stopAllDevServers();
    clearTimeout(deadline);
  }
}

let stopping = false;

main().catch((err: unknown) => {
  console.error(err);
  stopAllDevServers();
  process.exit(1);
});
