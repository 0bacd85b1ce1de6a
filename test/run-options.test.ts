/** What a run is given at start: a context for its tools and instructions, overrides, and a typed output. */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { RunFailedError } from '../src/client/agent-client.js';
import { defineAgent, defineTool, type ToolContext } from '../src/core/define.js';
import { useKeel } from './support/keel.js';

const contexts: ToolContext[] = [];

const whoami = defineTool({
  name: 'whoami',
  description: 'Who is asking.',
  input: z.object({}),
  execute: (_args, ctx) => {
    contexts.push(ctx);
    return `user ${(ctx.context as { user: string }).user}`;
  },
});

const greeter = defineAgent({
  name: 'greeter',
  instructions: ({ context }) => `Greet ${(context as { user?: string } | undefined)?.user ?? 'everyone'} warmly.`,
  model: 'openai:opts-default',
  tools: [whoami],
  maxTurns: 5,
  output: z.object({ greeting: z.string(), excited: z.boolean() }),
});

const t = useKeel([greeter]);

describe('run options', () => {
  it('gives the tools the context and their run, evaluates instructions once, and applies overrides', async () => {
    t.server.script('opts-other', [
      { toolCalls: [{ id: 'w1', name: 'whoami', arguments: {} }] },
      { text: '{"greeting": "Hello, Ada!", "excited": true}' },
    ]);
    const run = await t.keel.client.start(greeter, 'Say hello.', {
      context: { user: 'Ada' },
      model: 'openai:opts-other',
      maxTurns: 3,
    });
    const result = await run.result();
    // Typed from the agent's zod schema.
    expectTypeOf(result.output).toEqualTypeOf<{ greeting: string; excited: boolean }>();
    expect(result.output).toEqual({ greeting: 'Hello, Ada!', excited: true });

    const requests = t.server.requests('opts-other');
    expect(requests).toHaveLength(2);
    expect(t.server.requests('opts-default')).toHaveLength(0);
    for (const request of requests) expect(request.body.messages[0]).toEqual({ role: 'system', content: 'Greet Ada warmly.' });

    const { runId } = await run.workflow.describe();
    expect(contexts).toHaveLength(1);
    expect(contexts[0]).toMatchObject({ agent: 'greeter', workflowId: run.workflowId, runId, turn: 1, callId: 'w1', context: { user: 'Ada' } });
    expect(await run.status()).toMatchObject({ turns: 2 });
  });

  it('stops at the overridden turn limit', async () => {
    t.server.script('opts-default', () => ({ toolCalls: [{ name: 'whoami', arguments: {} }] }));
    const run = await t.keel.client.start(greeter, 'Loop.', { maxTurns: 2, context: { user: 'Bo' } });
    expect(await run.result()).toMatchObject({ status: 'max_turns', turns: 2 });
  });

  it('refuses a bad override with an error that says what is wrong', async () => {
    const run = await t.keel.client.start(greeter, 'Hello.', { model: 'gpt-4.1' });
    const failure = (await run.result().catch((e: unknown) => e)) as RunFailedError;
    expect(failure).toBeInstanceOf(RunFailedError);
    expect(failure.type).toBe('KeelInvalidInput');
    expect(failure.message).toMatch(/Invalid model override: Invalid model "gpt-4.1": expected "provider:model"/);
  });

  it('refuses a context over its limit', async () => {
    const run = await t.keel.client.start(greeter, 'Hello.', { context: { blob: 'x'.repeat(70 * 1024) } });
    const failure = (await run.result().catch((e: unknown) => e)) as RunFailedError;
    expect(failure.type).toBe('KeelInvalidInput');
    expect(failure.message).toMatch(/"context" must be at most 64 KB/);
  });
});
