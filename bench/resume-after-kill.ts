/**
 * How soon a run goes on after its worker dies: a worker process is killed with SIGKILL during a
 * model call and during a tool call; the figure is the time from the kill to the call's next
 * attempt starting on another worker. Goal: at most the heartbeat timeout (10 s by default) plus
 * 2 s, from a warm worker and from a cold one alike.
 *
 *   npx tsx bench/resume-after-kill.ts
 *   env: BENCH_KILLS (kills of each kind, default 10), BENCH_TEMPORAL_PORT (default 7653)
 *
 * Warm: two worker processes serve one task queue; whichever takes the call is killed, the other
 * (already running, connected, its workflow code bundled) takes the retried attempt, and a fresh
 * process replaces the dead one before the next kill. Cold: one worker process serves the queue;
 * it is killed and a fresh process is started at once, so the retried attempt runs on a worker
 * that is just starting, with nothing of the run in its caches (the figure includes its start,
 * which the table gives too: bundling the workflow code takes seconds). The workers keep Temporal's
 * default sticky queue timeout (10 s), as a user's do: the run's workflow was last on the worker
 * that died, so the server first sends its tasks and queries to that worker's sticky queue.
 * A model attempt starts when its HTTP request reaches the scripted model server (each worker's
 * requests carry its pid); a tool attempt when the tool prints its start line. For a model call
 * the table also says in how many runs the first attempt after the kill succeeded (attempt 2).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { AgentClient } from '../src/client/agent-client.js';
import { startModelServer, type RecordedRequest } from '../test/support/model-server.js';
import { startDevServer, stopAllDevServers } from './support/dev-server.js';
import { fmt, quantile, table } from './support/stats.js';
import { Client, Connection } from '@temporalio/client';

const KILLS = Number(process.env.BENCH_KILLS ?? 10);
const PORT = Number(process.env.BENCH_TEMPORAL_PORT ?? 7653);
const HEARTBEAT_TIMEOUT_S = 10;
const root = fileURLToPath(new URL('..', import.meta.url));

interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  lines: { at: number; text: string }[];
}

type Phase = 'model' | 'tool';
type Mode = 'warm' | 'cold';

async function main(): Promise<void> {
  const dev = startDevServer({ port: PORT, uiPort: PORT + 1000 });
  const models = await startModelServer();
  const taskQueue = `kill-${randomUUID().slice(0, 8)}`;
  const connection = await Connection.connect({ address: dev.address });
  const raw = new Client({ connection });
  const client = new AgentClient({ client: raw, taskQueue });

  /** Per run (its prompt): the model answers the first request only after a kill, the second at once. */
  models.script('kill-bench', (request: RecordedRequest) => {
    const messages = request.body.messages as { role: string; content: string }[];
    const prompt = messages.find((m) => m.role === 'user')?.content ?? '';
    const sameRun = models.requests('kill-bench').filter((r) => JSON.stringify(r.body.messages) === JSON.stringify(request.body.messages));
    if (prompt.startsWith('model') && sameRun.length === 1) return { text: 'too late', delayMs: 300_000 };
    if (prompt.startsWith('tool') && !messages.some((m) => m.role === 'tool')) return { toolCalls: [{ name: 'slow_step', arguments: {} }] };
    return { text: 'done' };
  });

  const workers = new Set<WorkerProcess>();
  const everyWorker: WorkerProcess[] = [];
  const spawnWorker = (): Promise<WorkerProcess> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'bench/support/kill-worker.ts'], {
        cwd: root,
        env: { ...process.env, TEMPORAL_ADDRESS: dev.address, KEEL_TASK_QUEUE: taskQueue, MODEL_SERVER_URL: models.url },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const worker: WorkerProcess = { child, pid: child.pid!, lines: [] };
      let buffer = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        const lines = buffer.split('\n');
        buffer = lines.pop()!;
        for (const text of lines) {
          worker.lines.push({ at: Date.now(), text });
          if (text.startsWith('worker ready')) resolve(worker);
        }
      });
      child.once('exit', (code) => {
        workers.delete(worker);
        reject(new Error(`worker exited (${code}) before it was ready`));
      });
      workers.add(worker);
      everyWorker.push(worker);
    });
  const killAll = () => {
    for (const w of workers) w.child.kill('SIGKILL');
  };
  process.on('exit', killAll);

  const waitFor = async <T>(what: string, find: () => T | undefined, timeoutMs = 120_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = find();
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const kill = (pid: number) => {
    const worker = [...workers].find((w) => w.pid === pid);
    if (!worker) throw new Error(`no worker with pid ${pid}`);
    worker.child.kill('SIGKILL');
    workers.delete(worker);
    return Date.now();
  };
  /** Exactly `n` workers running before a run starts. */
  const keep = async (n: number) => {
    while (workers.size > n) kill([...workers][0]!.pid);
    while (workers.size < n) await spawnWorker();
  };

  try {
    const samples: Record<`${Phase} ${Mode}`, number[]> = { 'model warm': [], 'model cold': [], 'tool warm': [], 'tool cold': [] };
    /** Model runs whose first attempt after the kill (attempt 2) was the one that succeeded. */
    const firstRetryOk: Record<Mode, number> = { warm: 0, cold: 0 };
    /** Cold: from the kill to the fresh worker's "ready" (its start, bundling included), per phase. */
    const readyAfter: Record<Phase, number[]> = { model: [], tool: [] };
    for (const mode of ['warm', 'cold'] as const) {
      for (const phase of ['model', 'tool'] as const) {
        for (let i = 0; i < KILLS; i++) {
          await keep(mode === 'warm' ? 2 : 1);
          const prompt = `${phase} ${mode} ${i}`;
          const run = await client.start('kill-bench', prompt);
          let killedAt: number;
          let retried: Promise<WorkerProcess> | undefined;
          if (phase === 'model') {
            const requests = () => models.requests('kill-bench').filter((r) => r.body.messages.some((m: { content: string }) => m.content === prompt));
            const first = await waitFor('the first model request', () => requests()[0]);
            killedAt = kill(Number(String(first.headers.authorization).replace(/^Bearer pid-/, '')));
            if (mode === 'cold') retried = spawnWorker();
            const next = await waitFor('the retried model request', () => requests()[1]);
            samples[`${phase} ${mode}`].push(next.receivedAt - killedAt);
          } else {
            const starts = () => everyWorker.flatMap((w) => w.lines.filter((l) => l.text.includes(` ${run.workflowId} `)));
            const first = await waitFor('the first tool attempt', () => starts()[0]);
            killedAt = kill(Number(first.text.split(' ')[1]));
            if (mode === 'cold') retried = spawnWorker();
            const next = await waitFor('the retried tool attempt', () => starts().find((l) => l.text.endsWith(' 2')));
            samples[`${phase} ${mode}`].push(next.at - killedAt);
          }
          if (retried) readyAfter[phase].push(((await retried).lines.find((l) => l.text.startsWith('worker ready'))?.at ?? Number.NaN) - killedAt);
          const result = await run.result();
          if (result.output !== 'done') throw new Error(`run ${run.workflowId} ended with ${JSON.stringify(result.output)}`);
          if (phase === 'model' && (await modelAttempts(run.workflowId)).join() === '2') firstRetryOk[mode]++;
          process.stdout.write(
            `${phase} kill ${i + 1}/${KILLS} (${mode} worker): next attempt ${fmt(samples[`${phase} ${mode}`].at(-1)! / 1000)} s after the kill\n`,
          );
        }
      }
    }

    const goal = HEARTBEAT_TIMEOUT_S + 2;
    console.log(`\nTime from SIGKILL of the worker to the call's next attempt starting on another worker, seconds`);
    console.log(`(heartbeat timeout ${HEARTBEAT_TIMEOUT_S} s; goal: at most ${goal} s)\n`);
    console.log(
      table([
        ['killed during', 'next attempt on', 'kills', 'median s', 'p95 s', 'max s', 'goal met', 'first retry answered', 'worker ready, median s'],
        ...(['model', 'tool'] as const).flatMap((phase) =>
          (['warm', 'cold'] as const).map((mode) => {
            const s = samples[`${phase} ${mode}`];
            return [
              phase === 'model' ? 'a model call' : 'a tool call',
              mode === 'warm' ? 'a running worker' : 'a fresh worker',
              s.length,
              fmt(quantile(s, 0.5) / 1000),
              fmt(quantile(s, 0.95) / 1000),
              fmt(Math.max(...s) / 1000),
              quantile(s, 0.95) / 1000 <= goal ? 'yes' : 'NO',
              phase === 'model' ? `${firstRetryOk[mode]}/${s.length}` : '',
              mode === 'cold' ? fmt(quantile(readyAfter[phase], 0.5) / 1000) : '',
            ];
          }),
        ),
      ]),
    );
  } finally {
    killAll();
    await client.close().catch(() => undefined);
    await connection.close().catch(() => undefined);
    await models.close();
    stopAllDevServers();
  }

  /** The attempts of the model activity that history records as started (the one that completed). */
  async function modelAttempts(workflowId: string): Promise<number[]> {
    const history = await raw.workflow.getHandle(workflowId).fetchHistory();
    return (history.events ?? []).flatMap((e) => {
      const started = e.activityTaskStartedEventAttributes;
      if (!started) return [];
      const scheduled = history.events?.find((s) => Number(s.eventId) === Number(started.scheduledEventId));
      return scheduled?.activityTaskScheduledEventAttributes?.activityType?.name === 'modelTurn' ? [started.attempt ?? 0] : [];
    });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  stopAllDevServers();
  process.exit(1);
});
