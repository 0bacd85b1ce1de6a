import { TestWorkflowEnvironment } from '@temporalio/testing';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../src/client/agent-client.js';
import { activityEvents, historyOf } from './support/history.js';
import { TEMPORAL_ADDRESS, providersFor, startKeel, workflowBundle } from './support/keel.js';
import { MODEL_CRASH_MODEL, modelCrashAgent } from './support/model-crash-agent.js';
import { startModelServer, type ModelServer } from './support/model-server.js';
import { spawnWorker } from './support/spawn-worker.js';

let server: ModelServer;
const cleanup: (() => unknown)[] = [];

beforeAll(async () => {
  server = await startModelServer();
  // Bundled before the kill, so the worker that takes over is not slowed by it.
  await workflowBundle();
});
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn();
  await server?.close();
});

describe('a worker killed during a model call', () => {
  it('is noticed within the heartbeat timeout, and the call retried on another worker', async () => {
    // The first request hangs (the provider is thinking); the retry answers.
    server.script(MODEL_CRASH_MODEL, [{ fault: 'hang' }, { text: 'survived' }]);
    const taskQueue = `model-crash-${randomUUID().slice(0, 8)}`;
    const env = await TestWorkflowEnvironment.createFromExistingServer({ address: TEMPORAL_ADDRESS });
    cleanup.push(() => env.teardown());
    const client = new AgentClient({ client: env.client, taskQueue });

    const doomed = spawnWorker(taskQueue, server.url, cleanup);
    await doomed.waitFor(/worker ready/);
    const run = await client.start('model-crash-test', 'Think hard.');
    await expect.poll(() => server.requests(MODEL_CRASH_MODEL).length, { timeout: 30_000 }).toBe(1);

    // Another worker is there to take over (as in production), then the first one dies.
    const rescuer = await startKeel({ agents: [modelCrashAgent], providers: providersFor(server), taskQueue });
    cleanup.push(() => rescuer.stop());
    doomed.child.kill('SIGKILL');

    expect(await rescuer.client.getHandle(run.workflowId).result()).toMatchObject({
      status: 'completed',
      output: 'survived',
      turns: 1,
    });
    expect(server.requests(MODEL_CRASH_MODEL)).toHaveLength(2);
    // The point of this test: the lost attempt was noticed by its heartbeat timeout (of
    // MODEL_CRASH_HEARTBEAT_TIMEOUT_MS), not at its start-to-close timeout (125 s by default),
    // which is what a model call without heartbeats waits for; the history says which it was.
    const modelTurns = activityEvents(await historyOf(rescuer.client.getHandle(run.workflowId))).filter(
      (a) => a.type === 'modelTurn',
    );
    expect(modelTurns.map((a) => a.retriedAfter)).toEqual(['HEARTBEAT']);
    expect(modelTurns.map((a) => a.attempt)).toEqual([2]);
  });

  it("reads the conversation on the first attempt after the kill, though the server's sticky queue still names the dead worker", async () => {
    // With Temporal's default sticky queue timeout (10 s), a query of the run sent soon after the
    // kill goes to the dead worker's sticky queue, and the server answers it after 9 s with "no
    // poller seen for task queue recently" instead of trying another worker: the model activity
    // must not need that query.
    server.script(MODEL_CRASH_MODEL, [{ fault: 'hang' }, { text: 'survived' }]);
    const before = server.requests(MODEL_CRASH_MODEL).length;
    const taskQueue = `model-crash-${randomUUID().slice(0, 8)}`;
    const env = await TestWorkflowEnvironment.createFromExistingServer({ address: TEMPORAL_ADDRESS });
    cleanup.push(() => env.teardown());
    const client = new AgentClient({ client: env.client, taskQueue });

    const doomed = spawnWorker(taskQueue, server.url, cleanup, { KEEL_STICKY_TIMEOUT: 'default' });
    await doomed.waitFor(/worker ready/);
    const run = await client.start('model-crash-test', 'Think hard.');
    await expect.poll(() => server.requests(MODEL_CRASH_MODEL).length, { timeout: 30_000 }).toBe(before + 1);

    // The worker that takes over never ran the run: its cache of the conversation is empty.
    const rescuer = await startKeel({ agents: [modelCrashAgent], providers: providersFor(server), taskQueue });
    cleanup.push(() => rescuer.stop());
    doomed.child.kill('SIGKILL');

    expect(await rescuer.client.getHandle(run.workflowId).result()).toMatchObject({ status: 'completed', output: 'survived' });
    // The first attempt after the kill (attempt 2) answered: it sent the model its request.
    const modelTurns = activityEvents(await historyOf(rescuer.client.getHandle(run.workflowId))).filter((a) => a.type === 'modelTurn');
    expect(modelTurns.map((a) => a.attempt)).toEqual([2]);
    expect(server.requests(MODEL_CRASH_MODEL).length).toBe(before + 2);
    // Two worker starts, a kill and the heartbeat timeout on a loaded machine: more than the default.
  }, 120_000);
});
