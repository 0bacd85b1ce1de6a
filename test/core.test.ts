import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConversationCache } from '../src/activities/conversation-cache.js';
import { parseModelName } from '../src/core/agent-spec.js';
import { defineAgent, defineTool } from '../src/core/define.js';
import { EventLog } from '../src/core/event-log.js';
import { userMessage } from '../src/core/messages.js';
import { parseJsonAnswer } from '../src/core/output.js';
import { boundText, pageWithin, utf8Bytes } from '../src/core/limits.js';
import { specHash } from '../src/core/spec-hash.js';
import { callProblem, composeStages, type ToolStage } from '../src/core/tool-pipeline.js';

const echo = defineTool({
  name: 'echo',
  description: 'Echo.',
  input: z.object({ text: z.string().describe('what to say'), times: z.number().int().default(1) }),
  execute: ({ text }) => text,
});

describe('defineTool', () => {
  it('describes its arguments as JSON Schema, from the zod schema', () => {
    expect(echo.spec).toEqual({
      name: 'echo',
      description: 'Echo.',
      readOnly: false,
      parameters: {
        type: 'object',
        properties: {
          text: { type: 'string', description: 'what to say' },
          times: { type: 'integer', default: 1, minimum: expect.any(Number), maximum: expect.any(Number) },
        },
        // `times` has a default, so the model may leave it out.
        required: ['text'],
      },
    });
  });

  it('rejects a name the providers would refuse, and a bad timeout', () => {
    expect(() => defineTool({ name: 'read file', description: '', input: z.object({}), execute: () => 1 })).toThrow(
      /Invalid tool name "read file": use 1 to 64 letters/,
    );
    expect(() =>
      defineTool({ name: 't', description: '', input: z.object({}), execute: () => 1, timeout: -5 }),
    ).toThrow(/timeout must be a positive duration/);
    expect(defineTool({ name: 't', description: '', input: z.object({}), execute: () => 1, timeout: '2m' }).spec.timeoutMs).toBe(120_000);
  });

  it('refuses a schema JSON Schema cannot describe', () => {
    expect(() => defineTool({ name: 't', description: '', input: z.object({ when: z.date() }), execute: () => 1 })).toThrow(
      /Cannot describe the schema of tool "t" as JSON Schema/,
    );
  });
});

describe('defineAgent', () => {
  it('fills in defaults and the output schema', () => {
    const agent = defineAgent({ name: 'a', instructions: 'Hi.', model: 'openai:gpt-4.1', tools: [echo], output: z.object({ ok: z.boolean() }) });
    expect(agent.spec).toMatchObject({ name: 'a', maxTurns: 10, outputRetries: 2, stopAtTools: [], modelSettings: {} });
    expect(agent.spec.outputSchema).toMatchObject({ type: 'object', required: ['ok'] });
    expect(agent.spec.tools).toEqual([echo.spec]);
  });

  it('says what is wrong with a bad definition', () => {
    const base = { name: 'a', instructions: '', model: 'openai:x' };
    expect(() => defineAgent({ ...base, model: 'gpt-4.1' })).toThrow(/Invalid model "gpt-4.1": expected "provider:model"/);
    expect(() => defineAgent({ ...base, name: 'no spaces' })).toThrow(/Invalid agent name "no spaces"/);
    expect(() => defineAgent({ ...base, maxTurns: 0 })).toThrow(/maxTurns must be a whole number of at least 1/);
    expect(() => defineAgent({ ...base, tools: [echo, echo] })).toThrow(/two tools named "echo"/);
    expect(() => defineAgent({ ...base, tools: [echo], stopAtTools: ['submit'] })).toThrow(/stopAtTools names "submit"/);
  });

  it('refuses stopWhen conditions keel does not know, and names a tool the agent lacks', () => {
    const base = { name: 'a', instructions: '', model: 'openai:x', tools: [echo] };
    expect(() => defineAgent({ ...base, stopWhen: { toolCalled: 'submit' } })).toThrow(/stopWhen names the tool "submit", which is not one of its tools/);
    expect(() => defineAgent({ ...base, stopWhen: { afterLunch: true } as never })).toThrow(/unknown stop condition "afterLunch"/);
    expect(() => defineAgent({ ...base, stopWhen: { turns: 0 } })).toThrow(/turns must be a whole number above 0/);
    expect(() => defineAgent({ ...base, stopWhen: { turns: 2, totalTokens: 5 } as never })).toThrow(/exactly one key/);
    expect(defineAgent({ ...base, stopWhen: [{ toolCalled: 'echo' }, { totalTokens: 1_000 }] }).spec.stopWhen).toEqual([{ toolCalled: 'echo' }, { totalTokens: 1_000 }]);
    expect(defineAgent(base).spec).not.toHaveProperty('stopWhen');
  });

  it('splits model names', () => {
    expect(parseModelName('anthropic:claude-sonnet-4-5')).toEqual({ provider: 'anthropic', model: 'claude-sonnet-4-5' });
    expect(parseModelName('openai:ft:gpt-4.1:org')).toEqual({ provider: 'openai', model: 'ft:gpt-4.1:org' });
  });
});

