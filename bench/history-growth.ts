/**
 * How a run's Temporal history grows with its length.
 *
 *   npx tsx bench/history-growth.ts          (env: BENCH_HISTORY_TURNS, default 100)
 *
 * One run of T=100 turns against the scripted model server: each turn one tool call with a small
 * result, then a final answer (turn 101). The agent's maxTurns and the run's
 * continueAsNewAfterEvents are high enough that it neither stops nor continues as new. When it has
 * finished, its history is fetched and cut just before the model activity of turn N+1
 * (ActivityTaskScheduled of `modelTurn` number N+1): that prefix is the history "after N turns".
 * Sizes are the protobuf-encoded size of those events (what the server stores).
 *
 * keel's model activity takes only {agent, turn, messageCount} (the worker keeps the conversation),
 * so each turn should add about the same number of bytes. For comparison, a naive design whose
 * model activity input carried the whole conversation is computed: to each turn's bytes, add the
 * JSON size of the conversation the model saw on that turn.
 */
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime, bundleWorkflowCode } from '@temporalio/worker';
import { z } from 'zod';
import { AgentClient } from '../src/client/agent-client.js';
import { quietLogger } from '../test/support/quiet-logger.js';
import { defineAgent, defineTool } from '../src/core/define.js';
import { createWorker, keelBundleOptions } from '../src/worker.js';
import { startModelServer, type Responder } from '../test/support/model-server.js';
import { LIMIT_FLAGS, startDevServer, stopAllDevServers } from './support/dev-server.js';
import { historyBytes } from '../test/support/history.js';
import { fmt, table } from './support/stats.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const TURNS = Number(process.env.BENCH_HISTORY_TURNS ?? 100);
const CHECKPOINTS = [10, 50, 100].filter((n) => n <= TURNS);
const MODEL = 'bench-history';
const PORT = 7653;

const lookup = defineTool({
  name: 'lookup',
  description: 'Look up an item.',
  input: z.object({ item: z.number().int() }),
  readOnly: true,
  execute: ({ item }) => ({ item, price: item * 3 + 1, currency: 'EUR' }),
});

const agent = defineAgent({
  name: 'bench-history',
  instructions: 'Look up the items one by one, then give the total.',
  model: `openai:${MODEL}`,
  tools: [lookup],
  maxTurns: TURNS + 10,
});

const responder: Responder = (request) => {
  const messages = (request.body?.messages ?? []) as { role: string }[];
  const turn = messages.filter((m) => m.role === 'assistant').length + 1;
  if (turn > TURNS) return { text: `The total is ${TURNS} items.`, usage: { inputTokens: 10, outputTokens: 5 } };
  return {
    text: `Looking up item ${turn}.`,
    toolCalls: [{ name: 'lookup', arguments: { item: turn } }],
    usage: { inputTokens: 10, outputTokens: 5 },
  };
};



async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  console.log(
    `History growth: one run of ${TURNS} turns (one tool call with a ~50-byte result per turn), then an answer.\n` +
      `  History fetched after the run and cut just before the model activity of turn N+1 ("after N turns").\n` +
      `  bytes = protobuf-encoded size of the history events.${LIMIT_FLAGS ? ` Dev server flags: ${LIMIT_FLAGS}.` : ''}\n`,
  );
  const models = await startModelServer();
  models.script(MODEL, responder);
  const bundle = await bundleWorkflowCode({ ...keelBundleOptions, logger: quietLogger });
  const dev = startDevServer({ port: PORT, uiPort: PORT + 1000 });
  try {
    const connection = await NativeConnection.connect({ address: dev.address });
    const clientConnection = await Connection.connect({ address: dev.address });
    const client = new Client({ connection: clientConnection, namespace: 'default' });
    const worker = await createWorker({
      agents: [agent],
      connection,
      namespace: 'default',
      taskQueue: 'bench-history',
      providers: { openai: { apiKey: 'bench', baseURL: models.openaiBaseURL } },
      workflowBundle: bundle,
    });
    const running = worker.run();
    try {
      const agents = new AgentClient({ client, taskQueue: 'bench-history' });
      const started = Date.now();
      const run = await agents.start(agent, `Price ${TURNS} items.`, {
        options: { continueAsNewAfterEvents: 1_000_000 },
      });
      const result = await run.result();
      if (result.turns !== TURNS + 1) throw new Error(`the run took ${result.turns} turns, expected ${TURNS + 1}`);
      const seconds = (Date.now() - started) / 1000;
      const history = await run.workflow.fetchHistory();
      const transcript = await run.transcript();
      if (history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId) {
        throw new Error('the run continued as new; raise continueAsNewAfterEvents');
      }
      await report(history.events ?? [], transcript, seconds);
    } finally {
      worker.shutdown();
      await running;
      await clientConnection.close();
      await connection.close();
    }
  } finally {
    dev.stop();
    await models.close();
    stopAllDevServers();
  }
}

