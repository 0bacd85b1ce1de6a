/**
 * Per-turn orchestration overhead of the agent loop, against a floor workflow that schedules the
 * same activities and does nothing else.
 *
 *   npx tsx bench/turn-overhead.ts          (env: BENCH_TURNS, BENCH_K, BENCH_RUNS, BENCH_WARMUP)
 *
 * keel arm: an OpenAI-path agent against the scripted model server at zero latency; on each of T
 * turns the model asks for k parallel read-only tool calls (tools with empty bodies), then answers.
 * A turn's time is the gap between consecutive model HTTP requests of a run (the model server's
 * `receivedAt`): model reply -> activity completion -> workflow task -> k tool activities ->
 * workflow task -> next model activity -> HTTP request.
 * floor arm: bench/floor-workflow.ts, one "model" activity then k parallel "tool" activities per
 * turn, empty bodies; a turn's time is the gap between consecutive starts of the "model" activity.
 *
 * Both arms run on the same dev server and worker process, interleaved (keel, floor, keel, ...),
 * after warm-up runs that are discarded; the whole thing is done twice: on a dev server as it
 * comes, and on one with eager activity execution enabled.
 */
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { Context } from '@temporalio/activity';
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { AgentClient } from '../src/client/agent-client.js';
import { quietLogger } from '../test/support/quiet-logger.js';
import { defineAgent, defineTool } from '../src/core/define.js';
import { createWorker, keelBundleOptions } from '../src/worker.js';
import { startModelServer, type ModelServer, type Responder } from '../test/support/model-server.js';
import { LIMIT_FLAGS, startDevServer, stopAllDevServers } from './support/dev-server.js';
import { readFileSync } from 'node:fs';
import { fmt, mean, quantile, table } from './support/stats.js';
import type { FloorActivities, FloorInput } from './floor-workflow.js';

type History = temporal.api.history.v1.IHistory;

const TURNS = Number(process.env.BENCH_TURNS ?? 20);
const K = Number(process.env.BENCH_K ?? 2);
const RUNS = Number(process.env.BENCH_RUNS ?? 12);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const MODEL = 'bench-turns';
const EXPECTED_EVENTS = 9 + 3 * K;

const SERVERS = [
  { label: 'default', port: 7633, uiPort: 8633, flags: '' },
  {
    label: 'eager activities',
    port: 7643,
    uiPort: 8643,
    flags: '--dynamic-config-value system.enableActivityEagerExecution=true',
  },
];


const noop = defineTool({
  name: 'noop',
  description: 'Does nothing.',
  input: z.object({}),
  readOnly: true,
  execute: () => '',
});

const agent = defineAgent({
  name: 'bench-turns',
  instructions: 'Benchmark agent.',
  model: `openai:${MODEL}`,
  tools: [noop],
  maxTurns: TURNS + 5,
});

/** k parallel calls on turns 1..T, then the answer; the turn is read from the request itself. */
const responder: Responder = (request) => {
  const messages = (request.body?.messages ?? []) as { role: string }[];
  const turn = messages.filter((m) => m.role === 'assistant').length + 1;
  if (turn > TURNS) return { text: 'done', usage: { inputTokens: 1, outputTokens: 1 } };
  return {
    toolCalls: Array.from({ length: K }, () => ({ name: 'noop', arguments: {} })),
    usage: { inputTokens: 1, outputTokens: 1 },
  };
};

interface ArmResult {
  /** Per-turn gaps, ms, over the measured runs. */
  gaps: number[];
  /** History events attributable to each turn (between consecutive model ActivityTaskScheduled). */
  eventsPerTurn: number[];
  /** UpsertWorkflowSearchAttributes events per run. */
  upserts: number[];
  /** Model activity schedule->start, ms, from history timestamps. */
  scheduleToStart: number[];
}

const newArm = (): ArmResult => ({ gaps: [], eventsPerTurn: [], upserts: [], scheduleToStart: [] });

function gaps(times: number[]): number[] {
  return times.slice(1).map((t, i) => t - times[i]!);
}

function millis(time: temporal.api.history.v1.IHistoryEvent['eventTime']): number {
  if (!time) return Number.NaN;
  return Number(time.seconds ?? 0) * 1000 + (time.nanos ?? 0) / 1e6;
}

