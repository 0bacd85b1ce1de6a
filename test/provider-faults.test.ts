import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RunFailedError, type RunHandle } from '../src/client/agent-client.js';
import type { ModelSettings } from '../src/core/agent-spec.js';
import { defineAgent } from '../src/core/define.js';
import { activityEvents, decode, historyOf } from './support/history.js';
import { startKeel, useKeel } from './support/keel.js';
import type { ScriptStep } from './support/model-server.js';

/** One agent per fault, each with its own scripted model. Retries are quick so tests are. */
function agent(name: string, model: string, timeoutMs?: number, settings: ModelSettings = {}) {
  return defineAgent({
    name,
    instructions: 'Answer.',
    model,
    modelSettings: {
      retry: { initialInterval: '100ms', maximumInterval: '500ms' },
      ...(timeoutMs !== undefined && { timeoutMs }),
      ...settings,
    },
  });
}

const agents = [
  agent('overloaded', 'anthropic:fault-529'),
  agent('unavailable', 'openai:fault-503'),
  agent('rate-limited', 'openai:fault-429'),
  agent('bad-request', 'openai:fault-400'),
  agent('bad-key', 'anthropic:fault-401'),
  agent('no-quota', 'openai:fault-quota'),
  agent('hanging', 'openai:fault-hang', 1_000),
  agent('resetting', 'anthropic:fault-reset'),
  agent('garbled', 'openai:fault-malformed'),
  agent('retry-after-openai', 'openai:fault-retry-after', undefined, { maxRetryAfterMs: 2_000 }),
  agent('retry-after-anthropic', 'anthropic:fault-retry-after', undefined, { maxRetryAfterMs: 2_000 }),
  agent('teapot', 'anthropic:fault-418'),
  agent('not-the-api', 'openai:fault-not-api'),
  agent('not-the-api-stream', 'anthropic:fault-not-api-stream', undefined, { stream: true }),
  agent('slow-stream-openai', 'openai:slow-stream', undefined, { stream: true, heartbeatTimeoutMs: 2_000 }),
  agent('slow-stream-anthropic', 'anthropic:slow-stream', undefined, { stream: true, heartbeatTimeoutMs: 2_000 }),
  agent('cancelled', 'anthropic:fault-cancel'),
];

const t = useKeel(agents);

async function modelAttempts(workflowId: string): Promise<number | undefined> {
  const history = await historyOf(t.keel.client.getHandle(workflowId));
  return activityEvents(history).find((a) => a.type === 'modelTurn')?.attempt;
}

/** The model turn the run waits for, as the Temporal UI shows it: its attempt and last failure. */
async function pendingModelTurn(run: RunHandle): Promise<{ attempt: number; lastFailure: string } | undefined> {
  const pending = (await run.workflow.describe()).raw.pendingActivities?.find((a) => a.activityType?.name === 'modelTurn');
  return pending ? { attempt: pending.attempt ?? 0, lastFailure: pending.lastFailure?.message ?? '' } : undefined;
}

describe('a provider outage is waited out', () => {
  it.each([
    { name: 'overloaded', model: 'fault-529', fault: { fault: 'status', status: 529 } },
    { name: 'unavailable', model: 'fault-503', fault: { fault: 'status', status: 503 } },
    { name: 'resetting', model: 'fault-reset', fault: { fault: 'reset' } },
    { name: 'garbled', model: 'fault-malformed', fault: { fault: 'malformed-json' } },
    { name: 'hanging', model: 'fault-hang', fault: { fault: 'hang' } },
  ] as { name: string; model: string; fault: ScriptStep }[])('$name: retried until it answers', async ({ name, model, fault }) => {
    t.server.script(model, [fault, fault, { text: 'back again' }]);
    const run = await t.keel.client.start(name, 'Are you there?');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'back again', turns: 1 });
    expect(t.server.requests(model)).toHaveLength(3);
    // The history shows the retried attempts: the model turn completed on its third attempt.
    expect(await modelAttempts(run.workflowId)).toBe(3);
  });

  it('429 with Retry-After: no new attempt before the time it gives', async () => {
    t.server.script('fault-429', [{ fault: 'status', status: 429, retryAfter: 2 }, { text: 'done' }]);
    const run = await t.keel.client.start('rate-limited', 'Hello?');
    expect((await run.result()).output).toBe('done');
    const [first, second] = t.server.requests('fault-429');
    // The retry policy alone would have tried again after 100 ms.
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(2_000);
  });
});

