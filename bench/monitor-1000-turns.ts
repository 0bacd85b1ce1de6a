/**
 * A monitor that runs 1,000 turns: its current history stays bounded (it continues as new every
 * 100 turns) and its totals are exact across the chain of executions.
 *
 *   npx tsx bench/monitor-1000-turns.ts          (env: BENCH_MONITOR_TURNS, default 1000)
 *
 * One monitor, `budgets: { maxTurns: T }`, `options: { continueAsNewEveryTurns: 100 }`, against the
 * scripted model server, which answers every turn at once with plain text and a fixed usage
 * (7 input, 3 output tokens). A turn the model answers without scheduling is followed at once by
 * the next (prompt `continue`), so the turns run back to back with no sleep; the run ends
 * `max_turns` after turn T. Then the chain is walked back from the current (latest) execution
 * through each start event's continuedExecutionRunId, and each execution's history is measured:
 * events, and bytes as the server stores them (protobuf). Bounded means the current execution,
 * after T turns, is about the size of the first one, after 100 turns.
 *
 * Wake time: the monitor goes to sleep (schedule_next_turn, an hour ahead) WAKES times in its
 * first execution and WAKES times in its last; each time the worker is replaced by a new one (no
 * workflow and no conversation in its caches, as after a deploy), the monitor is woken (`wake`
 * signal), and the figure is the time from the signal to the next model request reaching the
 * model server. A run continued as new many times should wake as fast as a new one.
 * env: BENCH_MONITOR_WAKES (default 3), BENCH_TEMPORAL_PORT (default 7663).
 */
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime, bundleWorkflowCode } from '@temporalio/worker';
import { AgentClient } from '../src/client/agent-client.js';
import { defineAgent } from '../src/core/define.js';
import { createWorker, workflowsPath } from '../src/worker.js';
import { historyBytes } from '../test/support/history.js';
import { startModelServer, type Responder } from '../test/support/model-server.js';
import { quietLogger } from '../test/support/quiet-logger.js';
import { LIMIT_FLAGS, startDevServer, stopAllDevServers } from './support/dev-server.js';
import { fmt, table } from './support/stats.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const TURNS = Number(process.env.BENCH_MONITOR_TURNS ?? 1000);
const EVERY = 100;
const USAGE = { inputTokens: 7, outputTokens: 3 };
const MODEL = 'bench-monitor-turns';
const PORT = Number(process.env.BENCH_TEMPORAL_PORT ?? 7663);
const WAKES = Number(process.env.BENCH_MONITOR_WAKES ?? 3);
const TASK_QUEUE = 'bench-monitor-turns';
/** Far more than the run needs (about a minute for 1,000 turns); a hang fails with this message. */
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_S ?? 900) * 1000;

if (!Number.isInteger(TURNS) || TURNS < 1) throw new Error(`BENCH_MONITOR_TURNS must be a whole number of at least 1, got ${process.env.BENCH_MONITOR_TURNS}`);

// No tools of its own: the monitor adds report_done and schedule_next_turn, which this model never calls.
const agent = defineAgent({
  name: 'bench-monitor-turns',
  instructions: 'Keep watching.',
  model: `openai:${MODEL}`,
});

/**
 * Model requests (1-based) answered with schedule_next_turn: the monitor then sleeps after the
 * turn. WAKES in the first execution (its turns 21, 31, ...) and WAKES in the last (ending 20
 * turns before the end); a turn with a sleep takes two requests.
 */
const sleepAt = new Set<number>();
for (let i = 0; i < WAKES; i++) {
  sleepAt.add(Math.min(21 + 10 * i, TURNS));
  sleepAt.add(Math.max(1, TURNS - 20 - 10 * (WAKES - 1 - i)) + 2 * WAKES);
}
let answered = 0;
/** Every turn answered at once, with text (no tool call) and the same usage, but the sleeping ones. */
const responder: Responder = () => {
  answered++;
  if (sleepAt.has(answered)) {
    return {
      toolCalls: [{ name: 'schedule_next_turn', arguments: { delay_seconds: 3600, next_prompt: 'continue', reason: 'bench: woken by signal' } }],
      usage: USAGE,
    };
  }
  return { text: 'All quiet.', usage: USAGE };
};

interface Execution {
  runId: string;
  events: number;
  bytes: number;
  /** Size of the start event: the input, which carries the monitor's state across continue-as-new. */
  startBytes: number;
  /** Start event plus the continued-as-new event (the next execution's input): the carried state, twice. */
  carriedBytes: number;
  turns: number;
  /** The event that closed it: ContinuedAsNew, Completed, ... */
  closedBy: string;
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  console.log(
    `Monitor history over ${TURNS} turns: one monitor, budgets.maxTurns ${TURNS}, options.continueAsNewEveryTurns ${EVERY};\n` +
      `  the scripted model answers each turn at once (${USAGE.inputTokens} input, ${USAGE.outputTokens} output tokens), so turns run back to back.\n` +
      `  bytes = protobuf-encoded size of an execution's history events.${LIMIT_FLAGS ? ` Dev server flags: ${LIMIT_FLAGS}.` : ''}\n`,
  );
  const timeout = setTimeout(() => {
    console.error(`bench/monitor-1000-turns: no result after ${TIMEOUT_MS / 1000} s; giving up (BENCH_TIMEOUT_S raises the limit).`);
    stopAllDevServers();
    process.exit(1);
  }, TIMEOUT_MS);
  timeout.unref();