/** Events per turn, upserts and model schedule->start latencies of one run's history. */
function readHistory(history: History, modelActivity: string, arm: ArmResult): void {
  const events = history.events ?? [];
  const modelScheduled: number[] = [];
  const scheduledAt = new Map<string, number>();
  let upserts = 0;
  events.forEach((event, i) => {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === modelActivity) {
      modelScheduled.push(i);
      scheduledAt.set(String(event.eventId), millis(event.eventTime));
    }
    const started = event.activityTaskStartedEventAttributes;
    if (started) {
      const at = scheduledAt.get(String(started.scheduledEventId));
      if (at !== undefined) arm.scheduleToStart.push(millis(event.eventTime) - at);
    }
    if (event.upsertWorkflowSearchAttributesEventAttributes) upserts++;
  });
  arm.eventsPerTurn.push(...gaps(modelScheduled));
  arm.upserts.push(upserts);
}

async function measure(
  server: (typeof SERVERS)[number],
  models: ModelServer,
  bundles: { keel: Awaited<ReturnType<typeof bundleWorkflowCode>>; floor: Awaited<ReturnType<typeof bundleWorkflowCode>> },
): Promise<{ keel: ArmResult; floor: ArmResult }> {
  const dev = startDevServer(server);
  const connection = await NativeConnection.connect({ address: dev.address });
  const clientConnection = await Connection.connect({ address: dev.address });
  const client = new Client({ connection: clientConnection, namespace: 'default' });
  const floorStarts = new Map<string, number[]>();
  const floorActivities: FloorActivities = {
    async model() {
      const at = Date.now();
      const id = Context.current().info.workflowExecution?.workflowId ?? '';
      const list = floorStarts.get(id) ?? [];
      list.push(at);
      floorStarts.set(id, list);
      return { turn: list.length };
    },
    async tool() {
      return '';
    },
  };

  const keelWorker = await createWorker({
    agents: [agent],
    connection,
    namespace: 'default',
    taskQueue: 'bench-keel',
    providers: { openai: { apiKey: 'bench', baseURL: models.openaiBaseURL } },
    workflowBundle: bundles.keel,
  });
  const floorWorker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue: 'bench-floor',
    workflowBundle: bundles.floor,
    activities: floorActivities,
  });
  const running = Promise.all([keelWorker.worker.run(), floorWorker.run()]);
  const agents = new AgentClient({ client, taskQueue: 'bench-keel' });
  const result = { keel: newArm(), floor: newArm() };

  try {
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const measured = i >= WARMUP;
      // keel
      const before = models.requests(MODEL).length;
      const run = await agents.start(agent, 'Benchmark.', { workflowId: `keel-${i}-${randomUUID().slice(0, 6)}` });
      const outcome = await run.result();
      const requests = models.requests(MODEL).slice(before);
      if (outcome.turns !== TURNS + 1 || requests.length !== TURNS + 1) {
        throw new Error(`keel run ${run.workflowId}: ${outcome.turns} turns and ${requests.length} model requests, expected ${TURNS + 1}`);
      }
      if (measured) {
        result.keel.gaps.push(...gaps(requests.map((r) => r.receivedAt)));
        readHistory(await run.workflow.fetchHistory(), 'modelTurn', result.keel);
      }
      // floor
      const workflowId = `floor-${i}-${randomUUID().slice(0, 6)}`;
      const input: FloorInput = { turns: TURNS, k: K };
      await client.workflow.execute('floorRun', { taskQueue: 'bench-floor', workflowId, args: [input] });
      const starts = floorStarts.get(workflowId) ?? [];
      if (starts.length !== TURNS + 1) throw new Error(`floor run ${workflowId}: ${starts.length} model activities`);
      if (measured) {
        result.floor.gaps.push(...gaps(starts));
        readHistory(await client.workflow.getHandle(workflowId).fetchHistory(), 'model', result.floor);
      }
    }
  } finally {
    keelWorker.shutdown();
    floorWorker.shutdown();
    await running.catch((err: unknown) => console.error(err));
    await clientConnection.close();
    await connection.close();
    dev.stop();
  }
  return result;
}

function loadavg(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return '?';
  }
}

