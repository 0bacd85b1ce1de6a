/**
 * Live streaming: how long a token takes from the model to a client, and what streaming costs in
 * history.
 *
 *   npx tsx bench/stream-latency.ts     (env: BENCH_STREAM_TOKENS, default 1000; BENCH_STREAM_CHUNK_MS, default 10)
 *
 * One answer of N tokens (words `t0 ... t<N-1>`), streamed by the scripted model server one token
 * every CHUNK_MS ms (100 tokens/s by default, a fast real model's pace), in runs of one agent:
 * without streaming (the baseline), and with streaming on read by 0, 1 and 10 subscribers, each
 * its own `RunHandle.stream()` started before the model answers. Latency of a token: the model
 * server's write of its SSE event to a subscriber's receipt of the text delta holding it (one
 * process, one clock). History: the run's whole history, events and protobuf bytes, per 1,000
 * tokens, against the baseline in the same run of the benchmark.
 */
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, bundleWorkflowCode } from '@temporalio/worker';
import { AgentClient } from '../src/client/agent-client.js';
import type { RunHandle } from '../src/client/run-handle.js';
import { defineAgent } from '../src/core/define.js';
import { DEFAULT_STREAM_BATCH_MS } from '../src/core/stream.js';
import { createWorker, keelBundleOptions } from '../src/worker.js';
import { historyBytes } from '../test/support/history.js';
import { startModelServer, type ModelServer } from '../test/support/model-server.js';
import { quietLogger } from '../test/support/quiet-logger.js';
import { LIMIT_FLAGS, startDevServer, stopAllDevServers } from './support/dev-server.js';
import { fmt, quantile, table } from './support/stats.js';

const TOKENS = Number(process.env.BENCH_STREAM_TOKENS ?? 1000);
const CHUNK_MS = Number(process.env.BENCH_STREAM_CHUNK_MS ?? 10);
const MODEL = 'bench-stream';
const PORT = 7632;
const TASK_QUEUE = 'bench-stream';

const agent = defineAgent({ name: 'bench-stream', instructions: 'Talk.', model: `openai:${MODEL}` });
const answer = Array.from({ length: TOKENS }, (_, i) => `t${i}`).join(' ');

const SIGNALED = 'signaled';
const UPDATE_ACCEPTED = 'update accepted';

interface Measured {
  name: string;
  latencies: number[];
  events: number;
  bytes: number;
  byType: Map<string, number>;
}

/** `separate`: each subscriber its own client (as ten processes would be); else one client's readers, which share one subscription. */
async function measure(models: ModelServer, agents: AgentClient, name: string, stream: boolean, subscribers: number, separate = false): Promise<Measured> {
  models.script(MODEL, [{ text: answer, chunkDelayMs: CHUNK_MS }]);
  const before = models.requests(MODEL).length;
  const run: RunHandle = await agents.start(agent, 'Talk.', stream ? { stream: true } : {});
  const received: { at: number; text: string }[][] = Array.from({ length: subscribers }, () => []);
  const reading = received.map(async (got) => {
    const handle = separate ? new AgentClient({ client: new Client({ connection: agents.client.connection }), taskQueue: TASK_QUEUE }).getHandle(run.workflowId) : run;
    for await (const chunk of handle.stream()) {
      if (chunk.type === 'text.delta') got.push({ at: Date.now(), text: chunk.text });
    }
  });
  const result = await run.result();
  await Promise.all(reading);
  if (result.output !== answer) throw new Error(`${name}: the answer differs from the script`);
  const request = models.requests(MODEL)[before];
  if (!request) throw new Error(`${name}: the model got no request`);

  // When each token's SSE event was written.
  const sentAt = new Map<string, number>();
  for (const { at, event } of request.sent ?? []) for (const word of event.match(/t\d+/g) ?? []) if (!sentAt.has(word)) sentAt.set(word, at);
  const latencies: number[] = [];
  for (const got of received) {
    const seen = got.map((g) => g.text).join('');
    if (seen !== answer) throw new Error(`${name}: a subscriber saw other text than the answer`);
    for (const { at, text } of got) for (const word of text.match(/t\d+/g) ?? []) latencies.push(at - sentAt.get(word)!);
  }
  const history = await run.workflow.fetchHistory();
  const events = history.events ?? [];
  const byType = new Map<string, number>();
  for (const e of events) {
    const type = e.workflowExecutionSignaledEventAttributes ? SIGNALED : e.workflowExecutionUpdateAcceptedEventAttributes ? UPDATE_ACCEPTED : String(e.eventType ?? '');
    byType.set(type, (byType.get(type) ?? 0) + 1);
  }
  return { name, latencies, events: events.length, bytes: historyBytes(history), byType };
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  console.log(
    `Stream latency: one answer of ${TOKENS} tokens, one every ${CHUNK_MS} ms from the scripted model server; ` +
      `the model activity batches deltas every ${DEFAULT_STREAM_BATCH_MS} ms.\n` +
      `  latency = the server's write of a token to a subscriber's receipt of it; history = the whole run's.` +
      `${LIMIT_FLAGS ? ` Dev server flags: ${LIMIT_FLAGS}.` : ''}\n`,
  );
  const models = await startModelServer();
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
      taskQueue: TASK_QUEUE,
      providers: { openai: { apiKey: 'bench', baseURL: models.openaiBaseURL } },
      workflowBundle: bundle,
    });
    const running = worker.run();
    try {
      const agents = new AgentClient({ client, taskQueue: TASK_QUEUE });
      // A warm-up run, so the first measured one does not pay for the worker's start.
      await measure(models, agents, 'warm-up', true, 1);
      const results = [
        await measure(models, agents, 'not streamed (baseline)', false, 0),
        await measure(models, agents, 'streamed, no subscriber', true, 0),
        await measure(models, agents, 'streamed, 1 subscriber', true, 1),
        await measure(models, agents, 'streamed, 10 readers of one client', true, 10),
        await measure(models, agents, 'streamed, 10 separate clients', true, 10, true),
      ];
      report(results);
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

function report(results: Measured[]): void {
  const base = results[0]!;
  const per1000 = (n: number) => (n * 1000) / TOKENS;
  const count = (m: Measured, type: string) => m.byType.get(type) ?? 0;
  console.log(
    table([
      ['run', 'p50 ms', 'p95 ms', 'max ms', 'events', 'bytes', 'events / 1k tokens over baseline', 'bytes / 1k tokens over baseline', 'signals', 'updates'],
      ...results.map((m) => [
        m.name,
        fmt(quantile(m.latencies, 0.5), 0),
        fmt(quantile(m.latencies, 0.95), 0),
        fmt(m.latencies.length ? Math.max(...m.latencies) : Number.NaN, 0),
        m.events,
        m.bytes,
        fmt(per1000(m.events - base.events), 0),
        fmt(per1000(m.bytes - base.bytes), 0),
        count(m, SIGNALED),
        count(m, UPDATE_ACCEPTED),
      ]),
    ]),
  );
  const answerBytes = Buffer.byteLength(answer);
  console.log(
    `\n  The answer is ${answerBytes} bytes of text. Each batch is one signal (the deltas, once) and one workflow task;\n` +
      `  each subscriber's poll is one Update (accepted, then completed with the batch: the text once more per subscriber);\n` +
      `  the readers of one client share one subscription.\n` +
      `  Goals on the dev server: p50 <= 150 ms and p95 <= 400 ms with ten subscribers; <= 20 history events per 1,000 tokens.`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  stopAllDevServers();
  process.exit(1);
});
