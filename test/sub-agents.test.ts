/** Sub-agents as tools: each call a child workflow, on the scripted model and a real dev server. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunHandle } from '../src/client/agent-client.js';
import type { PendingApproval } from '../src/core/approval.js';
import { defineAgent, defineTool } from '../src/core/define.js';
import { ref } from '../src/core/handoff.js';
import { runsConcurrently } from '../src/core/tool-gate.js';
import type { RunEvent } from '../src/core/run.js';
import { eventTypes, historyOf } from './support/history.js';
import { useKeel } from './support/keel.js';
import { until as waitUntil } from './support/until.js';

const until = <T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000) => waitUntil(read, ok, { timeoutMs, retryErrors: true });


const retry = { retry: { initialInterval: '50ms', maximumInterval: '200ms' } };
const effects: string[] = [];

const publish = defineTool({
  name: 'publish',
  description: 'Publish a finding.',
  input: z.object({ text: z.string() }),
  requiresApproval: true,
  execute: ({ text }) => {
    effects.push(`published ${text}`);
    return 'published';
  },
});

const researcher = defineAgent({
  name: 'researcher',
  description: 'Researches a question and answers in one line.',
  instructions: 'You research.',
  model: 'openai:researcher-model',
  modelSettings: retry,
  tools: [publish],
});

const lead = defineAgent({
  name: 'lead',
  instructions: 'You lead a team.',
  model: 'openai:lead-model',
  modelSettings: retry,
  subAgents: [researcher],
});

const parallelLead = defineAgent({
  name: 'parallel-lead',
  instructions: 'You lead a team, in parallel.',
  model: 'openai:parallel-lead-model',
  modelSettings: retry,
  subAgents: [researcher],
  concurrentSubAgents: true,
});

/** Calls itself: the depth limit stops it. */
const recursive = defineAgent({
  name: 'recursive',
  instructions: 'You delegate to yourself.',
  model: 'openai:recursive-model',
  modelSettings: retry,
  maxDepth: 1,
  subAgents: [ref('recursive')],
});

/** Forwards its sub-agents' events; a SubagentStart hook adds context to their task. */
const watchfulLead = defineAgent({
  name: 'watchful-lead',
  instructions: 'You lead and watch.',
  model: 'openai:watchful-lead-model',
  modelSettings: retry,
  subAgents: [researcher],
  forwardSubAgentEvents: true,
  hooks: {
    SubagentStart: [
      {
        matcher: 'researcher',
        hooks: [{ type: 'command', command: `echo '{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"Cite your sources."}}'` }],
      },
    ],
  },
});

/** Two levels above the researcher: its sub-agent, the lead, has the researcher as its own. */
const chief = defineAgent({
  name: 'chief',
  instructions: 'You run the department.',
  model: 'openai:chief-model',
  modelSettings: retry,
  subAgents: [lead],
});

/** Has read-only tools only: a call to it changes nothing, so plan mode lets it run. */
const lookup = defineTool({ name: 'lookup', description: 'Look a word up.', input: z.object({ word: z.string() }), readOnly: true, execute: ({ word }) => `${word}: a word` });
const reader = defineAgent({ name: 'reader', instructions: 'You read.', model: 'openai:reader-model', modelSettings: retry, tools: [lookup] });
/** Both kinds of sub-agent, called one at a time: one may change things, the other only reads. */
const planner = defineAgent({ name: 'planner', instructions: 'You plan.', model: 'openai:planner-model', modelSettings: retry, subAgents: [researcher, reader] });
const parallelPlanner = defineAgent({
  name: 'parallel-planner',
  instructions: 'You plan, in parallel.',
  model: 'openai:parallel-planner-model',
  modelSettings: retry,
  subAgents: [researcher, reader],
  concurrentSubAgents: true,
});
/** A tool that changes something and may run beside others of its kind. */
const notify = defineTool({
  name: 'notify',
  description: 'Notify a person.',
  input: z.object({ who: z.string() }),
  concurrent: true,
  execute: ({ who }) => `notified ${who}`,
});
const notifier = defineAgent({ name: 'notifier', instructions: 'You notify.', model: 'openai:notifier-model', modelSettings: retry, tools: [notify] });

const t = useKeel([lead, parallelLead, researcher, recursive, watchfulLead, chief, reader, planner, parallelPlanner, notifier]);

/** The history's events of these types, in order, as their type names. */
const inOrder = async (run: RunHandle, ...types: string[]) => eventTypes(await historyOf(run)).filter((type) => types.includes(type));

const ofType = <T extends RunEvent['type']>(events: RunEvent[], type: T) => events.filter((e) => e.type === type) as Extract<RunEvent, { type: T }>[];


