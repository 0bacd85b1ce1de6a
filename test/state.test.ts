/**
 * A run's state: given at start, read and written by tools, middleware, hooks, onTurnEnd and
 * instruction functions; `{key}` templates in static instructions; carried across
 * continue-as-new; shared with handoff targets and sub-agents; plain JSON only.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/core/define.js';
import { defineGuardrail } from '../src/core/guardrails.js';
import { ref } from '../src/core/handoff.js';
import { defineMiddleware } from '../src/core/middleware.js';
import { MissingStateKey, StateView, changesBetween, fillTemplate } from '../src/core/state.js';
import type { RunEvent } from '../src/core/run.js';
import { AGENT_RUN_WORKFLOW } from '../src/workflows/api.js';
import type { RecordedRequest } from './support/model-server.js';
import { activityEvents, historyBytes, historyOf } from './support/history.js';
import { providersFor, startKeel, useKeel, workflowBundle } from './support/keel.js';
import { until } from './support/until.js';

const retry = { retry: { initialInterval: '50ms', maximumInterval: '200ms' } };
const ofType = <T extends RunEvent['type']>(events: RunEvent[], type: T) => events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
const systemOf = (r: RecordedRequest) => String((r.body.messages as { role: string; content: unknown }[]).find((m) => m.role === 'system')?.content ?? '');
const toolResult = (events: RunEvent[], callId: string) => ofType(events, 'tool.finished').find((e) => e.callId === callId);

const remember = defineTool({
  name: 'remember',
  description: 'Remember a value under a key.',
  input: z.object({ key: z.string(), value: z.string() }),
  execute: ({ key, value }, ctx) => {
    ctx.state.set(key, value);
    return `remembered ${key}`;
  },
});
const recall = defineTool({
  name: 'recall',
  description: 'Recall the value of a key.',
  input: z.object({ key: z.string() }),
  readOnly: true,
  execute: ({ key }, ctx) => JSON.stringify(ctx.state.get(key) ?? null),
});
const forget = defineTool({
  name: 'forget',
  description: 'Forget a key.',
  input: z.object({ key: z.string() }),
  execute: ({ key }, ctx) => {
    ctx.state.delete(key);
    return `forgot ${key}`;
  },
});
const stamp = defineTool({
  name: 'stamp',
  description: 'Store the time (wrongly, as a Date).',
  input: z.object({}),
  execute: (_args, ctx) => {
    ctx.state.set('when', new Date() as never);
    return 'stamped';
  },
});
const count = defineTool({
  name: 'count',
  description: 'Add one to the counter.',
  input: z.object({}),
  execute: (_args, ctx) => {
    const n = (ctx.state.get<number>('n') ?? 0) + 1;
    ctx.state.set('n', n);
    return `n is ${n}`;
  },
});

// Instructions as a function of the state: evaluated again when the state changed.
const planner = defineAgent({
  name: 'planner',
  instructions: ({ state }) => `You plan. The plan is ${state.get<string>('plan') ?? 'not chosen'}.`,
  model: 'openai:state-planner',
  modelSettings: retry,
  tools: [remember, recall, forget, stamp],
});

// Templates in static instructions.
const greeter = defineAgent({
  name: 'greeter',
  instructions: 'Greet {name}. Tier: {tier?}. Keep {{braces}} and {"json": true} as they are.',
  model: 'openai:state-greeter',
  modelSettings: retry,
});

// Middleware writes, the tool reads what it wrote; a PreToolUse hook reads the state from its input.
const dir = mkdtempSync(join(tmpdir(), 'keel-state-'));
const hookScript = join(dir, 'pre-tool-use.sh');
// It also writes the state, through keel's own `state` field of a hook's JSON output.
writeFileSync(hookScript, ['#!/bin/sh', `cat > '${dir}/hook-input.json'`, `echo '{"state": {"set": {"hooked": "yes"}, "delete": ["stale"]}}'`, ''].join('\n'));
chmodSync(hookScript, 0o755);
const audit = defineMiddleware({
  name: 'audit',
  beforeCall: (call) => {
    call.state.set('audited', call.tool);
  },
});
const audited = defineAgent({
  name: 'audited',
  instructions: 'You recall.',
  model: 'openai:state-audited',
  modelSettings: retry,
  tools: [recall],
  middleware: [audit],
  hooks: { PreToolUse: [{ matcher: 'recall', hooks: [{ type: 'command', command: hookScript }] }] },
});

// onTurnEnd reads and writes.
const checker = defineAgent({
  name: 'checker',
  instructions: 'Check.',
  model: 'openai:state-checker',
  modelSettings: retry,
  maxTurns: 3,
  onTurnEnd: ({ state }) => {
    if (state.get('checked')) return undefined;
    state.set('checked', true);
    return 'Check once more.';
  },
});

/**
 * Call `held` waits for the test to let it go (the moment to swap workers), then fails once: its
 * retry runs on the new worker, whose first read of the state is a retried attempt's.
 */