describe('EventLog', () => {
  it('numbers events from 1 and reads them after a seq', () => {
    const log = new EventLog();
    const at = new Date(0);
    log.append({ type: 'turn.started', turn: 1, agent: 'a' }, at);
    log.append({ type: 'turn.started', turn: 2, agent: 'a' }, at);
    expect(log.after(0).map((e) => e.seq)).toEqual([1, 2]);
    expect(log.after(1).map((e) => e.seq)).toEqual([2]);
    expect(log.after(2)).toEqual([]);
    expect(log.after(0)[0]).toEqual({ type: 'turn.started', turn: 1, agent: 'a', seq: 1, at: '1970-01-01T00:00:00.000Z' });
  });

  it('after continue-as-new, goes on numbering from the earlier execution and holds only its own events', () => {
    const log = new EventLog([], 40);
    expect(log.firstSeq).toBe(41);
    expect(log.lastSeq).toBe(40);
    log.append({ type: 'turn.started', turn: 9, agent: 'a' }, new Date(0));
    log.append({ type: 'turn.started', turn: 10, agent: 'a' }, new Date(0));
    expect(log.after(0).map((e) => e.seq)).toEqual([41, 42]);
    expect(log.after(41).map((e) => e.seq)).toEqual([42]);
    expect(log.lastSeq).toBe(42);
  });
});

describe('ConversationCache', () => {
  const m = (n: number) => userMessage(`m${n}`);

  it('serves a run’s messages once it has them all', () => {
    const cache = new ConversationCache();
    cache.append('r', 0, [m(0)]);
    cache.append('r', 1, [m(1), m(2)]);
    expect(cache.read('r', 0, 2)).toEqual([m(0), m(1)]);
    expect(cache.read('r', 0, 4)).toBeUndefined();
    // An append at an earlier index (after a rolled-back turn) drops what followed it.
    cache.append('r', 1, [m(1)]);
    expect(cache.read('r', 0, 2)).toEqual([m(0), m(1)]);
    expect(cache.read('r', 0, 3)).toBeUndefined();
  });

  it('keeps holes apart from what it holds, and evicts the least recently used', () => {
    const cache = new ConversationCache(2);
    cache.append('r', 0, [m(0)]);
    cache.fill('r', 5, [m(5), m(6)]);
    expect(cache.read('r', 0, 1)).toEqual([m(0)]);
    expect(cache.read('r', 5, 7)).toEqual([m(5), m(6)]);
    expect(cache.read('r', 0, 7)).toBeUndefined();
    expect(cache.missing('r', 0, 7)).toEqual([1, 2, 3, 4]);
    cache.append('a', 0, [m(0)]);
    cache.read('r', 0, 1);
    cache.append('c', 0, [m(0)]);
    expect(cache.missing('r', 0, 1)).toEqual([]);
    expect(cache.missing('a', 0, 1)).toEqual([0]);
  });
});