describe('a request the provider refuses fails the run at once', () => {
  it.each([
    { name: 'bad-request', model: 'fault-400', status: 400, message: /OpenAI.*400/ },
    { name: 'bad-key', model: 'fault-401', status: 401, message: /Anthropic.*401.*ANTHROPIC_API_KEY/ },
    {
      name: 'no-quota',
      model: 'fault-quota',
      status: 429,
      body: { error: { message: 'You exceeded your current quota', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } },
      message: /quota/i,
    },
  ])('$status ($name): one attempt, a clear error', async ({ name, model, status, body, message }) => {
    t.server.script(model, [{ fault: 'status', status, ...(body && { body }) }, { text: 'never asked' }]);
    const run = await t.keel.client.start(name, 'Hello?');
    const failure = (await run.result().catch((e: unknown) => e)) as RunFailedError;
    expect(failure).toBeInstanceOf(RunFailedError);
    expect(failure.type).toBe('KeelProviderRequestError');
    expect(failure.message).toMatch(message);
    expect(t.server.requests(model)).toHaveLength(1);
    expect(await run.describe()).toMatchObject({ status: 'failed' });
    const finished = (await run.events()).at(-1);
    expect(finished).toMatchObject({ type: 'run.finished', status: 'failed' });
  });
});

describe('Retry-After: only a usable one delays the next attempt', () => {
  // Retry-After: 0 once made Temporal give up on the model turn (a zero delay reads as "no retry").
  it.each([
    { what: '0', api: 'openai', fault: { fault: 'status', status: 429, retryAfter: 0 } },
    { what: '0', api: 'anthropic', fault: { fault: 'status', status: 529, retryAfter: 0 } },
    { what: 'negative', api: 'anthropic', fault: { fault: 'status', status: 529, retryAfter: -30 } },
    { what: 'garbage', api: 'openai', fault: { fault: 'status', status: 503, retryAfter: 'soon, maybe' } },
    { what: 'a past HTTP date', api: 'anthropic', fault: { fault: 'status', status: 529, retryAfter: 'Wed, 21 Oct 2015 07:28:00 GMT' } },
    { what: 'retry-after-ms 0', api: 'openai', fault: { fault: 'status', status: 429, headers: { 'retry-after-ms': '0' } } },
  ] as { what: string; api: 'openai' | 'anthropic'; fault: ScriptStep }[])(
    '$what ($api): the retry policy decides, and the run completes',
    async ({ api, fault }) => {
      t.server.script('fault-retry-after', [fault, { text: 'after all' }]);
      const run = await t.keel.client.start(`retry-after-${api}`, 'Hello?');
      expect(await run.result()).toMatchObject({ status: 'completed', output: 'after all' });
      expect(await modelAttempts(run.workflowId)).toBe(2);
    },
  );

  it('retry-after-ms: no new attempt before the time it gives', async () => {
    t.server.script('fault-retry-after', [
      { fault: 'status', status: 429, headers: { 'retry-after-ms': '1500' }, retryAfter: 'garbage' },
      { text: 'done' },
    ]);
    const run = await t.keel.client.start('retry-after-openai', 'Hello?');
    expect((await run.result()).output).toBe('done');
    const [first, second] = t.server.requests('fault-retry-after').slice(-2);
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(1_500);
  });

  it('a huge one is capped (here at 2 s, modelSettings.maxRetryAfterMs), and the failure says so', async () => {
    // The second attempt answers late, so the test can read the first attempt's failure meanwhile.
    t.server.script('fault-retry-after', [{ fault: 'status', status: 529, retryAfter: 999_999_999 }, { text: 'soon enough', delayMs: 3_000 }]);
    const run = await t.keel.client.start('retry-after-anthropic', 'Hello?');
    await expect
      .poll(async () => (await pendingModelTurn(run))?.lastFailure, { timeout: 10_000, interval: 100 })
      .toMatch(/will retry in 2 s: Anthropic asked to wait .* \(Retry-After\), capped at 2 s \(modelSettings.maxRetryAfterMs\)/);
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'soon enough' });
    expect(await modelAttempts(run.workflowId)).toBe(2);
    const [first, second] = t.server.requests('fault-retry-after').slice(-2);
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(2_000);
  });
});

describe('errors keel does not recognize are retried', () => {
  it('an unexpected status (418) is retried until the model answers', async () => {
    t.server.script('fault-418', [{ fault: 'status', status: 418 }, { text: 'brewed' }]);
    const run = await t.keel.client.start('teapot', 'Coffee?');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'brewed' });
    expect(await modelAttempts(run.workflowId)).toBe(2);
  });
});

describe('an answer that is not the API\'s is retried a few times, then fails naming the base URL', () => {
  it.each([
    { name: 'not-the-api', model: 'fault-not-api', baseURL: () => t.server.openaiBaseURL },
    { name: 'not-the-api-stream', model: 'fault-not-api-stream', baseURL: () => t.server.anthropicBaseURL },
  ])('$name', async ({ name, model, baseURL }) => {
    t.server.script(model, [...Array.from({ length: 5 }, () => ({ fault: 'body', body: { hello: 'world' } }) as const), { text: 'too late' }]);
    const run = await t.keel.client.start(name, 'Hello?');
    const failure = (await run.result().catch((e: unknown) => e)) as RunFailedError;
    expect(failure).toBeInstanceOf(RunFailedError);
    expect(failure.type).toBe('KeelMalformedResponse');
    expect(failure.message).toContain(`answered 5 times with something that is not an answer of its API, from ${baseURL()}`);
    expect(failure.message).toContain(`Check that ${baseURL()} is the base URL`);
    expect(t.server.requests(model)).toHaveLength(5);
  });
});

