import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/core/define.js';
import type { RunEvent } from '../src/core/run.js';
import { activityEvents, historyOf } from './support/history.js';
import { useKeel } from './support/keel.js';

/** Calls that actually ran, by id: a cut-off answer must add none. */
const ran: string[] = [];

const note = defineTool({
  name: 'note',
  description: 'Write a note.',
  input: z.object({ text: z.string() }),
  execute: ({ text }, ctx) => {
    ran.push(ctx.callId);
    return `noted: ${text}`;
  },
});

const variants = [
  { api: 'openai', stream: false },
  { api: 'openai', stream: true },
  { api: 'anthropic', stream: false },
  { api: 'anthropic', stream: true },
] as const;
const label = (v: (typeof variants)[number]) => `${v.api}${v.stream ? '-stream' : ''}`;

const agents = variants.flatMap((v) => [
  defineAgent({
    name: `cut-${label(v)}`,
    instructions: 'Take notes.',
    model: `${v.api}:cut-${label(v)}`,
    tools: [note],
    modelSettings: { stream: v.stream, maxTokens: 64, retry: { initialInterval: '100ms' } },
  }),
  defineAgent({
    name: `cut-output-${label(v)}`,
    instructions: 'Report.',
    model: `${v.api}:cut-output-${label(v)}`,
    output: z.object({ summary: z.string() }),
    modelSettings: { stream: v.stream, maxTokens: 64, retry: { initialInterval: '100ms' } },
  }),
]);

const t = useKeel(agents);

function ofType<T extends RunEvent['type']>(events: RunEvent[], type: T): Extract<RunEvent, { type: T }>[] {
  return events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
}

describe.each(variants)('an answer cut off at the token limit ($api, stream: $stream)', (v) => {
  it('runs none of its tool calls; the model is told why for each, and calls again', async () => {
    const model = `cut-${label(v)}`;
    t.server.script(model, [
      {
        text: 'Two notes.',
        toolCalls: [
          { id: `whole-${model}`, name: 'note', arguments: { text: 'first' } },
          { id: `half-${model}`, name: 'note', arguments: '{"text": "seco' },
        ],
        stopReason: 'max_tokens',
      },
      { toolCalls: [{ id: `again-${model}`, name: 'note', arguments: { text: 'second' } }] },
      { text: 'Both noted.' },
    ]);
    const run = await t.keel.client.start(`cut-${label(v)}`, 'Note two things.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Both noted.', turns: 3 });

    // Not even the whole call of the cut-off answer ran; the call made again did.
    expect(ran.filter((id) => id.endsWith(model))).toEqual([`again-${model}`]);
    const tools = activityEvents(await historyOf(run)).filter((a) => a.type === 'toolCall');
    expect(tools).toHaveLength(1);

    const events = await run.events();
    expect(ofType(events, 'turn.finished').map((e) => e.truncated)).toEqual([true, undefined, undefined]);
    const refused = ofType(events, 'tool.finished').filter((e) => e.turn === 1);
    expect(refused.map((e) => [e.callId, e.isError])).toEqual([
      [`whole-${model}`, true],
      [`half-${model}`, true],
    ]);
    expect(ofType(events, 'tool.started').map((e) => e.turn)).toEqual([2]);

    // What the model read on its second turn: an error result per call, with what to do.
    const transcript = await run.transcript();
    const results = transcript.filter((m) => m.role === 'tool').slice(0, 2);
    for (const r of results) {
      expect(r).toMatchObject({ role: 'tool', isError: true });
      expect(r.content).toContain('cut off at the output token limit (maxTokens 64)');
      expect(r.content).toContain('was not run');
    }
    const second = t.server.requests(model)[1]!.body;
    expect(JSON.stringify(second.messages)).toContain('cut off at the output token limit (maxTokens 64)');
  });

  it('a cut-off text answer is continued where it stopped; the pieces make the answer', async () => {
    const model = `cut-${label(v)}`;
    t.server.script(model, [
      { text: 'The answer is long, and it goes on and', stopReason: 'max_tokens' },
      { text: ' on, until it ends.' },
    ]);
    const run = await t.keel.client.start(`cut-${label(v)}`, 'Tell me everything.');
    expect(await run.result()).toMatchObject({
      status: 'completed',
      output: 'The answer is long, and it goes on and on, until it ends.',
      turns: 2,
    });
    expect(ofType(await run.events(), 'turn.finished').map((e) => e.truncated)).toEqual([true, undefined]);
    // The model was asked to go on, and saw what it had written.
    const second = JSON.stringify(t.server.requests(model).at(-1)!.body.messages);
    expect(second).toContain('The answer is long, and it goes on and');
    expect(second).toContain('Continue exactly where it stopped');
  });

  it('a cut-off structured answer goes back to the model as invalid output', async () => {
    const model = `cut-output-${label(v)}`;
    t.server.script(model, [
      { text: '{"summary": "a long summ', stopReason: 'max_tokens' },
      { text: '{"summary": "short"}' },
    ]);
    const run = await t.keel.client.start(`cut-output-${label(v)}`, 'Summarize.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: { summary: 'short' }, turns: 2 });
    const [invalid] = ofType(await run.events(), 'output.invalid');
    expect(invalid?.error).toContain('cut off at the output token limit (maxTokens 64)');
  });
});
