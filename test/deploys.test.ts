/**
 * One run, one spec: a run in flight keeps talking to the agent it started with, whatever a
 * deploy changes. And a change to the workflow code made without `patched()` fails to replay
 * the runs recorded before it, which is what the README's section on safe changes is about.
 */
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/core/define.js';
import { keelBundleOptions } from '../src/worker.js';
import { providersFor, startKeel, workflowBundle, type Keel } from './support/keel.js';
import { startModelServer, type ModelServer } from './support/model-server.js';
import { quietLogger } from './support/quiet-logger.js';
import { until } from './support/until.js';

let server: ModelServer;
beforeAll(async () => {
  server = await startModelServer();
});
afterAll(() => server?.close());

let release: () => void = () => undefined;
let lookupStarted = false;

const lookup = defineTool({
  name: 'lookup',
  description: 'Look something up.',
  input: z.object({ q: z.string() }),
  execute: async ({ q }) => {
    lookupStarted = true;
    await new Promise<void>((resolve) => (release = resolve));
    return `found ${q}`;
  },
});
const search = defineTool({ name: 'search', description: 'Search.', input: z.object({ q: z.string() }), execute: () => 'nothing' });

const v1 = defineAgent({
  name: 'pinned',
  instructions: 'You are version one.',
  model: 'openai:pinned',
  tools: [lookup],
  output: z.object({ answer: z.string() }),
});
// The same agent after a deploy: other instructions, another tool, no output schema.
const v2 = defineAgent({ name: 'pinned', instructions: 'You are version two.', model: 'openai:pinned', tools: [search] });

describe('a deploy while a run is in flight', () => {
  it('leaves the run with the spec it recorded: instructions, tools and output schema', async () => {
    server.script('pinned', [
      { toolCalls: [{ name: 'lookup', arguments: { q: 'keel' } }] },
      { text: '{"answer": 42}' },
      { text: '{"answer": "forty-two"}' },
    ]);
    const taskQueue = `deploy-${randomUUID().slice(0, 8)}`;
    const before: Keel = await startKeel({
      agents: [v1],
      providers: providersFor(server),
      taskQueue,
      workerOptions: { stickyQueueScheduleToStartTimeout: '1s' },
    });
    const run = await before.client.start(v1, 'What is the answer?');
    await until(() => lookupStarted, Boolean, { what: 'the lookup to start', intervalMs: 50 });
    // The old worker stops taking work, finishes its tool call, and goes.
    const stopped = before.stop();
    release();
    await stopped;

    const after = await startKeel({ agents: [v2], providers: providersFor(server), taskQueue });
    try {
      const handle = after.client.getHandle<{ answer: string }>(run.workflowId);
      const result = await handle.result();
      // Checked against the recorded schema, though the new worker's agent has none: 42 was refused.
      expect(result).toMatchObject({ status: 'completed', output: { answer: 'forty-two' }, turns: 3 });
      const requests = server.requests('pinned');
      expect(requests).toHaveLength(3);
      for (const request of requests.slice(1)) {
        expect(request.body.messages[0]).toEqual({ role: 'system', content: 'You are version one.' });
        expect(request.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['lookup']);
        expect(request.body.response_format.json_schema.schema.required).toEqual(['answer']);
      }
      const invalid = (await handle.events()).filter((e) => e.type === 'output.invalid');
      expect(invalid).toEqual([expect.objectContaining({ turn: 2, error: expect.stringMatching(/answer/) })]);
      // A new run gets the new agent.
      server.script('pinned', [{ text: 'I am version two.' }]);
      const fresh = await after.client.start(v2, 'Who are you?');
      expect((await fresh.result()).output).toBe('I am version two.');
      expect(server.requests('pinned').at(-1)!.body.messages[0].content).toBe('You are version two.');
    } finally {
      await after.stop();
    }
  });

  it('rejects a run started with a `continued` state from outside', async () => {
    const keel = await startKeel({ agents: [v2], providers: providersFor(server) });
    try {
      const handle = await keel.env.client.workflow.start('agentRun', {
        taskQueue: keel.taskQueue,
        workflowId: `forged-${randomUUID().slice(0, 8)}`,
        args: [{ agent: 'pinned', input: 'hi', continued: { agent: 'pinned', specs: [], messages: 0, lastSeq: 0, turns: 0 } }],
      });
      await expect(handle.result()).rejects.toMatchObject({
        cause: { message: expect.stringMatching(/"continued" is set by keel when a run continues as new, never by a caller/) },
      });
    } finally {
      await keel.stop();
    }
  });
});

describe('changing the workflow code', () => {
  const FIXTURE = fileURLToPath(new URL('./fixtures/histories/v0.1/replay-tools.json', import.meta.url));
  const WRONG = fileURLToPath(new URL('./fixtures/wrong-change/patches.ts', import.meta.url));
  const sinks = { conversation: { append: { fn: () => undefined }, continued: { fn: () => undefined } } };
  const history = () => historyFromJSON(JSON.parse(readFileSync(FIXTURE, 'utf8')));

  it('with patched(), runs recorded before the change replay', async () => {
    await expect(
      Worker.runReplayHistory({ workflowBundle: await workflowBundle(), sinks }, history(), 'recorded-by-v0.1'),
    ).resolves.toBeUndefined();
  });

  it('without patched(), the same change breaks the replay of runs recorded before it', async () => {
    // The same workflow code, with the patched branch taken unconditionally.
    const wrong = await bundleWorkflowCode({
      ...keelBundleOptions,
      logger: quietLogger,
      webpackConfigHook: (config) => {
        config.plugins = [...(config.plugins ?? []), swapModule('./patches.js', WRONG)];
        return config;
      },
    });
    await expect(Worker.runReplayHistory({ workflowBundle: wrong, sinks }, history(), 'recorded-by-v0.1')).rejects.toThrow(
      /[Nn]ondeterminism|DeterminismViolation/,
    );
  }, 120_000);
});

/** A webpack plugin that resolves `request` from keel's workflow directory to `replacement`. */
function swapModule(request: string, replacement: string) {
  return {
    apply(compiler: { hooks: { normalModuleFactory: { tap(name: string, fn: (factory: NormalModuleFactory) => void): void } } }) {
      compiler.hooks.normalModuleFactory.tap('keel-swap-module', (factory) => {
        factory.hooks.beforeResolve.tap('keel-swap-module', (data) => {
          if (data.request === request && /src[\\/]workflows$/.test(data.context)) data.request = replacement;
        });
      });
    },
  };
}

interface NormalModuleFactory {
  hooks: { beforeResolve: { tap(name: string, fn: (data: { request: string; context: string }) => void): void } };
}