describe('sub-agents as tools', () => {
  it('a call runs the sub-agent as a child workflow, without the parent conversation, and returns its answer', async () => {
    t.server.reset();
    t.server.script('lead-model', [
      { text: 'Asking.', toolCalls: [{ id: 'c1', name: 'researcher', arguments: { input: 'What is the boiling point of water at sea level?' } }] },
      { text: 'The team says: 100 °C.' },
    ]);
    t.server.script('researcher-model', [{ text: '100 °C' }]);
    const run = await t.keel.client.start('lead', 'SECRET-PARENT-CONTEXT: ask the team about water.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'The team says: 100 °C.', agent: 'lead' });

    const child = `${run.workflowId}/researcher-c1`;
    const described = await t.keel.env.client.workflow.getHandle(child).describe();
    expect(described.type).toBe('agentRun');
    expect(described.parentExecution?.workflowId).toBe(run.workflowId);
    // The sub-agent saw its task only.
    const [request] = t.server.requests('researcher-model');
    expect(JSON.stringify(request!.body.messages)).toContain('boiling point');
    expect(JSON.stringify(request!.body.messages)).not.toContain('SECRET-PARENT-CONTEXT');
    // Its answer is the call's result.
    expect(JSON.stringify(t.server.requests('lead-model')[1]!.body.messages)).toContain('100 °C');
    expect(ofType(await run.events(), 'subagent.finished')).toEqual([expect.objectContaining({ workflowId: child, status: 'completed', agent: 'researcher' })]);
  });

  it("forwards the sub-agent's events into the parent's log, tagged; a SubagentStart hook adds to its task", async () => {
    t.server.reset();
    t.server.script('watchful-lead-model', [
      { toolCalls: [{ id: 'w1', name: 'researcher', arguments: { input: 'Find the speed of light.' } }] },
      { text: 'c' },
    ]);
    t.server.script('researcher-model', [{ text: '299,792 km/s' }]);
    const run = await t.keel.client.start('watchful-lead', 'How fast is light?');
    await run.result();
    const forwarded = ofType(await run.events(), 'subagent.event');
    expect(forwarded.map((e) => e.event.type)).toEqual(['run.started', 'turn.started', 'turn.finished', 'run.finished']);
    expect(forwarded[0]).toMatchObject({ callId: 'w1', depth: 1, workflowId: `${run.workflowId}/researcher-w1` });
    expect(JSON.stringify(t.server.requests('researcher-model')[0]!.body.messages)).toContain('Find the speed of light.\\n\\nCite your sources.');
  });

  it('a call past the depth limit returns an error result', async () => {
    t.server.reset();
    // Depth 1 may run; its own call to go deeper is refused; it then answers.
    t.server.script('recursive-model', [
      { toolCalls: [{ id: 'r1', name: 'recursive', arguments: { input: 'go deeper' } }] },
      { toolCalls: [{ id: 'r2', name: 'recursive', arguments: { input: 'deeper still' } }] },
      { text: 'depth 1 done' },
      { text: 'top done' },
    ]);
    const run = await t.keel.client.start('recursive', 'Recurse.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'top done' });
    const requests = t.server.requests('recursive-model');
    expect(JSON.stringify(requests[2]!.body.messages)).toContain('sub-agents may nest 1 deep here, and this would be 2');
  });

  it('concurrentSubAgents runs calls of one turn in parallel', async () => {
    t.server.reset();
    t.server.script('parallel-lead-model', [
      {
        toolCalls: [
          { id: 'p1', name: 'researcher', arguments: { input: 'one' } },
          { id: 'p2', name: 'researcher', arguments: { input: 'two' } },
        ],
      },
      { text: 'both answered' },
    ]);
    t.server.script('researcher-model', [{ text: 'answer' }, { text: 'answer' }]);
    const run = await t.keel.client.start('parallel-lead', 'Ask twice.');
    await run.result();
    // Both children started before either finished: both start commands came in one workflow task.
    expect(await inOrder(run, 'START_CHILD_WORKFLOW_EXECUTION_INITIATED', 'CHILD_WORKFLOW_EXECUTION_COMPLETED')).toEqual([
      'START_CHILD_WORKFLOW_EXECUTION_INITIATED',
      'START_CHILD_WORKFLOW_EXECUTION_INITIATED',
      'CHILD_WORKFLOW_EXECUTION_COMPLETED',
      'CHILD_WORKFLOW_EXECUTION_COMPLETED',
    ]);
    expect(ofType(await run.events(), 'subagent.finished')).toHaveLength(2);
  });

  it('an approval needed inside a sub-agent is listed on the root and approved through it', async () => {
    t.server.reset();
    effects.length = 0;
    t.server.script('lead-model', [
      { toolCalls: [{ id: 'c1', name: 'researcher', arguments: { input: 'Find and publish.' } }] },
      { text: 'Published by the team.' },
    ]);
    t.server.script('researcher-model', [{ toolCalls: [{ id: 'pub1', name: 'publish', arguments: { text: 'water boils at 100' } }] }, { text: 'done' }]);
    const run = await t.keel.client.start('lead', 'Publish a finding.');
    const child = `${run.workflowId}/researcher-c1`;
    const pending = await until(() => run.pending(), (p: PendingApproval[]) => p.length > 0);
    expect(pending).toEqual([expect.objectContaining({ callId: 'pub1', tool: 'publish', run: child })]);
    expect((await run.status()).status).toBe('awaiting_approval');
    // keel pending finds the root (and the sub-agent's run).
    const listed = await until(() => t.keel.client.pending(), (runs) => runs.some((r) => r.run.workflowId === run.workflowId));
    expect(listed.find((r) => r.run.workflowId === run.workflowId)!.calls[0]).toMatchObject({ callId: 'pub1', run: child });

    await run.approve('pub1');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Published by the team.' });
    expect(effects).toEqual(['published water boils at 100']);
    expect((await run.status()).pending).toBeUndefined();
  });

  it('an approval two levels down is listed on the root and decided by a plain approve Signal sent to the root', async () => {
    t.server.reset();
    effects.length = 0;
    t.server.script('chief-model', [
      { toolCalls: [{ id: 'k1', name: 'lead', arguments: { input: 'Have the team publish.' } }] },
      { text: 'The department published.' },
    ]);
    t.server.script('lead-model', [
      { toolCalls: [{ id: 'c1', name: 'researcher', arguments: { input: 'Find and publish.' } }] },
      { text: 'Published by the team.' },
    ]);
    t.server.script('researcher-model', [{ toolCalls: [{ id: 'pub2', name: 'publish', arguments: { text: 'ice melts at 0' } }] }, { text: 'done' }]);
    const run = await t.keel.client.start('chief', 'Publish a finding, through your lead.');
    const lead = `${run.workflowId}/lead-k1`;
    const grandchild = `${lead}/researcher-c1`;
    // The root's status query lists the call its grandchild waits on.
    const status = await until(() => run.status(), (s) => (s.pending?.length ?? 0) > 0);
    expect(status).toMatchObject({ status: 'awaiting_approval', pending: [expect.objectContaining({ callId: 'pub2', tool: 'publish', run: grandchild })] });
    expect(effects).toEqual([]);

    // A plain Signal, as any Temporal client sends it (no Update, no keel client), to the root only.
    await t.keel.env.client.workflow.getHandle(run.workflowId).signal('approve', { callId: 'pub2', decision: 'allow' });
    // Decided at the root, the call runs two levels down and the root completes with the answer.
    const finished = await until(() => run.status(), (s) => s.status !== 'running' && s.status !== 'awaiting_approval', 30_000);
    expect(finished).toMatchObject({ status: 'completed' });
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'The department published.' });
    expect(effects).toEqual(['published ice melts at 0']);
    expect(JSON.stringify(t.server.requests('researcher-model')[1]!.body.messages)).toContain('published');
    const decided = ofType(await t.keel.client.getHandle(grandchild).events(), 'approval.decided');
    expect(decided).toEqual([expect.objectContaining({ callId: 'pub2', decision: 'allow', by: 'signal' })]);
  });

  it('cancelling the parent cancels its children', async () => {
    t.server.reset();
    t.server.script('lead-model', [{ toolCalls: [{ id: 'c1', name: 'researcher', arguments: { input: 'Publish.' } }] }]);
    t.server.script('researcher-model', [{ toolCalls: [{ id: 'pub1', name: 'publish', arguments: { text: 'never' } }] }]);
    const run = await t.keel.client.start('lead', 'Publish.');
    const child = t.keel.client.getHandle(`${run.workflowId}/researcher-c1`);
    await until(() => run.pending(), (p: PendingApproval[]) => p.length > 0);
    await run.cancel();
    await expect(run.result()).rejects.toThrow(/cancel/);
    await until(() => child.describe(), (d) => d.status === 'cancelled');
  });
});

