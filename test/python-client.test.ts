/**
 * keel from another language, with nothing but its contract files: a Python `temporalio`
 * client (examples/python/run_and_approve.py) starts an agentRun of an agent that needs
 * approval, waits for the call on the status query, approves it by the `approve` Update and
 * reads the result and the events, checking every payload against contract/*.schema.json.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/core/define.js';
import { TEMPORAL_ADDRESS, useKeel } from './support/keel.js';
import { pythonWithTemporal } from './support/python.js';

const ROOT = join(import.meta.dirname, '..');
const deployed: string[] = [];

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploy the service to an environment.',
  input: z.object({ env: z.enum(['staging', 'prod']) }),
  requiresApproval: true,
  execute: ({ env }, ctx) => {
    deployed.push(`${ctx.workflowId} ${env}`);
    return `deployed to ${env}`;
  },
});

const deployer = defineAgent({ name: 'py-deployer', instructions: 'You deploy.', model: 'openai:py', tools: [deploy] });

const t = useKeel([deployer]);
let python: string;

beforeAll(() => {
  python = pythonWithTemporal();
}, 300_000);

describe('a Python client', () => {
  it('starts, approves and reads a run from the contract files alone', async () => {
    const model = `py-${randomUUID().slice(0, 8)}`;
    t.server.script(model, [{ toolCalls: [{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }] }, { text: 'Deployed to prod.' }]);
    const workflowId = `py-${randomUUID()}`;
    const { stdout } = await promisify(execFile)(
      python,
      [
        join(ROOT, 'examples/python/run_and_approve.py'),
        ...['--contract', join(ROOT, 'contract'), '--address', TEMPORAL_ADDRESS, '--task-queue', t.keel.taskQueue],
        ...['--agent', 'py-deployer', '--prompt', 'Ship it.', '--model', `openai:${model}`, '--workflow-id', workflowId],
      ],
      { timeout: 120_000 },
    );
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(out).toMatchObject({
      workflowId,
      pending: { callId: 'd1', tool: 'deploy', arguments: { env: 'prod' }, stage: 'tool' },
      receipt: { callId: 'd1', decision: 'allow', pending: 0 },
      result: { status: 'completed', output: 'Deployed to prod.', turns: 2, agent: 'py-deployer' },
      decided: [{ callId: 'd1', decision: 'allow', by: 'update', reason: 'approved from Python' }],
    });
    // Input, every status answer, the decision, the receipt, the result and the events page.
    expect(out.validated).toBeGreaterThanOrEqual(6);
    expect(out.eventTypes).toEqual(expect.arrayContaining(['run.started', 'approval.requested', 'approval.decided', 'tool.finished', 'run.finished']));
    expect(deployed).toEqual([`${workflowId} prod`]);
    // The TypeScript client reads the same run.
    expect((await t.keel.client.getHandle(workflowId).result()).output).toBe('Deployed to prod.');
  });
});