describe('parseJsonAnswer', () => {
  it('reads JSON, also inside a Markdown fence, and says why not', () => {
    expect(parseJsonAnswer('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseJsonAnswer('```json\n[1, 2]\n```')).toEqual({ ok: true, value: [1, 2] });
    expect(parseJsonAnswer('Sure! {"a":1}')).toMatchObject({ ok: false, error: expect.stringMatching(/not valid JSON/) });
  });
});

describe('limits', () => {
  it('counts UTF-8 bytes without Buffer', () => {
    for (const text of ['', 'abc', 'é', '€', '😀', 'ré 😀 €']) expect(utf8Bytes(text)).toBe(Buffer.byteLength(text));
  });

  it('leaves a text at its limit whole, and cuts one a byte over, marker included, never inside a character', () => {
    const atLimit = 'x'.repeat(2048);
    expect(boundText(atLimit, 2048)).toEqual({ text: atLimit });
    const over = `${'é'.repeat(1024)}x`; // 2049 bytes
    const cut = boundText(over, 2048, 'lookup result');
    expect(cut.truncatedFrom).toBe(2049);
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(2048);
    expect(cut.text).toMatch(/^é+\n\[… lookup result truncated by keel: 2,049 bytes, showing the first [\d,]+\]$/);
    expect(cut.text).not.toContain('\uFFFD');
  });

  it('pages by size, always moving on by at least one item', () => {
    const items = Array.from({ length: 10 }, () => 'x'.repeat(100));
    expect(pageWithin(items, 350)).toHaveLength(3);
    expect(pageWithin(['x'.repeat(1000)], 10)).toHaveLength(1);
    expect(pageWithin(items, 10_000)).toBe(items);
  });
});

describe('specHash', () => {
  it('is the same for equal specs whatever their key order, and differs when anything differs', () => {
    const a = defineAgent({ name: 'a', instructions: 'Be brief.', model: 'openai:gpt-4.1', tools: [echo] }).spec;
    const reordered = Object.fromEntries(Object.entries(a).reverse()) as typeof a;
    expect(specHash(reordered)).toBe(specHash(a));
    expect(specHash(a)).toMatch(/^[0-9a-f]{16}$/);
    expect(specHash({ ...a, instructions: 'Be brief!' })).not.toBe(specHash(a));
  });
});

describe('the tool-call pipeline', () => {
  const agent = defineAgent({ name: 'p', instructions: '.', model: 'demo:x', tools: [echo] }).spec;
  const call = (name: string, args: string) => ({ id: 'c', name, arguments: args });

  it('finds what the recorded spec alone shows to be wrong', () => {
    expect(callProblem(agent, call('echo', '{"text":"hi"}'))).toBeUndefined();
    expect(callProblem(agent, call('echo', ''))).toBeUndefined();
    expect(callProblem(agent, call('nope', '{}'))).toMatch(/no tool named "nope"\. Available tools: echo\./);
    expect(callProblem(agent, call('echo', '{"text":'))).toMatch(/not valid JSON/);
    expect(callProblem(agent, call('echo', '[1]'))).toMatch(/must be a JSON object, got an array/);
  });

  it('composes stages in order around the terminal stage, and a stage may answer without next', async () => {
    const trace: string[] = [];
    const stage = (name: string, answer = false): ToolStage => ({
      name,
      async run(request, next) {
        trace.push(`${name} before`);
        if (answer) return { result: { role: 'tool', toolCallId: 'c', toolName: 'echo', content: name }, stage: name };
        const outcome = await next(request);
        trace.push(`${name} after`);
        return outcome;
      },
    });
    const terminal = async () => {
      trace.push('execute');
      return { result: { role: 'tool' as const, toolCallId: 'c', toolName: 'echo', content: 'ran' }, stage: 'execute' };
    };
    const request = { agent, turn: 1, call: call('echo', '{}'), tool: agent.tools[0] };
    expect(await composeStages([stage('a'), stage('b')], terminal)(request)).toMatchObject({ stage: 'execute' });
    expect(trace).toEqual(['a before', 'b before', 'execute', 'b after', 'a after']);
    trace.length = 0;
    expect(await composeStages([stage('a'), stage('deny', true), stage('c')], terminal)(request)).toMatchObject({ stage: 'deny' });
    expect(trace).toEqual(['a before', 'deny before', 'a after']);
  });
});
