import { describe, expect, it } from 'vitest';
import { RunFailedError } from '../src/client/agent-client.js';
import { defineAgent } from '../src/core/define.js';
import { activityEvents, historyOf } from './support/history.js';
import { useKeel } from './support/keel.js';
import type { ScriptStep } from './support/model-server.js';

/** One agent per fault, each with its own scripted model. Retries are quick so tests are. */
function agent(name: string, model: string, timeoutMs?: number) {
  return defineAgent({
    name,
    instructions: 'Answer.',
    model,
    modelSettings: {
      retry: { initialInterval: '100ms', maximumInterval: '500ms' },
      ...(timeoutMs !== undefined && { timeoutMs }),
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
];

const t = useKeel(agents);

async function modelAttempts(workflowId: string): Promise<number | undefined> {
  const history = await historyOf(t.keel.client.getHandle(workflowId));
  return activityEvents(history).find((a) => a.type === 'modelTurn')?.attempt;
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
