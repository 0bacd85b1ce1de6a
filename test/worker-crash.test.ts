import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crashAgent, scriptCrashModel } from './support/crash-agent.js';
import { activityEvents, historyOf } from './support/history.js';
import { providersFor, startKeel, type Keel } from './support/keel.js';
import { startModelServer, type ModelServer } from './support/model-server.js';
import { spawnWorker } from './support/spawn-worker.js';

let server: ModelServer;
const cleanup: (() => Promise<unknown> | unknown)[] = [];

beforeAll(async () => {
  server = await startModelServer();
  scriptCrashModel(server);
});
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn();
  await server?.close();
});

describe('a worker killed while a tool runs', () => {
  it('is replaced by a new worker that finishes the run, with the same transcript', async () => {
    // The run as it goes without a crash.
    const reference: Keel = await startKeel({ agents: [crashAgent], providers: providersFor(server) });
    cleanup.push(() => reference.stop());
    const calm = await reference.client.start('crash-test', 'Go.');
    expect((await calm.result()).output).toBe('done after 2 steps');
    const expected = await calm.transcript();

    // The same run on a worker process that is killed with SIGKILL during the second tool call.
    const taskQueue = `crash-${randomUUID().slice(0, 8)}`;
    const doomed = spawnWorker(taskQueue, server.url, cleanup);
    await doomed.waitFor(/worker ready/);
    const run = await reference.client.start('crash-test', 'Go.', { taskQueue });
    await doomed.waitFor(/tool running step-2/);
    doomed.child.kill('SIGKILL');

    const rescuer = await startKeel({ agents: [crashAgent], providers: providersFor(server), taskQueue });
    cleanup.push(() => rescuer.stop());
    const handle = rescuer.client.getHandle(run.workflowId);
    expect(await handle.result()).toMatchObject({ status: 'completed', output: 'done after 2 steps', turns: 3 });
    expect(await handle.transcript()).toEqual(expected);

    // The killed attempt of the second tool call was retried.
    const tools = activityEvents(await historyOf(handle)).filter((a) => a.type === 'toolCall');
    expect(tools.map((t) => t.attempt)).toEqual([1, 2]);
  });

  it("right after a tool's effect, before its result is reported: the call runs again (at least once)", async () => {
    const effects = join(mkdtempSync(join(tmpdir(), 'keel-effects-')), 'effects.txt');
    writeFileSync(effects, '');
    cleanup.push(() => rmSync(dirname(effects), { recursive: true, force: true }));
    const taskQueue = `crash-${randomUUID().slice(0, 8)}`;
    const doomed = spawnWorker(taskQueue, server.url, cleanup, { KEEL_EFFECTS_FILE: effects });
    await doomed.waitFor(/worker ready/);
    const starter = await startKeel({ agents: [crashAgent], providers: providersFor(server), taskQueue: `idle-${taskQueue}` });
    cleanup.push(() => starter.stop());
    const run = await starter.client.start('crash-test', 'Go.', { taskQueue });
    await doomed.waitFor(/tool effect done step-1/);
    doomed.child.kill('SIGKILL');

    process.env.KEEL_EFFECTS_FILE = effects;
    cleanup.push(() => delete process.env.KEEL_EFFECTS_FILE);
    const rescuer = await startKeel({ agents: [crashAgent], providers: providersFor(server), taskQueue });
    cleanup.push(() => rescuer.stop());
    const handle = rescuer.client.getHandle(run.workflowId);
    expect(await handle.result()).toMatchObject({ status: 'completed', output: 'done after 2 steps', turns: 3 });
    // The effect of the interrupted call happened twice: tools run at least once, so a tool
    // whose effect must not repeat has to be idempotent (exactly-once effects are planned).
    const done = readFileSync(effects, 'utf8').trim().split('\n').filter((line) => line.startsWith(run.workflowId));
    expect(done.map((line) => line.split(' ')[1])).toEqual(['step-1', 'step-1', 'step-2']);
  });
});
