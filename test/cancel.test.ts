/**
 * A cancel reaches what runs: the tool's abort signal fires within seconds, the activity's
 * cancellation is in history, and the run reports `cancelled` only after its activities stopped.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RunFailedError, type RunHandle } from '../src/client/agent-client.js';
import { defineAgent, defineTool } from '../src/core/define.js';
import { eventTypes, historyOf } from './support/history.js';
import { useKeel } from './support/keel.js';
import { until } from './support/until.js';

/** What the tools did, as they saw it. */
const seen: Record<string, { started?: number; aborted?: number; effect?: boolean; ended?: number }> = {};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A 20 s job that stops when its signal aborts, and does its effect only at its end. */
const longJob = defineTool({
  name: 'long_job',
  description: 'A long job.',
  input: z.object({ key: z.string() }),
  heartbeatTimeout: '2s',
  execute: async ({ key }, { signal }) => {
    const record = (seen[key] = { started: Date.now() });
    for (let i = 0; i < 200 && !signal.aborted; i++) await sleep(100);
    if (signal.aborted) {
      Object.assign(record, { aborted: Date.now(), ended: Date.now() });
      throw new Error('stopped');
    }
    Object.assign(record, { effect: true, ended: Date.now() });
    return 'done';
  },
});

/** A job that ignores its signal: the run waits the grace period, then reports cancelled. */
const stubbornJob = defineTool({
  name: 'stubborn_job',
  description: 'A job that does not stop.',
  input: z.object({ key: z.string() }),
  heartbeatTimeout: '2s',
  execute: async ({ key }) => {
    const record = (seen[key] = { started: Date.now() });
    await sleep(30_000);
    Object.assign(record, { effect: true, ended: Date.now() });
    return 'done';
  },
});

const agents = [
  defineAgent({ name: 'worker-bee', instructions: 'Work.', model: 'openai:cancel-tool', tools: [longJob, stubbornJob] }),
  defineAgent({
    name: 'thinker',
    instructions: 'Think.',
    model: 'openai:cancel-model',
    modelSettings: { heartbeatTimeoutMs: 2_000 },
  }),
];

const t = useKeel(agents);

async function waitFor(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  await until(check, Boolean, { timeoutMs, intervalMs: 50 });
}

async function expectCancelled(run: RunHandle): Promise<string[]> {
  const failure = await run.result().catch((e: unknown) => e);
  expect(failure).toBeInstanceOf(RunFailedError);
  expect((failure as Error).message).toMatch(/cancel/);
  expect(await run.describe()).toMatchObject({ status: 'cancelled' });
  expect((await run.events()).at(-1)).toMatchObject({ type: 'run.finished', status: 'cancelled' });
  const types = eventTypes(await historyOf(run));
  // The activity's cancellation was asked for and acknowledged, before the run ended cancelled.
  expect(types).toContain('ACTIVITY_TASK_CANCEL_REQUESTED');
  expect(types.indexOf('ACTIVITY_TASK_CANCELED')).toBeGreaterThan(-1);
  expect(types.indexOf('ACTIVITY_TASK_CANCELED')).toBeLessThan(types.indexOf('WORKFLOW_EXECUTION_CANCELED'));
  return types;
}

describe('cancelling a run', () => {
  it('during a tool: the tool sees its signal abort, its effect never happens', async () => {
    t.server.script('cancel-tool', [{ toolCalls: [{ name: 'long_job', arguments: { key: 'cooperative' } }] }, { text: 'never' }]);
    const run = await t.keel.client.start('worker-bee', 'Work.');
    await waitFor(() => seen.cooperative?.started !== undefined);
    await run.cancel();
    await expectCancelled(run);
    const record = seen.cooperative!;
    expect(record.aborted).toBeDefined();
    expect(record.effect).toBeUndefined();
    expect(t.server.requests('cancel-tool')).toHaveLength(1);
  });

  it('during a tool that ignores its signal: the run waits for the grace period, then reports cancelled', async () => {
    t.server.script('cancel-tool', [{ toolCalls: [{ name: 'stubborn_job', arguments: { key: 'stubborn' } }] }, { text: 'never' }]);
    const run = await t.keel.client.start('worker-bee', 'Work.');
    await waitFor(() => seen.stubborn?.started !== undefined);
    await run.cancel();
    await expectCancelled(run);
    // The run ended before the tool did: it was not waited for past its grace period.
    expect(seen.stubborn!.effect).toBeUndefined();
  });

  it('during a model call: the HTTP request is aborted and the activity cancelled', async () => {
    t.server.script('cancel-model', [{ fault: 'hang' }]);
    const run = await t.keel.client.start('thinker', 'Think hard.');
    await waitFor(() => t.server.requests('cancel-model').length > 0);
    await run.cancel();
    const types = await expectCancelled(run);
    expect(types).not.toContain('ACTIVITY_TASK_TIMED_OUT');
  });
});