  const models = await startModelServer();
  models.script(MODEL, responder);
  const bundle = await bundleWorkflowCode({ workflowsPath, logger: quietLogger });
  const dev = startDevServer({ port: PORT, uiPort: PORT + 1000 });
  try {
    const connection = await NativeConnection.connect({ address: dev.address });
    const clientConnection = await Connection.connect({ address: dev.address });
    const client = new Client({ connection: clientConnection, namespace: 'default' });
    const startWorker = async () => {
      const worker = await createWorker({
        agents: [agent],
        connection,
        namespace: 'default',
        taskQueue: TASK_QUEUE,
        providers: { openai: { apiKey: 'bench', baseURL: models.openaiBaseURL } },
        workflowBundle: bundle,
      });
      return { worker, running: worker.run() };
    };
    let current = await startWorker();
    try {
      const agents = new AgentClient({ client, taskQueue: TASK_QUEUE });
      const started = Date.now();
      const monitor = await agents.startMonitor(agent, 'Watch the service and say what you see.', {
        budgets: { maxTurns: TURNS },
        options: { continueAsNewEveryTurns: EVERY },
      });
      const wakes: { turn: number; execution: number; ms: number }[] = [];
      let sleepsSeen = 0;
      let slept = 0;
      const ended = monitor.result();
      for (;;) {
        const done = await Promise.race([ended.then(() => true), delay(20).then(() => false)]);
        if (done) break;
        sleepsSeen = [...sleepAt].filter((n) => n <= answered).length;
        if (sleepsSeen === slept) continue;
        const state = await monitor.status().catch(() => undefined);
        if (state?.phase !== 'sleeping') continue;
        slept++;
        // A new worker: nothing of the monitor in its caches.
        current.worker.shutdown();
        await current.running;
        current = await startWorker();
        const before = models.requests(MODEL).length;
        const wokenAt = Date.now();
        await monitor.wake();
        while (models.requests(MODEL).length === before) await delay(2);
        const executions = await chainLength(client, monitor.workflowId);
        wakes.push({ turn: state.turns, execution: executions, ms: models.requests(MODEL)[before]!.receivedAt - wokenAt });
      }
      const result = await ended;
      const seconds = (Date.now() - started) / 1000;
      const chain = await walkChain(client, monitor.workflowId);
      report(result, chain, seconds, models.requests(MODEL).length, wakes);
    } finally {
      current.worker.shutdown();
      await current.running;
      await clientConnection.close();
      await connection.close();
    }
  } finally {
    dev.stop();
    await models.close();
    stopAllDevServers();
    clearTimeout(timeout);
  }
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How many executions the chain has so far. */
async function chainLength(client: Client, workflowId: string): Promise<number> {
  let n = 0;
  let runId: string | undefined;
  for (;;) {
    n++;
    const description = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const previous = description.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    if (!previous) return n;
    runId = previous;
  }
}

/** The executions of the chain, first to current, each measured. */
async function walkChain(client: Client, workflowId: string): Promise<Execution[]> {
  const chain: Execution[] = [];
  let runId: string | undefined;
  for (;;) {
    const handle = client.workflow.getHandle(workflowId, runId);
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    const first = events[0];
    const last = events.at(-1);
    chain.unshift({
      runId: runId ?? first?.workflowExecutionStartedEventAttributes?.originalExecutionRunId ?? '?',
      events: events.length,
      bytes: historyBytes(history),
      startBytes: first ? historyBytes({ events: [first] }) : 0,
      carriedBytes: historyBytes({ events: events.filter((e) => e.workflowExecutionStartedEventAttributes || e.workflowExecutionContinuedAsNewEventAttributes) }),
      turns: events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'modelTurn').length,
      closedBy: closeKind(last),
    });
    const previous = first?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    if (!previous) return chain;
    runId = previous;
  }
}

function closeKind(event: HistoryEvent | undefined): string {
  if (event?.workflowExecutionContinuedAsNewEventAttributes) return 'continued as new';
  if (event?.workflowExecutionCompletedEventAttributes) return 'completed';
  if (event?.workflowExecutionFailedEventAttributes) return 'failed';
  return 'other';
}

