import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client } from '@temporalio/client';
import { AgentClient } from '../src/client/agent-client.js';
import { defineAgent, defineTool } from '../src/core/define.js';
import { demo } from '../examples/demo.js';
import { TEMPORAL_ADDRESS, useKeel } from './support/keel.js';
import { until } from './support/until.js';

const root = fileURLToPath(new URL('..', import.meta.url));

const note = defineTool({
  name: 'note',
  description: 'Take a note.',
  input: z.object({ text: z.string() }),
  execute: ({ text }) => `noted: ${text}`,
});

const agents = [
  demo,
  defineAgent({ name: 'long', instructions: 'Take notes.', model: 'openai:life-long', tools: [note], maxTurns: 50 }),
];

const t = useKeel(agents);

describe('a long run', () => {
  it('continues as new, keeps its workflow ID, and the client follows the chain', async () => {
    t.server.script('life-long', (request) => {
      const done = request.body.messages.filter((m: { role: string }) => m.role === 'tool').length;
      return done < 12 ? { toolCalls: [{ id: `n${done}`, name: 'note', arguments: { text: `n${done}` } }] } : { text: 'twelve notes' };
    });
    const run = await t.keel.client.start('long', 'Take twelve notes.', { options: { continueAsNewAfterEvents: 40 } });
    const firstRunId = (await run.workflow.describe()).runId;
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'twelve notes', turns: 13 });

    const latest = await run.workflow.describe();
    expect(latest.runId).not.toBe(firstRunId);
    expect(latest.workflowId).toBe(run.workflowId);
    // The whole story is there on the latest run: messages and events carried across.
    expect(await run.transcript()).toHaveLength(1 + 12 * 2 + 1);
    const events = await run.events();
    expect(events.filter((e) => e.type === 'run.continued').length).toBeGreaterThanOrEqual(2);
    expect(events.filter((e) => e.type === 'turn.started')).toHaveLength(13);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(await run.describe()).toMatchObject({ status: 'completed', agent: 'long' });
    // Listed once, by its latest execution. (Visibility is eventually consistent: wait for it.)
    const listed = await until(
      async () => (await t.keel.client.list({ agent: 'long', limit: 50 })).filter((r) => r.workflowId === run.workflowId),
      (runs) => runs[0]?.status === 'completed',
      { what: 'the run listed as completed' },
    );
    expect(listed).toEqual([expect.objectContaining({ runId: latest.runId, status: 'completed' })]);
    // The model saw the whole conversation in every execution of the chain.
    expect(t.server.requests('life-long').at(-1)!.body.messages).toHaveLength(1 + 1 + 12 * 2);
  });
});

describe('a run started by any Temporal client', () => {
  it('takes plain JSON input and gives a plain JSON result (the temporal CLI)', async () => {
    const temporal = execFileSync('./temporal-dev.sh', ['path'], { cwd: root, encoding: 'utf8' }).trim();
    // Asynchronously: the worker that runs the workflow lives in this process.
    const cli = async (...args: string[]) =>
      (await promisify(execFile)(temporal, [...args, '--address', TEMPORAL_ADDRESS, '--output', 'json'])).stdout;
    const workflowId = `demo-cli-${Date.now()}`;
    await cli('workflow', 'start', '--type', 'agentRun', '--task-queue', t.keel.taskQueue, '--workflow-id', workflowId,
      '--input', JSON.stringify({ agent: 'demo', input: 'Weather in Paris?' }));
    // The demo's postcard needs approval: the run says so in its status query, and takes the plain
    // `approve` Signal from any client.
    type Pending = { callId: string; tool: string }[];
    const pending = await until(
      async () => (JSON.parse(await cli('workflow', 'query', '--workflow-id', workflowId, '--name', 'status')) as { queryResult: [{ pending?: Pending }] }).queryResult[0].pending ?? [],
      (calls) => calls.length > 0,
      { what: 'a call waiting for approval', intervalMs: 250 },
    );
    expect(pending).toEqual([expect.objectContaining({ callId: 'demo_postcard', tool: 'send_postcard' })]);
    await cli('workflow', 'signal', '--workflow-id', workflowId, '--name', 'approve', '--input', JSON.stringify({ callId: 'demo_postcard', decision: 'allow' }));
    const result = JSON.parse(await cli('workflow', 'result', '--workflow-id', workflowId));
    expect(result.status).toBe('COMPLETED');
    expect(result.result).toMatchObject({ status: 'completed', agent: 'demo', turns: 3 });
    expect(result.result.output).toMatch(/Postcard sent/);
    expect(result.result.output).toMatch(/Paris/);
    // It set its own search attributes, since the CLI did not.
    const described = JSON.parse(await cli('workflow', 'describe', '--workflow-id', workflowId));
    expect(JSON.stringify(described)).toMatch(/KeelStatus/);
  });

  it('rejects bad input with an error that says what was expected', async () => {
    const handle = await t.keel.env.client.workflow.start('agentRun', {
      taskQueue: t.keel.taskQueue,
      workflowId: `bad-input-${Date.now()}`,
      args: [{ agnet: 'demo' }],
    });
    await expect(handle.result()).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/"agent" must be a non-empty string.*Expected \{"agent"/) },
    });
  });
});

describe('a namespace without keel’s search attributes', () => {
  it('gets a start error that says how to register them', async () => {
    const temporal = execFileSync('./temporal-dev.sh', ['path'], { cwd: root, encoding: 'utf8' }).trim();
    const namespace = `bare-${Date.now()}`;
    await promisify(execFile)(temporal, ['operator', 'namespace', 'create', '--namespace', namespace, '--address', TEMPORAL_ADDRESS]);
    const client = new AgentClient({ client: new Client({ connection: t.keel.env.connection, namespace }) });
    // A new namespace takes a moment to reach every service of the dev server.
    const failure = await until(
      () => client.start('demo', 'hi').catch((e: unknown) => e),
      (e) => !/namespace.*not found/i.test((e as Error)?.message ?? ''),
      { what: 'the namespace to be known', intervalMs: 250 },
    );
    expect((failure as Error).message).toMatch(
      /does not know keel's search attributes[\s\S]*temporal operator search-attribute create --namespace bare-\d+ --name KeelAgent --type Keyword/,
    );
  });
});
