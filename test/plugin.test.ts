/**
 * keel as a Temporal worker plugin: one worker runs a user's own workflow and activity beside
 * keel's agents; keel's names cannot be overridden by accident.
 */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../src/client/agent-client.js';
import { defineAgent } from '../src/core/define.js';
import { keelPlugin } from '../src/plugin.js';
import { providersFor, TEMPORAL_ADDRESS } from './support/keel.js';
import { startModelServer, type ModelServer } from './support/model-server.js';

const userWorkflows = fileURLToPath(new URL('./fixtures/plugin/workflows.ts', import.meta.url));
const helper = defineAgent({ name: 'plugin-helper', instructions: 'Answer briefly.', model: 'openai:plugin' });

let env: TestWorkflowEnvironment;
let server: ModelServer;
beforeAll(async () => {
  env = await TestWorkflowEnvironment.createFromExistingServer({ address: TEMPORAL_ADDRESS });
  server = await startModelServer();
});
afterAll(async () => {
  await server?.close();
  await env?.teardown();
});

describe('keelPlugin', () => {
  it("adds keel's agents to a worker that runs its own workflows and activities", async () => {
    const taskQueue = `plugin-${randomUUID().slice(0, 8)}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      namespace: 'default',
      taskQueue,
      workflowsPath: userWorkflows,
      activities: { shout: async (text: string) => text.toUpperCase() },
      plugins: [keelPlugin({ agents: [helper], providers: providersFor(server) })],
    });
    server.script('plugin', [{ text: 'Four.' }]);
    const client = new AgentClient({ client: env.client, taskQueue });
    await worker.runUntil(async () => {
      const greeting = await env.client.workflow.execute('greet', { taskQueue, workflowId: `greet-${randomUUID()}`, args: ['keel'] });
      expect(greeting).toBe('HELLO KEEL');
      const run = await client.start('plugin-helper', 'What is 2 + 2?');
      expect(await run.result()).toMatchObject({ status: 'completed', output: 'Four.' });
    });
  });

  it("refuses an activity named like one of keel's, rather than overriding either", async () => {
    await expect(
      Worker.create({
        connection: env.nativeConnection,
        taskQueue: 'never-polled',
        workflowsPath: userWorkflows,
        activities: { modelTurn: async () => 'mine' },
        plugins: [keelPlugin({ agents: [helper], providers: providersFor(server) })],
      }),
    ).rejects.toThrow(/activities named like keel's: modelTurn/);
  });

  it('refuses a payload converter of the worker that is not composed with keel’s', async () => {
    await expect(
      Worker.create({
        connection: env.nativeConnection,
        taskQueue: 'never-polled',
        workflowsPath: userWorkflows,
        dataConverter: { payloadConverterPath: userWorkflows },
        plugins: [keelPlugin({ agents: [helper], providers: providersFor(server) })],
      }),
    ).rejects.toThrow(/payload converter of its own .*tolerantPayloadConverter/);
  });
});