function report(
  result: { status: string; turns: number; usage: { inputTokens: number; outputTokens: number } },
  chain: Execution[],
  seconds: number,
  modelRequests: number,
  wakes: { turn: number; execution: number; ms: number }[],
): void {
  if (result.status !== 'max_turns') throw new Error(`the monitor ended ${result.status}, expected max_turns`);
  // Every execution but the last is shown when the chain is short; else the first three and the last three.
  const shown = chain.length <= 8 ? chain.map((_, i) => i) : [0, 1, 2, -1, chain.length - 3, chain.length - 2, chain.length - 1];
  let firstTurn = 1;
  const turnRanges = chain.map((e) => {
    const range = `${firstTurn}-${firstTurn + e.turns - 1}`;
    firstTurn += e.turns;
    return range;
  });
  const rows: (string | number)[][] = [
    ['execution', 'turns', 'events', 'history bytes', 'start event bytes', 'bytes less carried state', 'closed by'],
  ];
  for (const i of shown) {
    if (i < 0) {
      rows.push(['...', '', '', '', '', '', '']);
      continue;
    }
    const e = chain[i]!;
    const label = i === 0 ? `1 (first, ${e.turns} turns)` : i === chain.length - 1 ? `${i + 1} (current)` : String(i + 1);
    rows.push([label, turnRanges[i]!, e.events, e.bytes, e.startBytes, e.bytes - e.carriedBytes, e.closedBy]);
  }
  console.log(table(rows));

  const first = chain[0]!;
  const current = chain.at(-1)!;
  // Every request has the same usage; a turn that schedules a sleep makes two.
  const expected = { inputTokens: modelRequests * USAGE.inputTokens, outputTokens: modelRequests * USAGE.outputTokens };
  const turnsExact = result.turns === TURNS;
  const usageExact = result.usage.inputTokens === expected.inputTokens && result.usage.outputTokens === expected.outputTokens;
  const diff = (a: number, b: number) => `${a - b >= 0 ? '+' : ''}${a - b}`;
  const eventRatio = current.events / first.events;
  const byteRatio = current.bytes / first.bytes;
  const ownRatio = (current.bytes - current.carriedBytes) / (first.bytes - first.carriedBytes);
  const bounded = eventRatio <= 1.05 && ownRatio <= 1.1;
  // The carried state's growth per turn, from the second execution's input to the current one's.
  const second = chain[1];
  const carriedPerTurn = second && second !== current ? (current.startBytes - second.startBytes) / (TURNS - current.turns - first.turns) : Number.NaN;
  console.log(
    `\n  start event bytes = the execution's input: the goal and options, and from the second on the state carried across\n` +
      `  continue-as-new (counters, usage, inbox, agent spec, compaction episodes). A continued execution also ends with\n` +
      `  that state (its continued-as-new event holds the next input); bytes less carried state leaves both out.\n`,
  );
  const usageText = usageExact
    ? 'exact'
    : `off by ${diff(result.usage.inputTokens, expected.inputTokens)} / ${diff(result.usage.outputTokens, expected.outputTokens)}`;
  console.log(
    `Bounded: the current execution, after ${TURNS} turns, has ${current.events} events, ${current.bytes} bytes; the first, after ` +
      `${first.turns} turns, ${first.events} events, ${first.bytes} bytes:\n` +
      `  ${fmt(eventRatio, 2)} x the events, ${fmt(byteRatio, 2)} x the bytes, ${fmt(ownRatio, 2)} x the bytes less carried state ` +
      `(${bounded ? 'bounded' : 'GROWS'}); ${chain.length} executions in the chain.\n` +
      (Number.isFinite(carriedPerTurn)
        ? `  The carried state grows by ${fmt(carriedPerTurn, 1)} bytes per turn (start event of execution 2 to the current one): one compaction\n` +
          `  episode per turn the model still sees, until the conversation outgrows options.contextTokens and compaction drops the oldest.\n`
        : '') +
      `Totals: turns ${result.turns} (${turnsExact ? 'exact' : `off by ${diff(result.turns, TURNS)}`}); usage ${result.usage.inputTokens} input / ` +
      `${result.usage.outputTokens} output tokens (${usageText}: ${modelRequests} requests x ${USAGE.inputTokens} / ${USAGE.outputTokens}); ${modelRequests} model requests.\n` +
      `Elapsed: ${fmt(seconds)} s for ${TURNS} turns (${fmt((seconds * 1000) / TURNS, 1)} ms per turn).`,
  );
  const last = chain.length;
  const at = (first: boolean) => wakes.filter((w) => (first ? w.execution === 1 : w.execution === last)).map((w) => w.ms);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? Number.NaN;
  console.log(
    `\nWake time on a new worker (from the wake signal to the model request), ms: in the first execution ` +
      `${at(true).map((ms) => fmt(ms, 0)).join(', ')} (median ${fmt(median(at(true)), 0)}); in the last (execution ${last}) ` +
      `${at(false).map((ms) => fmt(ms, 0)).join(', ')} (median ${fmt(median(at(false)), 0)}): ` +
      `${fmt(median(at(false)) - median(at(true)), 0)} ms more, ${fmt((median(at(false)) - median(at(true))) / Math.max(1, last - 1), 1)} ms per execution.`,
  );
  if (!turnsExact || !usageExact) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  stopAllDevServers();
  process.exit(1);
});
