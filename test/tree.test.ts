/** `keel tree` and `AgentClient.tree()`: a run, its handoffs and its sub-agents, on the scripted model and a real dev server. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/core/define.js';
import { ref } from '../src/core/handoff.js';
import type { RunTree } from '../src/client/tree.js';
import { keel } from './support/cli.js';
import { providersFor, startKeel, useKeel } from './support/keel.js';
import { until as waitUntil } from './support/until.js';

const until = <T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000) => waitUntil(read, ok, { timeoutMs });


const retry = { retry: { initialInterval: '50ms', maximumInterval: '200ms' } };

const analyst = defineAgent({
  name: 'analyst',
  description: 'Checks a figure.',
  instructions: 'You check figures.',
  model: 'openai:analyst-model',
  modelSettings: retry,
});

const researcher = defineAgent({
  name: 'researcher',
  description: 'Researches a question, with an analyst.',
  instructions: 'You research.',
  model: 'openai:researcher-model',
  modelSettings: retry,
  subAgents: [analyst],
});

const publish = defineTool({
  name: 'publish',
  description: 'Publish a note.',
  input: z.object({ text: z.string() }),
  requiresApproval: true,
  execute: () => 'published',
});

const writer = defineAgent({
  name: 'writer',
  description: 'Writes and publishes a note.',
  instructions: 'You write.',
  model: 'openai:writer-model',
  modelSettings: retry,
  tools: [publish],
});

const billing = defineAgent({
  name: 'billing',
  description: 'Answers billing questions.',
  instructions: 'You are billing.',
  model: 'openai:billing-model',
  modelSettings: retry,
  handoffs: [ref('lead')],
});

const lead = defineAgent({
  name: 'lead',
  instructions: 'You lead a team.',
  model: 'openai:lead-model',
  modelSettings: retry,
  subAgents: [researcher, writer],
  handoffs: [billing],
});

const agents = [lead, researcher, analyst, writer, billing];
const t = useKeel(agents);


/** lead asks researcher (who asks analyst), hands to billing, billing hands back, lead answers. */
function scriptTeam(server: typeof t.server): void {
  server.reset();
  server.script('lead-model', [
    { toolCalls: [{ id: 'c1', name: 'researcher', arguments: { input: 'How much was invoice A7?' } }] },
    { toolCalls: [{ id: 'h1', name: 'transfer_to_billing', arguments: {} }] },
    { text: 'Invoice A7 was 42 EUR, and it is paid.' },
  ]);
  server.script('researcher-model', [{ toolCalls: [{ id: 'a1', name: 'analyst', arguments: { input: 'Check 42 EUR.' } }] }, { text: '42 EUR' }]);
  server.script('analyst-model', [{ text: 'checked: 42 EUR' }]);
  server.script('billing-model', [{ toolCalls: [{ id: 'h2', name: 'transfer_to_lead', arguments: {} }] }]);
}

/** The tree's shape without times and run IDs. */
function shape(node: RunTree): unknown {
  return {
    workflowId: node.workflowId,
    agent: node.agent,
    kind: node.kind,
    status: node.status,
    ...(node.callId !== undefined && { callId: node.callId }),
    handoffs: node.handoffs.map((h) => `${h.from}→${h.to}`),
    children: node.children.map(shape),
  };
}

