/**
 * What a message costs in a long session, against a plain run.
 *
 *   npx tsx bench/session-growth.ts          (env: BENCH_SESSION_MESSAGES, default 1000)
 *
 * One session of M=1,000 messages against the scripted model server, each answered in one turn
 * (a ~60-character message, a ~60-character answer). Per message: the client's `send` round trip
 * (ms), and the history bytes it added: the protobuf-encoded events from its send Update's
 * acceptance to the next one's, across every execution of the chain (the session continues as new
 * at 10,000 events; the message whose span holds a continue-as-new carries the model's view).
 * Figures at message 10, 100 and 1,000 are the median over the (up to) 20 messages ending there. Baseline:
 * plain runs (`agentRun`) of one message each, timed and measured the same way. Goal: message
 * 1,000 costs at most 1.1x message 10 in both.
 */
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime, bundleWorkflowCode } from '@temporalio/worker';
import { AgentClient } from '../src/client/agent-client.js';
import { defineAgent } from '../src/core/define.js';
import { createWorker, keelBundleOptions } from '../src/worker.js';
import { historyBytes } from '../test/support/history.js';
import { startModelServer, type Responder } from '../test/support/model-server.js';
import { quietLogger } from '../test/support/quiet-logger.js';
import { LIMIT_FLAGS, startDevServer, stopAllDevServers } from './support/dev-server.js';
import { fmt, mean, quantile, table } from './support/stats.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const MESSAGES = Number(process.env.BENCH_SESSION_MESSAGES ?? 1000);
const AT = [10, 100, 1000].filter((n) => n <= MESSAGES);
/** Figures at message N are the median of the messages N-WINDOW+1..N (from message 1 for N below it): one slow workflow task on a shared machine does not move them. */
const WINDOW = 20;
/** The model's view (tokens): by default a session's, 50,000; the model's input grows with the conversation up to it. */
const CONTEXT_TOKENS = Number(process.env.BENCH_SESSION_CONTEXT_TOKENS ?? 50_000);
const BASELINE_RUNS = 30;
const MODEL = 'bench-session';
const PORT = Number(process.env.BENCH_SESSION_PORT ?? 7657);

const agent = defineAgent({ name: 'bench-session', instructions: 'Answer briefly.', model: `openai:${MODEL}` });

const responder: Responder = (request) => {
  const messages = (request.body?.messages ?? []) as { role: string; content: string }[];
  const last = messages.at(-1)?.content ?? '';
  return { text: `Noted: ${String(last).slice(0, 40)} (answer text, about sixty chars).`, usage: { inputTokens: 10, outputTokens: 5 } };
};