describe('running in parallel and changing nothing are two properties', () => {
  const twoCalls = (first: string, second: string) => ({
    toolCalls: [
      { id: 'a1', name: first, arguments: { input: 'one' } },
      { id: 'a2', name: second, arguments: { input: 'two' } },
    ],
  });

  it.each(['planner', 'parallel-planner'])('plan mode (%s): a sub-agent that may change things is denied, one with read-only tools runs', async (agent) => {
    t.server.reset();
    t.server.script(`${agent}-model`, [twoCalls('researcher', 'reader'), { text: 'planned' }]);
    t.server.script('reader-model', [{ text: 'read it' }]);
    const run = await t.keel.client.start(agent, 'Plan.', { permissionMode: 'plan' });
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'planned' });
    const finished = ofType(await run.events(), 'tool.finished');
    expect(finished.find((e) => e.callId === 'a1')).toMatchObject({ isError: true, stage: 'permissions', result: expect.stringMatching(/mode plan.*"researcher" is not read-only/) });
    expect(finished.find((e) => e.callId === 'a2')).toMatchObject({ isError: false, result: 'read it' });
    expect(t.server.requests('researcher-model')).toHaveLength(0);
  });

  it('the recorded specs keep them apart; a spec recorded before `concurrent` existed runs in parallel when read-only', () => {
    const specOf = (agent: typeof planner, tool: string) => agent.spec.tools.find((t) => t.name === tool);
    expect(specOf(planner, 'researcher')).toMatchObject({ readOnly: false });
    expect(specOf(planner, 'researcher')).not.toHaveProperty('concurrent');
    expect(specOf(planner, 'reader')).toMatchObject({ readOnly: true, concurrent: false });
    expect(specOf(parallelPlanner, 'researcher')).toMatchObject({ readOnly: false, concurrent: true });
    expect(specOf(parallelPlanner, 'reader')).toMatchObject({ readOnly: true });
    expect(specOf(parallelPlanner, 'reader')).not.toHaveProperty('concurrent');
    expect(notify.spec).toMatchObject({ readOnly: false, concurrent: true });
    // A ref's tools are unknown: it may change things.
    expect(specOf(recursive, 'recursive')).toMatchObject({ readOnly: false });
    expect(runsConcurrently({ ...specOf(parallelPlanner, 'researcher')!, readOnly: true, concurrent: undefined })).toBe(true);
    expect(runsConcurrently(specOf(planner, 'reader'))).toBe(false);
    expect(runsConcurrently(specOf(planner, 'researcher'))).toBe(false);
    expect(runsConcurrently(specOf(parallelPlanner, 'researcher'))).toBe(true);
  });

  it('sequential sub-agents run one after the other: the second starts after the first has finished', async () => {
    t.server.reset();
    t.server.script('planner-model', [twoCalls('researcher', 'reader'), { text: 'both answered' }]);
    t.server.script('researcher-model', [{ text: 'researched' }]);
    t.server.script('reader-model', [{ text: 'read it' }]);
    const run = await t.keel.client.start('planner', 'Ask both.');
    expect(await run.result()).toMatchObject({ status: 'completed' });
    expect(await inOrder(run, 'START_CHILD_WORKFLOW_EXECUTION_INITIATED', 'CHILD_WORKFLOW_EXECUTION_COMPLETED')).toEqual([
      'START_CHILD_WORKFLOW_EXECUTION_INITIATED',
      'CHILD_WORKFLOW_EXECUTION_COMPLETED',
      'START_CHILD_WORKFLOW_EXECUTION_INITIATED',
      'CHILD_WORKFLOW_EXECUTION_COMPLETED',
    ]);
  });

  it('a tool marked concurrent runs beside others of its turn, and plan mode still denies it', async () => {
    t.server.reset();
    const calls = { toolCalls: [{ id: 'n1', name: 'notify', arguments: { who: 'ann' } }, { id: 'n2', name: 'notify', arguments: { who: 'bo' } }] };
    t.server.script('notifier-model', [calls, { text: 'notified' }, calls, { text: 'not allowed' }]);
    const run = await t.keel.client.start('notifier', 'Notify both.');
    await run.result();
    // Both activities scheduled before either completed.
    expect(await inOrder(run, 'ACTIVITY_TASK_SCHEDULED', 'ACTIVITY_TASK_COMPLETED')).toEqual([
      'ACTIVITY_TASK_SCHEDULED', // the model turn
      'ACTIVITY_TASK_COMPLETED',
      'ACTIVITY_TASK_SCHEDULED',
      'ACTIVITY_TASK_SCHEDULED',
      'ACTIVITY_TASK_COMPLETED',
      'ACTIVITY_TASK_COMPLETED',
      'ACTIVITY_TASK_SCHEDULED', // the model turn
      'ACTIVITY_TASK_COMPLETED',
    ]);
    const planned = await t.keel.client.start('notifier', 'Notify both.', { permissionMode: 'plan' });
    await planned.result();
    expect(ofType(await planned.events(), 'tool.finished')).toEqual([
      expect.objectContaining({ callId: 'n1', isError: true, stage: 'permissions' }),
      expect.objectContaining({ callId: 'n2', isError: true, stage: 'permissions' }),
    ]);
  });
});