const gate = { held: '', started: false, failed: false, release: () => undefined as void };
const hold = defineTool({
  name: 'hold',
  description: 'Wait a moment, then read the color.',
  input: z.object({}),
  retry: { maximumAttempts: 3, initialInterval: '100ms' },
  execute: async (_args, ctx) => {
    if (ctx.callId === gate.held && !gate.failed) {
      gate.started = true;
      await new Promise<void>((resolve) => (gate.release = resolve));
      gate.failed = true;
      throw new Error('the first attempt fails');
    }
    return JSON.stringify(ctx.state.get('color') ?? null);
  },
});
const swapper = defineAgent({ name: 'swapper', instructions: 'Remember, hold, recall.', model: 'openai:state-swapper', modelSettings: retry, tools: [remember, hold, recall] });

// A guardrail reads the state (read-only).
const frozen = defineGuardrail({
  name: 'frozen-account',
  check: (_subject, ctx) => {
    if (ctx.state.get('frozen') !== true) return { tripped: false };
    try {
      ctx.state.set('seen', true);
    } catch (err) {
      return { tripped: true, reason: `the account is frozen (${(err as Error).message})` };
    }
    return { tripped: true, reason: 'the account is frozen' };
  },
});
const banker = defineAgent({ name: 'banker', instructions: 'You bank.', model: 'openai:state-banker', modelSettings: retry, guardrails: { input: [frozen] } });

const counter = defineAgent({ name: 'counter', instructions: 'Count.', model: 'anthropic:state-counter', modelSettings: retry, tools: [count], maxTurns: 40 });

// Handoffs: the target reads the state the source wrote, and its template is filled from it.
const support = defineAgent({
  name: 'support',
  instructions: 'You handle ticket {ticket}.',
  model: 'openai:state-support',
  modelSettings: retry,
  tools: [recall],
});
const triage = defineAgent({ name: 'triage', instructions: 'You route.', model: 'openai:state-triage', modelSettings: retry, tools: [remember], handoffs: [ref('support')] });

// Sub-agents: start with the parent's state; what they write comes back.
const researcher = defineAgent({ name: 'researcher', instructions: 'You research.', model: 'openai:state-researcher', modelSettings: retry, tools: [recall, remember, forget] });
const lead = defineAgent({ name: 'lead', instructions: 'You lead.', model: 'openai:state-lead', modelSettings: retry, tools: [recall], subAgents: [researcher] });

const t = useKeel([planner, greeter, audited, checker, counter, support, triage, researcher, lead, banker]);

