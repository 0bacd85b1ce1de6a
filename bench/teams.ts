/**
 * What teams of agents cost: a handoff, a sub-agent call and a background agent's report, each
 * against a baseline measured in the same run, on the same dev server and worker.
 *
 *   npx tsx bench/teams.ts          (env: BENCH_TEAMS_RUNS, default 30; BENCH_TEAMS_BACKGROUND_RUNS, default 20;
 *                                    BENCH_TEAMS_WARMUP, default 2 per arm, discarded)
 *
 * One dev server of its own (port 7693) and one in-process keel worker; the model is the scripted
 * model server at zero latency, and every time below is read in this process with performance.now()
 * when the model server's responder runs (a request has arrived; with no delay, the reply is
 * written at once).
 *
 * 1. Handoff. Agent A's turn 1 calls transfer_to_<B>, then B answers (turn 2); baseline: A's turn 1
 *    calls a read-only tool that returns at once, then A answers. Time = first model request to the
 *    second; history of turn 1 = the events from turn 1's model ActivityTaskScheduled to turn 2's.
 * 2. Sub-agent call. A lead's turn 1 calls a sub-agent (a child workflow whose model answers at
 *    once), then the lead answers; baseline: the lead calls the read-only tool instead. Time and
 *    the lead's turn-1 history as above, and the child's whole history.
 * 3. Background report. A monitor spawns a watcher (a child monitor) and sleeps (schedule_next_turn,
 *    1 h); the watcher sleeps too. Once both sleep, the client wakes the watcher, whose model
 *    replies report_alert: time from that reply to the monitor's next model request (the report
 *    wakes it). Baseline: the same monitor and watcher, both asleep, and a plain `wake` signal
 *    from the client to the monitor: time from the signal sent to the monitor's next model request.
 *
 * Arms alternate run by run (test, baseline, test, ...) after warm-up runs.
 */
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime, bundleWorkflowCode } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { AgentClient, type RunHandle } from '../src/client/agent-client.js';
import type { MonitorHandle } from '../src/client/monitor-handle.js';
import { defineAgent, defineTool } from '../src/core/define.js';
import { createWorker, keelBundleOptions } from '../src/worker.js';
import { eventTypes, historyBytes, type History } from '../test/support/history.js';
import { startModelServer, type RecordedRequest, type Responder } from '../test/support/model-server.js';
import { quietLogger } from '../test/support/quiet-logger.js';
import { LIMIT_FLAGS, startDevServer, stopAllDevServers } from './support/dev-server.js';
import { fmt, mean, quantile, table } from './support/stats.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const RUNS = Number(process.env.BENCH_TEAMS_RUNS ?? 30);
const BACKGROUND_RUNS = Number(process.env.BENCH_TEAMS_BACKGROUND_RUNS ?? 20);
const WARMUP = Number(process.env.BENCH_TEAMS_WARMUP ?? 2);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_S ?? 600) * 1000;
const PORT = 7693;
const TASK_QUEUE = 'bench-teams';
const HOUR_S = 3600;

const M = {
  a: 'bench-team-a',
  b: 'bench-team-b',
  lead: 'bench-team-lead',
  helper: 'bench-team-helper',
  monitor: 'bench-team-monitor',
  watcher: 'bench-team-watcher',
} as const;

// --- agents -----------------------------------------------------------------------------------

const lookup = defineTool({
  name: 'lookup',
  description: 'Look up an item.',
  input: z.object({ item: z.number().int() }),
  readOnly: true,
  execute: ({ item }) => ({ item, price: item * 3 + 1, currency: 'EUR' }),
});