function spread(values: number[]): string {
  return `${fmt(quantile(values, 0.5), 1)} (${Math.min(...values)}-${Math.max(...values)})`;
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  console.log(
    `Turn overhead: keel's agent loop vs. a floor workflow with the same activities\n` +
      `  T=${TURNS} turns per run, k=${K} parallel read-only tool calls per turn, then an answer; model latency 0, tool bodies empty.\n` +
      `  per-turn time = gap between consecutive model calls of one run, in ms (1 ms clock resolution):\n` +
      `    keel  = arrival of consecutive HTTP requests at the scripted model server\n` +
      `            (model reply -> activity completion -> workflow task -> ${K} tool activities -> workflow task -> next model activity -> HTTP)\n` +
      `    floor = consecutive starts of the "model" activity of bench/floor-workflow.ts\n` +
      `            (1 empty "model" activity, then ${K} empty parallel "tool" activities per turn: what any workflow pays for this pattern)\n` +
      `  ${WARMUP} warm-up runs per arm discarded, then ${RUNS} runs per arm interleaved (keel, floor, keel, ...): ${RUNS * TURNS} turns per arm.\n` +
      `  Dev servers: "default" = temporal-dev.sh as is; "eager activities" = plus system.enableActivityEagerExecution=true.\n` +
      (LIMIT_FLAGS
        ? `  Both with history.transferProcessorMaxPollRPS raised from 20 to 10000: at 20 transfer-queue reads/s a sequential run is\n` +
          `  paced at ~200 ms/turn (~100 ms with eager activities) by that limiter alone. BENCH_STOCK_LIMITS=1 keeps the stock value.\n`
        : `  Stock transfer-queue read limit (20/s): expect ~200 ms/turn (~100 ms eager) for both arms, set by that limiter.\n`) +
      `  Load average before: ${loadavg()} (other processes on this machine add noise to both arms alike).\n`,
  );

  const models = await startModelServer();
  models.script(MODEL, responder);
  const floorPath = fileURLToPath(new URL('./floor-workflow.ts', import.meta.url));
  const [keelBundle, floorBundle] = await Promise.all([
    bundleWorkflowCode({ ...keelBundleOptions, logger: quietLogger }),
    bundleWorkflowCode({ workflowsPath: floorPath, logger: quietLogger }),
  ]);

  const rows: { server: string; keel: ArmResult; floor: ArmResult }[] = [];
  try {
    for (const server of SERVERS) {
      const started = Date.now();
      const result = await measure(server, models, { keel: keelBundle, floor: floorBundle });
      console.log(
        `  measured on the "${server.label}" dev server (port ${server.port}) in ${fmt((Date.now() - started) / 1000)} s; load average ${loadavg()}`,
      );
      rows.push({ server: server.label, ...result });
    }
  } finally {
    await models.close();
    stopAllDevServers();
  }

  console.log('\nPer-turn time, ms');
  console.log(
    table([
      ['dev server', 'arm', 'turns', 'p50', 'p95', 'p99', 'mean'],
      ...rows.flatMap(({ server, keel, floor }) =>
        ([['keel', keel], ['floor', floor]] as const).map(([arm, r]) => [
          server,
          arm,
          r.gaps.length,
          fmt(quantile(r.gaps, 0.5)),
          fmt(quantile(r.gaps, 0.95)),
          fmt(quantile(r.gaps, 0.99)),
          fmt(mean(r.gaps), 2),
        ]),
      ),
    ]),
  );

  console.log('\nkeel / floor (1.00 = no overhead beyond the activities themselves; p50 target <= 1.15)');
  console.log(
    table([
      ['dev server', 'p50 ratio', 'p95 ratio', 'p99 ratio', 'mean ratio', 'p50 extra ms/turn'],
      ...rows.map(({ server, keel, floor }) => {
        const q = (r: ArmResult, p: number) => quantile(r.gaps, p);
        return [
          server,
          fmt(q(keel, 0.5) / q(floor, 0.5), 2),
          fmt(q(keel, 0.95) / q(floor, 0.95), 2),
          fmt(q(keel, 0.99) / q(floor, 0.99), 2),
          fmt(mean(keel.gaps) / mean(floor.gaps), 2),
          fmt(q(keel, 0.5) - q(floor, 0.5)),
        ];
      }),
    ]),
  );

  console.log(
    `\nHistory events per turn (events between consecutive model ActivityTaskScheduled events), median (min-max);\n` +
      `floor = 9 + 3k = ${EXPECTED_EVENTS}: 6 for the model activity and its workflow task, 3 for the tools' workflow task, 3 per tool\n` +
      `(+3 when the tools' completions reach the workflow in two workflow tasks instead of one).`,
  );
  console.log(
    table([
      ['dev server', 'arm', 'events/turn', 'expected', 'upserts/run', 'model sched->start ms p50'],
      ...rows.flatMap(({ server, keel, floor }) =>
        ([['keel', keel], ['floor', floor]] as const).map(([arm, r]) => [
          server,
          arm,
          spread(r.eventsPerTurn),
          EXPECTED_EVENTS,
          arm === 'keel' ? spread(r.upserts) : '-',
          fmt(quantile(r.scheduleToStart, 0.5)),
        ]),
      ),
    ]),
  );
  console.log('upserts/run: UpsertWorkflowSearchAttributes events per keel run (1 expected: the final status; the client sets "running" at start).');
}

main().catch((err: unknown) => {
  console.error(err);
  stopAllDevServers();
  process.exit(1);
});
