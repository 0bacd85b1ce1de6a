/**
 * createWorker's own parts: where its workflow code comes from, and runUntil. (The package test
 * runs the compiled worker from node_modules; here it runs from the sources.)
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AgentClient } from '../src/client/agent-client.js';
import { createWorker, workflowsPath } from '../src/worker.js';
import { demo } from '../examples/demo.js';
import { TEMPORAL_ADDRESS, allowPostcards, workflowBundle } from './support/keel.js';

describe('createWorker', () => {
  it('bundles the TypeScript workflow code when keel runs from its sources', () => {
    expect(workflowsPath).toBe(fileURLToPath(new URL('../src/workflows/index.ts', import.meta.url)));
  });

  it('runUntil runs the worker until the function settles, returns its value, then stops', async () => {
    const taskQueue = `worker-until-${randomUUID().slice(0, 8)}`;
    const worker = await createWorker({
      agents: [demo],
      taskQueue,
      connection: { address: TEMPORAL_ADDRESS },
      workflowBundle: await workflowBundle(),
      // The demo's postcard needs approval: this worker's approver allows it.
      approver: allowPostcards,
    });
    const client = await AgentClient.connect({ address: TEMPORAL_ADDRESS, taskQueue });
    try {
      const result = await worker.runUntil(async () => (await client.start(demo, 'Weather in Paris?')).result());
      expect(result).toMatchObject({ status: 'completed', agent: 'demo', turns: 3 });
      expect(worker.worker.getState()).toBe('STOPPED');
    } finally {
      await client.close();
    }
  });

  it('runUntil rejects with the error of the function, and the worker stops all the same', async () => {
    const worker = await createWorker({
      agents: [demo],
      taskQueue: `worker-until-${randomUUID().slice(0, 8)}`,
      connection: { address: TEMPORAL_ADDRESS },
      workflowBundle: await workflowBundle(),
    });
    await expect(worker.runUntil(Promise.reject(new Error('the caller gave up')))).rejects.toThrow('the caller gave up');
    expect(worker.worker.getState()).toBe('STOPPED');
  });
});