async function report(events: HistoryEvent[], transcript: unknown[], seconds: number): Promise<void> {
  // Index (in `events`) of the ActivityTaskScheduled event of each model turn, and its input.
  const modelAt: number[] = [];
  const messageCounts: number[] = [];
  events.forEach((event, i) => {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name !== 'modelTurn') return;
    modelAt.push(i);
    const payload = scheduled.input?.payloads?.[0]?.data;
    const input = payload ? (JSON.parse(Buffer.from(payload).toString('utf8')) as { messageCount: number }) : undefined;
    messageCounts.push(input?.messageCount ?? Number.NaN);
  });
  if (modelAt.length !== TURNS + 1) throw new Error(`found ${modelAt.length} model activities, expected ${TURNS + 1}`);

  /** Events of the history after n turns: everything before the model activity of turn n+1. */
  const prefix = (n: number) => events.slice(0, modelAt[n]);
  /** Events of turn t alone (1-based): from its model activity to the next one. */
  const turnEvents = (t: number) => events.slice(modelAt[t - 1], modelAt[t]);
  /** JSON size of the conversation the model saw on turn t: what a naive input would carry. */
  const conversationBytes = (t: number) => Buffer.byteLength(JSON.stringify(transcript.slice(0, messageCounts[t - 1])));

  const fixed = historyBytes({ events: prefix(0) });
  const turnBytes: number[] = [];
  for (let t = 1; t <= TURNS; t++) turnBytes.push(historyBytes({ events: turnEvents(t) }));
  const naiveTurnBytes = turnBytes.map((b, i) => b + conversationBytes(i + 1));
  const sum = (values: number[], n: number) => values.slice(0, n).reduce((a, b) => a + b, 0);

  const rows: (string | number)[][] = [
    ['after N turns', 'events', 'history bytes', 'bytes of turn N', 'avg bytes/turn 1..N', 'naive history bytes', 'naive bytes of turn N'],
  ];
  for (const n of CHECKPOINTS) {
    rows.push([
      n,
      prefix(n).length,
      historyBytes({ events: prefix(n) }),
      turnBytes[n - 1]!,
      fmt((sum(turnBytes, n)) / n, 0),
      fixed + sum(naiveTurnBytes, n),
      naiveTurnBytes[n - 1]!,
    ]);
  }
  rows.push([`whole run (${TURNS + 1} turns, closed)`, events.length, historyBytes({ events }), '-', '-', '-', '-']);
  console.log(table(rows));
  console.log(
    `  fixed part before turn 1 (start, agent resolution, first workflow task): ${modelAt[0]} events, ${fixed} bytes; the run took ${fmt(seconds)} s.\n` +
      `  bytes of turn N = events from turn N's model ActivityTaskScheduled to turn N+1's; avg = (history after N - fixed part) / N.\n` +
      `  naive = the same history if each model activity input also carried the conversation so far (JSON of the first\n` +
      `  messageCount messages: ${conversationBytes(1)} bytes on turn 1, ${conversationBytes(TURNS)} bytes on turn ${TURNS}).\n`,
  );

  const first = CHECKPOINTS[0]!;
  const last = CHECKPOINTS.at(-1)!;
  const ratio = (values: number[]) => values[last - 1]! / values[first - 1]!;
  const avgRatio = (values: number[]) => sum(values, last) / last / (sum(values, first) / first);
  console.log(`Growth: (bytes per turn at turn ${last}) / (bytes per turn at turn ${first}); flat (linear history) means <= 1.1`);
  console.log(
    table([
      ['design', `turn ${last} / turn ${first}`, `avg 1..${last} / avg 1..${first}`, 'history growth'],
      ['keel (conversation kept by the worker)', fmt(ratio(turnBytes), 2), fmt(avgRatio(turnBytes), 2), ratio(turnBytes) <= 1.1 ? 'linear' : 'super-linear'],
      ['naive (conversation in every model input)', fmt(ratio(naiveTurnBytes), 2), fmt(avgRatio(naiveTurnBytes), 2), 'quadratic'],
    ]),
  );
  const eventsPerTurn = new Set(Array.from({ length: TURNS }, (_, i) => modelAt[i + 1]! - modelAt[i]!));
  console.log(`  events per turn: ${[...eventsPerTurn].sort((a, b) => a - b).join(', ')} (floor for one tool call: 9 + 3 = 12)`);
}

main().catch((err: unknown) => {
  console.error(err);
  stopAllDevServers();
  process.exit(1);
});