describe("a run's state", () => {
  it('a tool writes it, a later tool and the next turn\'s instruction function read it; the client reads it', async () => {
    t.server.script('state-planner', [
      { toolCalls: [{ id: 'w1', name: 'remember', arguments: { key: 'plan', value: 'pro' } }] },
      { toolCalls: [{ id: 'r1', name: 'recall', arguments: { key: 'plan' } }] },
      { toolCalls: [{ id: 'd1', name: 'forget', arguments: { key: 'draft' } }] },
      { text: 'Planned.' },
    ]);
    const run = await t.keel.client.start('planner', 'Choose a plan.', { state: { user: 'ada', draft: 'x' } });
    const result = await run.result();
    expect(result).toMatchObject({ status: 'completed', output: 'Planned.', state: { user: 'ada', plan: 'pro' } });
    expect(result.state).not.toHaveProperty('draft');
    expect(await run.state()).toEqual({ user: 'ada', plan: 'pro' });

    const events = await run.events();
    expect(toolResult(events, 'r1')).toMatchObject({ result: '"pro"', isError: false });
    expect(ofType(events, 'state.changed')).toEqual([
      expect.objectContaining({ turn: 1, keys: ['plan'], version: 1, callId: 'w1', tool: 'remember' }),
      expect.objectContaining({ turn: 3, keys: ['draft'], version: 2, callId: 'd1', tool: 'forget' }),
    ]);
    const [first, second] = t.server.requests('state-planner');
    expect(systemOf(first!)).toBe('You plan. The plan is not chosen.');
    expect(systemOf(second!)).toBe('You plan. The plan is pro.');
  });

  it('middleware and a PreToolUse hook write it before the call, the tool reads that, and the hook gets it in its input', async () => {
    t.server.script('state-audited', [
      { toolCalls: [{ id: 'a1', name: 'recall', arguments: { key: 'audited' } }] },
      { toolCalls: [{ id: 'a2', name: 'recall', arguments: { key: 'hooked' } }] },
      { text: 'Done.' },
    ]);
    const run = await t.keel.client.start('audited', 'Recall.', { state: { team: 'ops', stale: true } });
    const result = await run.result();
    expect(result).toMatchObject({ status: 'completed', state: { team: 'ops', audited: 'recall', hooked: 'yes' } });
    expect(result.state).not.toHaveProperty('stale');
    expect(toolResult(await run.events(), 'a1')).toMatchObject({ result: '"recall"' });
    expect(toolResult(await run.events(), 'a2')).toMatchObject({ result: '"yes"' });
    await until(() => existsSync(join(dir, 'hook-input.json')), Boolean);
    expect(JSON.parse(readFileSync(join(dir, 'hook-input.json'), 'utf8'))).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'recall', state: { team: 'ops', hooked: 'yes', audited: 'recall' } });
  });

  it('a guardrail reads it, and may not write it', async () => {
    t.server.script('state-banker', [{ text: 'Paid.' }]);
    const blocked = await t.keel.client.start('banker', 'Pay the rent.', { state: { frozen: true } });
    expect(await blocked.result()).toMatchObject({ status: 'blocked', blocked: { guardrail: 'frozen-account', reason: expect.stringMatching(/frozen \(Cannot write state "seen" here: guardrails read the state/) } });
    const paid = await t.keel.client.start('banker', 'Pay the rent.', { state: { frozen: false } });
    expect(await paid.result()).toMatchObject({ status: 'completed', output: 'Paid.' });
  });

  it('onTurnEnd reads and writes it', async () => {
    t.server.script('state-checker', [{ text: 'Checked.' }, { text: 'Checked twice.' }]);
    const run = await t.keel.client.start('checker', 'Check.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Checked twice.', turns: 2, state: { checked: true } });
    expect(ofType(await run.events(), 'state.changed')).toEqual([expect.objectContaining({ turn: 1, keys: ['checked'] })]);
  });

  it('fills {key} and {key?} in static instructions, keeps {{ }} and other braces, and the history replays', async () => {
    t.server.script('state-greeter', [{ text: 'Hello, Ada.' }]);
    const run = await t.keel.client.start('greeter', 'Say hello.', { state: { name: 'Ada' } });
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Hello, Ada.' });
    expect(systemOf(t.server.requests('state-greeter').at(-1)!)).toBe('Greet Ada. Tier: . Keep {braces} and {"json": true} as they are.');
    // The filled instructions are recorded with the spec: a replay sees what the model saw.
    const sinks = { conversation: { append: { fn: () => undefined }, continued: { fn: () => undefined } }, state: { set: { fn: () => undefined } } };
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle(), sinks }, await historyOf(run), run.workflowId);
  });

  it('a missing required key fails the run, naming the key and how to set it, before any model call', async () => {
    const before = t.server.requests('state-greeter').length;
    const run = await t.keel.client.start('greeter', 'Say hello.', { state: { tier: 'gold' } });
    await expect(run.result()).rejects.toThrow(/use \{name\}, but the run's state has no "name".*"state": \{"name": "\.\.\."\}.*\{name\?\}/);
    expect(t.server.requests('state-greeter').length).toBe(before);
  });

  it('a value that is not plain JSON is refused with an error naming it; the state is left as it was', async () => {
    t.server.script('state-planner', [{ toolCalls: [{ id: 's1', name: 'stamp', arguments: {} }] }, { text: 'Could not stamp.' }]);
    const run = await t.keel.client.start('planner', 'Stamp it.', { state: { user: 'ada' } });
    expect(await run.result()).toMatchObject({ status: 'completed', state: { user: 'ada' } });
    expect(toolResult(await run.events(), 's1')).toMatchObject({ isError: true, result: expect.stringMatching(/state "when" is a Date: store date\.toISOString\(\)/) });
    expect(ofType(await run.events(), 'state.changed')).toEqual([]);
  });

  it('a start state that is not a JSON object is refused at the boundary, by any client', async () => {
    await expect(t.keel.client.start('planner', 'Go.', { state: { fn: (() => 1) as never } })).rejects.toThrow(/state\.fn is a function/);
    const handle = await t.keel.env.client.workflow.start(AGENT_RUN_WORKFLOW, {
      taskQueue: t.keel.taskQueue,
      workflowId: `bad-state-${Date.now()}`,
      args: [{ agent: 'planner', input: 'Go.', state: ['not', 'an', 'object'] }],
    });
    await expect(handle.result()).rejects.toThrow();
    const run = t.keel.client.getHandle(handle.workflowId);
    await expect(run.result()).rejects.toThrow(/"state" must be a JSON object of keys and values/);
  });

  it('is carried across continue-as-new: every write counts, in every execution', async () => {
    const N = 12;
    t.server.script('state-counter', (request) => {
      const done = (request.body.messages as { role: string; content: unknown }[]).filter((m) => JSON.stringify(m.content).includes('tool_result')).length;
      return done < N ? { toolCalls: [{ id: `c${done}`, name: 'count', arguments: {} }] } : { text: 'Counted.' };
    });
    const run = await t.keel.client.start('counter', 'Count to twelve.', { state: { n: 0 }, options: { continueAsNewAfterEvents: 30 } });
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Counted.', state: { n: N } });
    const events = await run.events();
    expect(ofType(events, 'run.continued').length).toBeGreaterThan(0);
    expect(toolResult(events, `c${N - 1}`)).toMatchObject({ result: `n is ${N}` });
    expect(await run.state()).toEqual({ n: N });
  });

  it('a handoff target shares it: it reads what the source wrote, and its template is filled from it', async () => {
    t.server.script('state-triage', [
      { toolCalls: [{ id: 't1', name: 'remember', arguments: { key: 'ticket', value: 'T-42' } }] },
      { toolCalls: [{ id: 'h1', name: 'transfer_to_support', arguments: {} }] },
    ]);
    t.server.script('state-support', [{ toolCalls: [{ id: 'r2', name: 'recall', arguments: { key: 'ticket' } }] }, { text: 'On it.' }]);
    const run = await t.keel.client.start('triage', 'My printer is on fire.');
    expect(await run.result()).toMatchObject({ status: 'completed', agent: 'support', state: { ticket: 'T-42' } });
    expect(toolResult(await run.events(), 'r2')).toMatchObject({ result: '"T-42"' });
    expect(systemOf(t.server.requests('state-support').at(-1)!)).toBe('You handle ticket T-42.');
  });

  it("a sub-agent starts with the parent's state and its writes reach the parent when it returns", async () => {
    t.server.script('state-researcher', [
      { toolCalls: [{ id: 'q1', name: 'recall', arguments: { key: 'topic' } }] },
      { toolCalls: [{ id: 'q2', name: 'remember', arguments: { key: 'finding', value: 'tides follow the moon' } }] },
      { toolCalls: [{ id: 'q3', name: 'forget', arguments: { key: 'scratch' } }] },
      { text: 'Found it.' },
    ]);
    t.server.script('state-lead', [
      { toolCalls: [{ id: 'sa', name: 'researcher', arguments: { input: 'Research the topic.' } }] },
      { toolCalls: [{ id: 'l2', name: 'recall', arguments: { key: 'finding' } }] },
      { text: 'Reported.' },
    ]);
    const run = await t.keel.client.start('lead', 'Lead the research.', { state: { topic: 'tides', scratch: 1 } });
    const result = await run.result();
    expect(result).toMatchObject({ status: 'completed', state: { topic: 'tides', finding: 'tides follow the moon' } });
    expect(result.state).not.toHaveProperty('scratch');
    const events = await run.events();
    expect(toolResult(events, 'l2')).toMatchObject({ result: '"tides follow the moon"' });
    expect(ofType(events, 'state.changed')).toEqual([expect.objectContaining({ callId: 'sa', tool: 'researcher', keys: ['finding', 'scratch'] })]);
    const child = t.keel.client.getHandle(`${run.workflowId}/researcher-sa`);
    expect(toolResult(await child.events(), 'q1')).toMatchObject({ result: '"tides"' });
  });

  it('history stays linear: a big state is stored once, not in every activity that reads it', async () => {
    const CALLS = 6;
    const big = 'x'.repeat(100 * 1024);
    t.server.script('state-planner', (request) => {
      const done = (request.body.messages as { role: string }[]).filter((m) => m.role === 'tool').length;
      return done < CALLS ? { toolCalls: [{ id: `b${done}`, name: 'remember', arguments: { key: `k${done}`, value: 'v' } }] } : { text: 'Stored.' };
    });
    const run = await t.keel.client.start('planner', 'Store six keys.', { state: { big } });
    expect(await run.result()).toMatchObject({ status: 'completed', state: { big, k0: 'v', k5: 'v' } });
    const history = await historyOf(run);
    // Each tool activity's input names the state's version; none carries the values.
    const tools = activityEvents(history).filter((a) => a.type === 'toolCall');
    expect(tools).toHaveLength(CALLS);
    for (const call of tools) expect(call.inputBytes).toBeLessThan(1024);
    // The state is in history once (the start input; the result holds it at the end): not once per call.
    expect(historyBytes(history)).toBeLessThan(2 * big.length + 40 * 1024);
  });

  it("a new worker, whose cache never heard of the state, reads it from the run: a retried attempt from the run's history, a first one by query", async () => {
    t.server.script('state-swapper', [
      { toolCalls: [{ id: 'm1', name: 'remember', arguments: { key: 'color', value: 'teal' } }] },
      { toolCalls: [{ id: 'hold1', name: 'hold', arguments: {} }] },
      { toolCalls: [{ id: 'm2', name: 'recall', arguments: { key: 'color' } }] },
      { text: 'Teal it is.' },
    ]);
    gate.held = 'hold1';
    const taskQueue = `state-swap-${Date.now()}`;
    const first = await startKeel({ agents: [swapper], providers: providersFor(t.server), taskQueue, workerOptions: { stickyQueueScheduleToStartTimeout: '1s' } });
    const run = await first.client.start(swapper, 'Pick a color.', { state: { owner: 'ada' } });
    await until(() => gate.started, Boolean, { what: 'the held call to start', intervalMs: 25 });
    const stopping = first.stop();
    gate.release();
    await stopping;
    const second = await startKeel({ agents: [swapper], providers: providersFor(t.server), taskQueue });
    try {
      const handle = second.client.getHandle(run.workflowId);
      expect(await handle.result()).toMatchObject({ status: 'completed', state: { owner: 'ada', color: 'teal' } });
      expect(toolResult(await handle.events(), 'hold1')).toMatchObject({ result: '"teal"', isError: false });
      expect(toolResult(await handle.events(), 'm2')).toMatchObject({ result: '"teal"', isError: false });
    } finally {
      await second.stop();
    }
  });
});