const teamB = defineAgent({ name: 'team-b', description: 'Answers.', instructions: 'You are B. Answer.', model: `openai:${M.b}` });
const teamA = defineAgent({
  name: 'team-a',
  instructions: 'You are A. Hand off to B, or look up and answer.',
  model: `openai:${M.a}`,
  tools: [lookup],
  handoffs: [teamB],
});
const helper = defineAgent({ name: 'team-helper', description: 'Does one task.', instructions: 'You help.', model: `openai:${M.helper}` });
const lead = defineAgent({
  name: 'team-lead',
  instructions: 'You lead: ask your helper, or look up, then answer.',
  model: `openai:${M.lead}`,
  tools: [lookup],
  subAgents: [helper],
});
const watcher = defineAgent({ name: 'team-watcher', instructions: 'You watch; alert when told to.', model: `openai:${M.watcher}` });
const monitor = defineAgent({
  name: 'team-monitor',
  instructions: 'Start a watcher, then sleep until it reports.',
  model: `openai:${M.monitor}`,
  background: { agent: watcher },
});

const HANDOFF_TOOL = 'transfer_to_team-b';
const SUB_TOOL = 'team-helper';

// --- the scripted model -----------------------------------------------------------------------

interface Message {
  role: string;
  content: unknown;
}

/** Every run's prompt carries its ID, `#<letter><n>`; the letter is its arm. */
const ID = /#([a-z]\d+)/;

function messagesOf(request: RecordedRequest): Message[] {
  return (request.body?.messages ?? []) as Message[];
}

/** The run ID named in the request's first user message (the run's prompt, or a sub-agent's task). */
function idOf(request: RecordedRequest): string {
  const first = messagesOf(request).find((m) => m.role === 'user');
  const id = ID.exec(JSON.stringify(first?.content ?? ''))?.[1];
  if (!id) throw new Error(`no run ID in the first user message of a ${request.model} request`);
  return id;
}

const lastRole = (request: RecordedRequest) => messagesOf(request).at(-1)?.role;
const userMessages = (request: RecordedRequest) => messagesOf(request).filter((m) => m.role === 'user').length;
const usage = { inputTokens: 10, outputTokens: 5 };

/** performance.now() of each model request of a run (A and B; the lead; the monitor), by run ID. */
const requestAt = new Map<string, number[]>();
/** performance.now() when the watcher's report_alert reply was made, by the monitor's run ID. */
const alertAt = new Map<string, number>();

function record(request: RecordedRequest): { id: string; at: number } {
  const at = performance.now();
  const id = idOf(request);
  const list = requestAt.get(id) ?? [];
  list.push(at);
  requestAt.set(id, list);
  return { id, at };
}

/** A: turn 1 hands off (arm h) or looks up (arm t); after a tool result, it answers. */
const aResponder: Responder = (request) => {
  const { id } = record(request);
  if (lastRole(request) !== 'user') return { text: 'A answers.', usage };
  if (id.startsWith('h')) return { toolCalls: [{ id: 'h1', name: HANDOFF_TOOL, arguments: {} }], usage };
  return { toolCalls: [{ id: 'l1', name: 'lookup', arguments: { item: 1 } }], usage };
};
const bResponder: Responder = (request) => {
  record(request);
  return { text: 'B answers.', usage };
};
/** The lead: turn 1 calls the sub-agent (arm s) or looks up (arm u); then it answers. */
const leadResponder: Responder = (request) => {
  const { id } = record(request);
  if (lastRole(request) !== 'user') return { text: 'The lead answers.', usage };
  if (id.startsWith('s')) return { toolCalls: [{ id: 'sub1', name: SUB_TOOL, arguments: { input: `task #${id}` } }], usage };
  return { toolCalls: [{ id: 'l1', name: 'lookup', arguments: { item: 1 } }], usage };
};
const helperResponder: Responder = () => ({ text: 'Helped.', usage });