const message = (i: number) => `Message ${i}: please note this line of about sixty characters.`;

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  console.log(
    `Session growth: one session of ${MESSAGES} messages (one turn each), against ${BASELINE_RUNS} plain runs of one message.\n` +
      `  ms = the client's send round trip; bytes = protobuf-encoded history events of the message, from its send Update's\n` +
      `  acceptance to the next one's, across the session's executions; the model's view: ${CONTEXT_TOKENS} tokens.${LIMIT_FLAGS ? ` Dev server flags: ${LIMIT_FLAGS}.` : ''}\n`,
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
      taskQueue: 'bench-session',
      providers: { openai: { apiKey: 'bench', baseURL: models.openaiBaseURL } },
      workflowBundle: bundle,
    });
    const running = worker.run();
    try {
      const agents = new AgentClient({ client, taskQueue: 'bench-session' });
      // Plain runs first: the same worker, warmed up by them for the session too.
      const plainMs: number[] = [];
      const plainBytes: number[] = [];
      for (let i = 1; i <= BASELINE_RUNS; i++) {
        const started = performance.now();
        const run = await agents.start(agent, message(i));
        await run.result();
        plainMs.push(performance.now() - started);
        plainBytes.push(historyBytes(await run.workflow.fetchHistory()));
      }

      const session = await agents.startSession(agent, { options: { contextTokens: CONTEXT_TOKENS } });
      const ms: number[] = [];
      for (let i = 1; i <= MESSAGES; i++) {
        const started = performance.now();
        const answer = await session.send(message(i));
        ms.push(performance.now() - started);
        if (answer.status !== 'completed') throw new Error(`message ${i}: ${answer.status} ${answer.error ?? ''}`);
      }
      const status = await session.status();
      if (status.messages !== 2 * MESSAGES) throw new Error(`the session holds ${status.messages} messages, expected ${2 * MESSAGES}`);
      const { bytes, executions } = await bytesPerMessage(client, session.workflowId);
      report({ ms, bytes, plainMs, plainBytes, executions });
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

/** The history bytes of each message, over the chain of executions, oldest first. */
async function bytesPerMessage(client: Client, workflowId: string): Promise<{ bytes: number[]; executions: number }> {
  const chain: HistoryEvent[][] = [];
  let runId: string | undefined;
  for (;;) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    chain.unshift(history.events ?? []);
    const previous = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    if (!previous) break;
    runId = previous;
  }
  const events = chain.flat();
  const starts: number[] = [];
  events.forEach((e, i) => {
    if (e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'send') starts.push(i);
  });
  if (starts.length !== MESSAGES) throw new Error(`found ${starts.length} send Updates, expected ${MESSAGES}`);
  const bytes = starts.map((at, n) => historyBytes({ events: events.slice(at, starts[n + 1] ?? events.length) }));
  return { bytes, executions: chain.length };
}

function report(r: { ms: number[]; bytes: number[]; plainMs: number[]; plainBytes: number[]; executions: number }): void {
  const windowMean = (values: number[], n: number) => quantile(values.slice(Math.max(0, n - WINDOW), n), 0.5);
  const plainMs = quantile(r.plainMs.slice(5), 0.5);
  const plainBytes = quantile(r.plainBytes, 0.5);
  const rows: (string | number)[][] = [['message N', `ms (median of ${WINDOW} to N)`, 'ms / plain run', 'history bytes (median)', 'bytes / plain run']];
  for (const n of AT) {
    rows.push([n, fmt(windowMean(r.ms, n)), fmt(windowMean(r.ms, n) / plainMs, 2), fmt(windowMean(r.bytes, n), 0), fmt(windowMean(r.bytes, n) / plainBytes, 2)]);
  }
  rows.push(['plain run (p50)', fmt(plainMs), '1.00', plainBytes, '1.00']);
  console.log(table(rows));
  const first = AT[0]!;
  const last = AT.at(-1)!;
  const msRatio = windowMean(r.ms, last) / windowMean(r.ms, first);
  const bytesRatio = windowMean(r.bytes, last) / windowMean(r.bytes, first);
  const maxBytes = Math.max(...r.bytes);
  console.log(
    `  ${r.executions} executions (continue-as-new at 10,000 events or Temporal's suggestion); model view ${CONTEXT_TOKENS} tokens; mean ms at message ${AT.at(-1)}: ${fmt(mean(r.ms.slice(-WINDOW)))}; the biggest message span: ${maxBytes} bytes (message ${r.bytes.indexOf(maxBytes) + 1}: a continue-as-new carrying the model's view).\n` +
      `  p50 ms over all messages: ${fmt(quantile(r.ms, 0.5))}; p95: ${fmt(quantile(r.ms, 0.95))}.\n`,
  );
  console.log(`Growth: message ${last} / message ${first}; goal <= 1.1 in both`);
  console.log(
    table([
      ['figure', `message ${last} / message ${first}`, 'goal met'],
      ['ms per message', fmt(msRatio, 2), msRatio <= 1.1 ? 'yes' : 'no'],
      ['history bytes per message', fmt(bytesRatio, 2), bytesRatio <= 1.1 ? 'yes' : 'no'],
    ]),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  stopAllDevServers();
  process.exit(1);
});