describe('keel tree', () => {
  let id: string;

  it('AgentClient.tree() returns the run, its handoffs in order and its sub-agents, nested, with kinds and statuses', async () => {
    scriptTeam(t.server);
    const run = await t.keel.client.start('lead', 'Was invoice A7 paid, and how much was it?');
    expect(await run.result()).toMatchObject({ status: 'completed', agent: 'lead' });
    id = run.workflowId;

    const tree = await t.keel.client.tree(id);
    expect(shape(tree)).toEqual({
      workflowId: id,
      agent: 'lead',
      kind: 'run',
      status: 'completed',
      handoffs: ['lead→billing', 'billing→lead'],
      children: [
        {
          workflowId: `${id}/researcher-c1`,
          agent: 'researcher',
          kind: 'sub-agent',
          status: 'completed',
          callId: 'c1',
          handoffs: [],
          children: [
            {
              workflowId: `${id}/researcher-c1/analyst-a1`,
              agent: 'analyst',
              kind: 'sub-agent',
              status: 'completed',
              callId: 'a1',
              handoffs: [],
              children: [],
            },
          ],
        },
      ],
    });
    expect(tree.handoffs.map((h) => h.callId)).toEqual(['h1', 'h2']);
    expect(tree.problems).toBeUndefined();
    expect(tree.runId).toBe((await run.describe()).runId);
    // The handle answers the same; a sub-agent's run has its own tree.
    expect(shape(await run.tree())).toEqual(shape(tree));
    expect(shape(await t.keel.client.tree(`${id}/researcher-c1`))).toEqual(shape(tree.children[0]!));
  });

  it('keel tree prints it; --json prints it as nested JSON', async () => {
    const text = await keel(['tree', id]);
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toBe(`${id}  lead · run · completed`);
    expect(lines[1]).toBe('├─ handoffs: lead → billing → lead');
    expect(lines[2]).toMatch(new RegExp(`^└─ researcher \\(call c1\\) · sub-agent · completed +${escape(`${id}/researcher-c1`)}$`));
    expect(lines[3]).toMatch(new RegExp(`^   └─ analyst \\(call a1\\) · sub-agent · completed +${escape(`${id}/researcher-c1/analyst-a1`)}$`));
    // The workflow IDs line up.
    expect(lines[2]!.indexOf(`${id}/`)).toBe(lines[3]!.indexOf(`${id}/`));

    const json = await keel(['tree', id, '--json']);
    expect(json.code).toBe(0);
    const tree = JSON.parse(json.stdout) as RunTree;
    expect(tree).toMatchObject({
      workflowId: id,
      kind: 'run',
      status: 'completed',
      handoffs: [
        { from: 'lead', to: 'billing', callId: 'h1' },
        { from: 'billing', to: 'lead', callId: 'h2' },
      ],
      children: [{ workflowId: `${id}/researcher-c1`, callId: 'c1', children: [{ workflowId: `${id}/researcher-c1/analyst-a1`, callId: 'a1', status: 'completed' }] }],
    });
    expect(typeof tree.startTime).toBe('string');
  });

  it('an unknown workflow ID: a clear error, exit 1', async () => {
    const result = await keel(['tree', 'no-such-run-7f3a']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim()).toBe('No run with workflow ID "no-such-run-7f3a" (list recent runs with: keel list).');
    await expect(t.keel.client.tree('no-such-run-7f3a')).rejects.toThrow(expect.objectContaining({ name: 'WorkflowNotFoundError' }));
  });

  it('finds the children that earlier executions of a run that continued as new started', async () => {
    t.server.reset();
    t.server.script('lead-model', [
      { toolCalls: [{ id: 'c1', name: 'researcher', arguments: { input: 'one' } }] },
      { toolCalls: [{ id: 'c2', name: 'researcher', arguments: { input: 'two' } }] },
      { text: 'both done' },
    ]);
    t.server.script('researcher-model', [{ text: 'one done' }, { text: 'two done' }]);
    const run = await t.keel.client.start('lead', 'Ask twice.', { options: { continueAsNewAfterEvents: 12 } });
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'both done' });
    expect((await run.events()).filter((e) => e.type === 'run.continued').length).toBeGreaterThanOrEqual(1);
    // The first child's parent is an earlier execution of the chain.
    const first = await t.keel.env.client.workflow.getHandle(`${run.workflowId}/researcher-c1`).describe();
    expect(first.parentExecution?.runId).not.toBe((await run.describe()).runId);

    const tree = await run.tree();
    expect(tree.children.map((c) => [c.workflowId, c.callId, c.status])).toEqual([
      [`${run.workflowId}/researcher-c1`, 'c1', 'completed'],
      [`${run.workflowId}/researcher-c2`, 'c2', 'completed'],
    ]);
  });

  it('shows a live run: a sub-agent waiting for approval, and the run waiting on it', async () => {
    t.server.reset();
    t.server.script('lead-model', [{ toolCalls: [{ id: 'w1', name: 'writer', arguments: { input: 'Publish a note.' } }] }, { text: 'Published.' }]);
    t.server.script('writer-model', [{ toolCalls: [{ id: 'p1', name: 'publish', arguments: { text: 'hello' } }] }, { text: 'done' }]);
    const run = await t.keel.client.start('lead', 'Publish a note.');
    const waiting = await until(
      () => run.tree(),
      (tr) => tr.children[0]?.status === 'awaiting_approval',
    );
    expect(waiting.children.map((c) => [c.workflowId, c.kind, c.callId, c.status])).toEqual([[`${run.workflowId}/writer-w1`, 'sub-agent', 'w1', 'awaiting_approval']]);
    expect(['running', 'awaiting_approval']).toContain(waiting.status);
    const text = await keel(['tree', run.workflowId]);
    expect(text.stdout).toMatch(/└─ writer \(call w1\) · sub-agent · awaiting_approval +\S+\/writer-w1\n/);

    await run.approve('p1');
    await run.result();
    expect((await run.tree()).children.map((c) => c.status)).toEqual(['completed']);
  });

  it('with no worker to answer its events, the children come from visibility and say so', async () => {
    // A worker of its own, stopped once the run is done: nobody answers the run's queries.
    const own = await startKeel({ agents, providers: providersFor(t.server) });
    let workflowId: string;
    try {
      scriptTeam(t.server);
      const run = await own.client.start('lead', 'Was invoice A7 paid?');
      await run.result();
      workflowId = run.workflowId;
    } finally {
      await own.stop();
    }
    const tree = await until(
      () => t.keel.client.tree(workflowId, { queryTimeoutMs: 1_000 }),
      (tr) => tr.children[0]?.children.length === 1,
    );
    expect(shape(tree)).toMatchObject({
      status: 'completed',
      handoffs: [],
      children: [
        {
          workflowId: `${workflowId}/researcher-c1`,
          kind: 'sub-agent',
          callId: 'c1',
          status: 'completed',
          children: [{ workflowId: `${workflowId}/researcher-c1/analyst-a1`, kind: 'sub-agent', callId: 'a1', status: 'completed' }],
        },
      ],
    });
    expect(tree.problems).toEqual(['events unread (no worker answered): handoffs unknown, children from visibility only']);
    const text = await keel(['tree', workflowId]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('├─ ! events unread (no worker answered): handoffs unknown, children from visibility only\n');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