const sleepCall = (nextPrompt: string) => ({
  name: 'schedule_next_turn',
  arguments: { delay_seconds: HOUR_S, next_prompt: nextPrompt, reason: 'wait' },
});
/** The monitor: turn 1 spawns the watcher and sleeps an hour; woken, it is done. */
const monitorResponder: Responder = (request) => {
  const { id } = record(request);
  if (lastRole(request) !== 'user') return { text: 'Sleeping until the watcher reports.', usage };
  if (userMessages(request) === 1) {
    return {
      toolCalls: [
        { id: 'sp1', name: 'spawn_agent', arguments: { name: 'w', goal: `watch #${id}` } },
        { id: 'sl1', ...sleepCall('Woken: finish.') },
      ],
      usage,
    };
  }
  return { toolCalls: [{ id: 'd1', name: 'report_done', arguments: { detail: 'done' } }], usage };
};
/** The watcher: turn 1 sleeps an hour; woken, it reports an alert (and sleeps again). */
const watcherResponder: Responder = (request) => {
  const id = idOf(request);
  if (lastRole(request) !== 'user') return { text: 'Watching.', usage };
  if (userMessages(request) === 1) return { toolCalls: [{ id: 'ws1', ...sleepCall(`alert now #${id}`) }], usage };
  alertAt.set(id, performance.now());
  return {
    toolCalls: [
      { id: 'wa1', name: 'report_alert', arguments: { text: `alert #${id}` } },
      { id: 'ws2', ...sleepCall('keep watching') },
    ],
    usage,
  };
};

// --- helpers ----------------------------------------------------------------------------------

/** Events of turn 1: from turn 1's model ActivityTaskScheduled to turn 2's (not included). */
function turnOne(history: History): HistoryEvent[] {
  const events = history.events ?? [];
  const at: number[] = [];
  events.forEach((event, i) => {
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'modelTurn') at.push(i);
  });
  if (at.length < 2) throw new Error(`found ${at.length} model activities in the history, expected 2`);
  return events.slice(at[0], at[1]);
}

function firstGap(id: string): number {
  const times = requestAt.get(id) ?? [];
  if (times.length < 2) throw new Error(`run ${id}: ${times.length} model requests, expected at least 2`);
  return times[1]! - times[0]!;
}

async function until(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function sleeping(m: MonitorHandle): Promise<boolean> {
  try {
    return (await m.status()).phase === 'sleeping';
  } catch {
    return false; // not started yet
  }
}

function loadavg(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return '?';
  }
}

/** Compact event types of one turn: `ACTIVITY_TASK_SCHEDULED` -> `ActivityTaskScheduled`, repeats counted. */
function typesOf(events: HistoryEvent[]): string {
  const names = eventTypes({ events }).map((n) =>
    n
      .toLowerCase()
      .split('_')
      .map((w) => w[0]!.toUpperCase() + w.slice(1))
      .join(''),
  );
  const out: string[] = [];
  for (let i = 0; i < names.length; ) {
    let j = i;
    while (names[j] === names[i]) j++;
    out.push(j - i > 1 ? `${names[i]} x${j - i}` : names[i]!);
    i = j;
  }
  return out.join(', ');
}

interface TurnArm {
  gaps: number[];
  events: number[];
  bytes: number[];
  /** Bytes of turn 1's MarkerRecorded events (local activities: a handoff's resolved spec). */
  markerBytes: number[];
  /** Event types of the first measured run's turn 1. */
  types: string;
}
const newTurnArm = (): TurnArm => ({ gaps: [], events: [], bytes: [], markerBytes: [], types: '' });

function addTurn(arm: TurnArm, id: string, history: History): void {
  const turn = turnOne(history);
  arm.gaps.push(firstGap(id));
  arm.events.push(turn.length);
  arm.bytes.push(historyBytes({ events: turn }));
  arm.markerBytes.push(historyBytes({ events: turn.filter((e) => e.markerRecordedEventAttributes) }));
  arm.types ||= typesOf(turn);
}

/** Median (min-max) of whole numbers, or the one value when all are equal. */
function spread(values: number[]): string {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return lo === hi ? String(lo) : `${fmt(quantile(values, 0.5), 0)} (${lo}-${hi})`;
}

const ms = (values: number[], q: number) => fmt(quantile(values, q), 1);
const delta = (a: number, b: number, digits = 0) => `${a - b >= 0 ? '+' : ''}${fmt(a - b, digits)}`;