describe('state, its pieces', () => {
  it('fills templates: values as text or JSON, optional keys, literal braces, other braces left alone', () => {
    const state = { name: 'Ada', n: 3, tags: ['a', 'b'], 'user.id': 'u1' };
    expect(fillTemplate('Hi {name} ({n}) {tags} {user.id} {missing?}.', state)).toBe('Hi Ada (3) ["a","b"] u1 .');
    expect(fillTemplate('{{name}} is {{literal}}; {"a": 1} and { spaced } stay; {1st} too', state)).toBe('{name} is {literal}; {"a": 1} and { spaced } stay; {1st} too');
    expect(() => fillTemplate('Hi {nobody}.', state)).toThrow(MissingStateKey);
  });

  it('a view refuses what is not plain JSON, naming where, and keeps its own writes as the change set', () => {
    const view = new StateView({ a: 1, b: 2 });
    expect(() => view.set('m', new Map() as never)).toThrow(/state "m" is a Map, not a plain object/);
    expect(() => view.set('deep', { when: [new Date()] } as never)).toThrow(/state "deep"\.when\[0\] is a Date/);
    expect(() => view.set('u', undefined as never)).toThrow(/is undefined: delete the key instead/);
    expect(() => view.set('x', 'y'.repeat(300 * 1024))).toThrow(/over its limit of 256 KB/);
    view.set('c', { d: [1] });
    view.delete('a');
    expect(view.all()).toEqual({ b: 2, c: { d: [1] } });
    expect(view.changes()).toEqual({ set: { c: { d: [1] } }, delete: ['a'] });
    expect(() => new StateView({}, 'read-only here').set('k', 1)).toThrow(/Cannot write state "k" here: read-only here/);
  });

  it('the changes between two states are what changed, no more', () => {
    expect(changesBetween({ a: 1, b: [1], c: 'x' }, { a: 1, b: [1, 2], d: true })).toEqual({ set: { b: [1, 2], d: true }, delete: ['c'] });
    expect(changesBetween({ a: { b: 1 } }, { a: { b: 1 } })).toBeUndefined();
  });
});