describe('a slow answer that keeps coming is never cut', () => {
  it.each(['openai', 'anthropic'])('%s: a stream that takes longer than the heartbeat timeout completes', async (api) => {
    // About 20 events 400 ms apart: some 8 s, four times the agent's 2 s heartbeat timeout.
    const text = 'Slowly but surely the answer arrives, one word after another, until it is complete at last.';
    t.server.script('slow-stream', [{ text, chunkDelayMs: 400 }]);
    const run = await t.keel.client.start(`slow-stream-${api}`, 'Take your time.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: text });
    const [request] = t.server.requests('slow-stream');
    expect(request!.closedAt).toBeUndefined();
    // One attempt: the heartbeat timeout never fired.
    expect(await modelAttempts(run.workflowId)).toBe(1);
    const modelTurn = (await historyOf(run)).events?.find((e) => e.activityTaskScheduledEventAttributes);
    expect(Number(modelTurn?.activityTaskScheduledEventAttributes?.heartbeatTimeout?.seconds)).toBe(2);
  });
});

describe('a cancelled run stops its model call', () => {
  it('the HTTP request is closed', async () => {
    t.server.script('fault-cancel', [{ fault: 'hang' }]);
    const run = await t.keel.client.start('cancelled', 'Wait for it.');
    await expect.poll(() => t.server.requests('fault-cancel').length, { timeout: 10_000 }).toBe(1);
    await run.cancel();
    // The cancel reaches the activity with a heartbeat's answer, and the activity aborts the call.
    await expect.poll(() => t.server.requests('fault-cancel')[0]?.closedAt, { timeout: 20_000, interval: 100 }).toBeDefined();
  });
});

describe("a worker's own configuration problem", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('a missing API key is retried, told to the run once, and a fixed worker finishes the run', async () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    const keyless = agent('keyless', 'openai:fault-no-key');
    t.server.script('fault-no-key', [{ text: 'with a key at last' }]);
    const taskQueue = `no-key-${randomUUID().slice(0, 8)}`;
    const broken = await startKeel({ agents: [keyless], taskQueue, providers: { openai: { baseURL: t.server.openaiBaseURL } } });
    let brokenRunning = true;
    let fixed: Awaited<ReturnType<typeof startKeel>> | undefined;
    try {
      const run = await broken.client.start('keyless', 'Hello?');
      // Retried, with a failure that says what to fix.
      await expect
        .poll(async () => (await pendingModelTurn(run))?.attempt ?? 0, { timeout: 20_000, interval: 100 })
        .toBeGreaterThanOrEqual(3);
      const pending = await pendingModelTurn(run);
      expect(pending?.lastFailure).toContain("OPENAI_API_KEY is not set in the worker's environment");
      expect(pending?.lastFailure).toContain('fix it and restart the worker');
      expect(t.server.requests('fault-no-key')).toHaveLength(0);
      // The run's current details (the Temporal UI, `keel status`) say what holds it up.
      await expect
        .poll(async () => (await run.workflow.query<{ currentDetails: string }>('__temporal_workflow_metadata')).currentDetails, {
          timeout: 10_000,
          interval: 100,
        })
        .toMatch(/^turn 1: waiting for a worker that can go on\. .*OPENAI_API_KEY is not set/);
      brokenRunning = false;
      await broken.stop();

      fixed = await startKeel({
        agents: [keyless],
        taskQueue,
        providers: { openai: { apiKey: 'test-key', baseURL: t.server.openaiBaseURL } },
      });
      const resumed = fixed.client.getHandle(run.workflowId);
      expect(await resumed.result()).toMatchObject({
        status: 'completed',
        output: 'with a key at last',
      });

      // The run was told once, however many attempts met the problem.
      const signals = ((await historyOf(resumed)).events ?? []).flatMap((e) => {
        const signal = e.workflowExecutionSignaledEventAttributes;
        return signal ? [{ name: signal.signalName, input: (signal.input?.payloads ?? []).map(decode) }] : [];
      });
      expect(signals).toEqual([
        {
          name: 'workerProblem',
          input: [{ type: 'KeelConfigError', message: expect.stringContaining('OPENAI_API_KEY is not set') }],
        },
      ]);
    } finally {
      if (brokenRunning) await broken.stop();
      await fixed?.stop();
    }
  });
});