// --- main -------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const began = Date.now();
  const deadline = setTimeout(() => {
    console.error(`\nbench/teams: not finished after ${TIMEOUT_MS / 1000} s; giving up (BENCH_TIMEOUT_S raises the limit).`);
    process.exit(1); // the exit hook stops the dev server
  }, TIMEOUT_MS);
  deadline.unref();
  Runtime.install({ logger: new DefaultLogger('WARN') });
  console.log(
    `Teams of agents: a handoff, a sub-agent call and a background report, each against a baseline in the same run.\n` +
      `  One dev server (port ${PORT}) and one in-process worker; scripted model at zero latency. Times in ms, read with\n` +
      `  performance.now() in this process when the scripted model server's responder runs. ${WARMUP} warm-up runs per arm\n` +
      `  discarded; arms alternate run by run. History bytes = protobuf-encoded size of the events (what the server stores).\n` +
      (LIMIT_FLAGS ? `  Dev server flags: ${LIMIT_FLAGS}.\n` : '') +
      `  Load average before: ${loadavg()}.\n`,
  );

  const models = await startModelServer();
  models.script(M.a, aResponder);
  models.script(M.b, bResponder);
  models.script(M.lead, leadResponder);
  models.script(M.helper, helperResponder);
  models.script(M.monitor, monitorResponder);
  models.script(M.watcher, watcherResponder);
  const bundle = await bundleWorkflowCode({ ...keelBundleOptions, logger: quietLogger });
  const dev = startDevServer({ port: PORT, uiPort: PORT + 1000 });
  const handoff = { test: newTurnArm(), base: newTurnArm() };
  const sub = { test: newTurnArm(), base: newTurnArm(), childEvents: [] as number[], childBytes: [] as number[], childTypes: '' };
  const report = { test: [] as number[], base: [] as number[] };
  const seconds: Record<string, number> = {};
  try {
    const connection = await NativeConnection.connect({ address: dev.address });
    const clientConnection = await Connection.connect({ address: dev.address });
    const client = new Client({ connection: clientConnection, namespace: 'default' });
    const worker = await createWorker({
      agents: [teamA, teamB, lead, helper, monitor, watcher],
      connection,
      namespace: 'default',
      taskQueue: TASK_QUEUE,
      providers: { openai: { apiKey: 'bench', baseURL: models.openaiBaseURL } },
      workflowBundle: bundle,
    });
    const running = worker.run();
    const agents = new AgentClient({ client, taskQueue: TASK_QUEUE });
    const tag = () => randomUUID().slice(0, 6);

    /** Runs to the end one two-turn run; returns its history. */
    const twoTurns = async (agent: typeof teamA, id: string, expectAgent: string): Promise<{ run: RunHandle; history: History }> => {
      const run = await agents.start(agent, `Go #${id}.`, { workflowId: `bench-teams-${id}-${tag()}` });
      const result = await run.result();
      if (result.status !== 'completed' || result.turns !== 2 || result.agent !== expectAgent) {
        throw new Error(`run ${run.workflowId}: ${result.status} after ${result.turns} turns by ${result.agent}, expected completed after 2 by ${expectAgent}`);
      }
      return { run, history: await run.workflow.fetchHistory() };
    };

    try {
      // 1. Handoff vs. a read-only tool.
      let started = Date.now();
      for (let i = 0; i < WARMUP + RUNS; i++) {
        const measured = i >= WARMUP;
        const h = await twoTurns(teamA, `h${i}`, 'team-b');
        if (measured) addTurn(handoff.test, `h${i}`, h.history);
        const t = await twoTurns(teamA, `t${i}`, 'team-a');
        if (measured) addTurn(handoff.base, `t${i}`, t.history);
      }
      seconds.handoff = (Date.now() - started) / 1000;

      // 2. Sub-agent call vs. a read-only tool.
      started = Date.now();
      for (let i = 0; i < WARMUP + RUNS; i++) {
        const measured = i >= WARMUP;
        const s = await twoTurns(lead, `s${i}`, 'team-lead');
        if (measured) {
          addTurn(sub.test, `s${i}`, s.history);
          const child = await client.workflow.getHandle(`${s.run.workflowId}/${SUB_TOOL}-sub1`).fetchHistory();
          sub.childEvents.push(child.events?.length ?? 0);
          sub.childBytes.push(historyBytes(child));
          sub.childTypes ||= typesOf(child.events ?? []);
        }
        const u = await twoTurns(lead, `u${i}`, 'team-lead');
        if (measured) addTurn(sub.base, `u${i}`, u.history);
      }
      seconds.sub = (Date.now() - started) / 1000;

      // 3. Background report vs. a wake signal.
      started = Date.now();
      for (let i = 0; i < WARMUP + BACKGROUND_RUNS; i++) {
        const measured = i >= WARMUP;
        for (const arm of ['r', 'w'] as const) {
          const id = `${arm}${i}`;
          const parent = await agents.startMonitor(monitor, `Watch #${id}.`, { workflowId: `bench-teams-${id}-${tag()}` });
          const child = agents.getMonitor(`${parent.workflowId}/w`);
          await until(`${id}: the monitor and its watcher asleep`, async () => (await sleeping(parent)) && (await sleeping(child)));
          // Let the last workflow task completions land before the trigger.
          await settle(20);
          const before = requestAt.get(id)?.length ?? 0;
          let from: number;
          if (arm === 'r') {
            await child.wake();
            await until(`${id}: the watcher's alert`, () => alertAt.has(id));
            from = alertAt.get(id)!;
          } else {
            from = performance.now();
            await parent.wake();
          }
          await until(`${id}: the monitor's next model request`, () => (requestAt.get(id)?.length ?? 0) > before);
          const gap = requestAt.get(id)![before]! - from;
          const result = await parent.result();
          if (result.status !== 'completed') throw new Error(`monitor ${parent.workflowId} ended ${result.status}`);
          // The monitor's end cancels its watcher; wait for that, so that the next run starts alone.
          await client.workflow
            .getHandle(child.workflowId)
            .result()
            .catch(() => undefined);
          if (measured) (arm === 'r' ? report.test : report.base).push(gap);
        }
      }
      seconds.background = (Date.now() - started) / 1000;
    } finally {
      worker.shutdown();
      await running.catch((err: unknown) => console.error(err));
      await clientConnection.close();
      await connection.close();
    }
  } finally {
    dev.stop();
    await models.close();
    stopAllDevServers();
    clearTimeout(deadline);
  }

  // --- report ---------------------------------------------------------------------------------
  const p50 = (values: number[]) => quantile(values, 0.5);
  const turnRow = (label: string, arm: TurnArm) => [
    label,
    arm.gaps.length,
    ms(arm.gaps, 0.5),
    ms(arm.gaps, 0.95),
    fmt(mean(arm.gaps), 1),
    spread(arm.events),
    spread(arm.bytes),
  ];
  const turnHeader = ['arm', 'runs', 'req 1 -> 2 p50', 'p95', 'mean', 'turn-1 events', 'turn-1 bytes'];

  console.log(`1. Handoff vs. a read-only tool call (measured in ${fmt(seconds.handoff ?? 0, 0)} s)`);
  console.log(
    table([
      turnHeader,
      turnRow(`handoff: A calls ${HANDOFF_TOOL}, B answers`, handoff.test),
      turnRow('tool: A calls lookup, A answers', handoff.base),
      [
        'handoff - tool',
        '',
        delta(p50(handoff.test.gaps), p50(handoff.base.gaps), 1),
        delta(quantile(handoff.test.gaps, 0.95), quantile(handoff.base.gaps, 0.95), 1),
        delta(mean(handoff.test.gaps), mean(handoff.base.gaps), 1),
        delta(p50(handoff.test.events), p50(handoff.base.events)),
        delta(p50(handoff.test.bytes), p50(handoff.base.bytes)),
      ],
    ]),
  );
  console.log(
    `  req 1 -> 2 = A's first model request to the run's second (B's first, or A's second); ms.\n` +
      `  turn-1 events/bytes = from turn 1's model ActivityTaskScheduled to turn 2's, median (min-max) over the runs.\n` +
      `  handoff turn: ${handoff.test.types}\n` +
      `    (its MarkerRecorded, the local activity that resolved ${teamB.name}'s spec, recorded: ${spread(handoff.test.markerBytes)} bytes)\n` +
      `  tool turn:    ${handoff.base.types}\n`,
  );

  console.log(`2. Sub-agent call vs. a read-only tool call (measured in ${fmt(seconds.sub ?? 0, 0)} s)`);
  console.log(
    table([
      turnHeader,
      turnRow(`sub-agent: the lead calls ${SUB_TOOL} (child answers at once)`, sub.test),
      turnRow('tool: the lead calls lookup', sub.base),
      [
        'sub-agent - tool',
        '',
        delta(p50(sub.test.gaps), p50(sub.base.gaps), 1),
        delta(quantile(sub.test.gaps, 0.95), quantile(sub.base.gaps, 0.95), 1),
        delta(mean(sub.test.gaps), mean(sub.base.gaps), 1),
        delta(p50(sub.test.events), p50(sub.base.events)),
        delta(p50(sub.test.bytes), p50(sub.base.bytes)),
      ],
      ['the child run (one turn, closed): whole history', sub.childEvents.length, '', '', '', spread(sub.childEvents), spread(sub.childBytes)],
    ]),
  );
  console.log(
    `  req 1 -> 2 = the lead's first model request to its second; ms. turn-1 events/bytes in the lead's history, as above.\n` +
      `  sub-agent turn: ${sub.test.types}\n` +
      `  tool turn:      ${sub.base.types}\n` +
      `  child:          ${sub.childTypes}\n`,
  );

  console.log(`3. Background report vs. a wake signal, to a sleeping monitor (measured in ${fmt(seconds.background ?? 0, 0)} s)`);
  console.log(
    table([
      ['arm', 'runs', 'p50', 'p95', 'mean', 'min', 'max'],
      ...(
        [
          ["report: watcher's report_alert reply -> monitor's next model request", report.test],
          ['wake: client signal sent -> monitor\'s next model request', report.base],
        ] as const
      ).map(([label, v]) => [label, v.length, ms(v, 0.5), ms(v, 0.95), fmt(mean(v), 1), fmt(Math.min(...v), 1), fmt(Math.max(...v), 1)]),
      ['report - wake', '', delta(p50(report.test), p50(report.base), 1), delta(quantile(report.test, 0.95), quantile(report.base, 0.95), 1), delta(mean(report.test), mean(report.base), 1), '', ''],
    ]),
  );
  console.log(
    `  Both arms: a monitor that spawned a watcher, both asleep (schedule_next_turn, 1 h) before the trigger. report: the client\n` +
      `  wakes the watcher, whose model replies report_alert and schedule_next_turn (its next model request follows at once, on\n` +
      `  the same worker); the report reaches the monitor by signal. wake: the client signals the monitor itself. ms.\n`,
  );

  console.log(
    `teams: handoff turn p50 ${ms(handoff.test.gaps, 0.5)} ms vs tool turn ${ms(handoff.base.gaps, 0.5)} ms ` +
      `(${delta(p50(handoff.test.events), p50(handoff.base.events))} events, ${delta(p50(handoff.test.bytes), p50(handoff.base.bytes))} bytes); ` +
      `sub-agent call p50 / p95 ${ms(sub.test.gaps, 0.5)} / ${ms(sub.test.gaps, 0.95)} ms vs tool ${ms(sub.base.gaps, 0.5)} / ${ms(sub.base.gaps, 0.95)} ms ` +
      `(${delta(p50(sub.test.events), p50(sub.base.events))} events, ${delta(p50(sub.test.bytes), p50(sub.base.bytes))} bytes in the parent; ` +
      `child ${fmt(p50(sub.childEvents), 0)} events, ${fmt(p50(sub.childBytes), 0)} bytes); ` +
      `background report -> parent's next model request p50 ${ms(report.test, 0.5)} ms vs wake signal ${ms(report.base, 0.5)} ms`,
  );
  console.log(`  total time ${fmt((Date.now() - began) / 1000, 0)} s; load average after: ${loadavg()}.`);
}

main().catch((err: unknown) => {
  console.error(err);
  stopAllDevServers();
  process.exit(1);
});
