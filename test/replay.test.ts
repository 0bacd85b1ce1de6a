/**
 * Replay guards determinism: histories of real runs must replay against the current workflow
 * code. Fresh histories are recorded here; a few are kept in test/fixtures/histories (this
 * version's) and in its subfolders (earlier versions': v0.1/), so a change that breaks the replay
 * of runs recorded by an earlier version fails this test. KEEL_RECORD_FIXTURES=1 writes the fresh
 * ones (keep the earlier version's in a subfolder first: they are what guards running runs).
 */
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/core/define.js';
import { historyOf, type History } from './support/history.js';
import { useKeel, workflowBundle } from './support/keel.js';
import { until } from './support/until.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/histories/', import.meta.url));

const lookup = defineTool({
  name: 'lookup',
  description: 'Look a word up.',
  input: z.object({ word: z.string() }),
  readOnly: true,
  execute: ({ word }) => `${word}: a word`,
});
const fail = defineTool({
  name: 'fail',
  description: 'Always fails.',
  input: z.object({}),
  execute: () => {
    throw new Error('it failed');
  },
});

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploy.',
  input: z.object({ env: z.string() }),
  requiresApproval: true,
  execute: ({ env }) => `deployed ${env}`,
});
const helper = defineAgent({ name: 'replay-helper', instructions: 'Help.', model: 'openai:replay-helper' });

const agents = [
  defineAgent({ name: 'replay-tools', instructions: 'Look words up.', model: 'openai:replay-tools', tools: [lookup, fail] }),
  defineAgent({
    name: 'replay-output',
    instructions: 'Answer in JSON.',
    model: 'anthropic:replay-output',
    output: z.object({ answer: z.string() }),
  }),
  defineAgent({ name: 'replay-continued', instructions: 'Look words up.', model: 'openai:replay-continued', tools: [lookup], maxTurns: 20 }),
  // Approval by Update, a permission rule, a handoff and a sub-agent: the commands of this version's pipeline.
  defineAgent({
    name: 'replay-team',
    instructions: 'Deploy, then hand off.',
    model: 'openai:replay-team',
    tools: [deploy, lookup],
    permissions: { deny: ['lookup(secret)'] },
    handoffs: [helper],
    subAgents: [helper],
  }),
];

const t = useKeel([...agents, helper]);

async function replay(histories: { workflowId: string; history: History }[]) {
  const results = [];
  // The conversation sink is never called on replay, but the replayer wants to know it.
  const sinks = { conversation: { append: { fn: () => undefined }, continued: { fn: () => undefined } } };
  for await (const result of Worker.runReplayHistories({ workflowBundle: await workflowBundle(), sinks }, histories)) {
    results.push({ workflowId: result.workflowId, error: result.error?.message });
  }
  return results;
}

describe('replay', () => {
  it('replays the histories of fresh runs without non-determinism', async () => {
    t.server.script('replay-tools', [
      {
        toolCalls: [
          { id: 'a', name: 'lookup', arguments: { word: 'keel' } },
          { id: 'b', name: 'lookup', arguments: { word: 'hull' } },
          { id: 'c', name: 'fail', arguments: {} },
          { id: 'd', name: 'lookup', arguments: '{"word":' },
        ],
      },
      { text: 'keel and hull are words.' },
    ]);
    t.server.script('replay-output', [{ text: 'not json' }, { text: '{"answer": "42"}' }]);
    t.server.script('replay-continued', (request) => {
      const done = request.body.messages.filter((m: { role: string }) => m.role === 'tool').length;
      return done < 6 ? { toolCalls: [{ id: `t${done}`, name: 'lookup', arguments: { word: `w${done}` } }] } : { text: 'six words' };
    });

    t.server.script('replay-team', [
      { toolCalls: [{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }, { id: 'l1', name: 'lookup', arguments: { word: 'x' } }] },
      { toolCalls: [{ id: 's1', name: 'replay-helper', arguments: { input: 'Say hi.' } }] },
      { toolCalls: [{ id: 'h1', name: 'transfer_to_replay-helper', arguments: {} }] },
    ]);
    t.server.script('replay-helper', [{ text: 'hi' }, { text: 'handled' }]);
    // A fixed ID: its children's IDs derive from it, and the stored fixture replays under it.
    const team = await t.keel.client.start('replay-team', 'Deploy.', { workflowId: 'replay-team' });
    await until(() => team.pending(), (pending) => pending.length > 0, { what: 'the deploy to wait for approval', retryErrors: true, intervalMs: 100 });
    await team.approve('d1');

    const runs = await Promise.all([
      t.keel.client.start('replay-tools', 'Look up keel and hull.'),
      t.keel.client.start('replay-output', 'What is the answer?'),
      // Continues as new every few turns: the last run of the chain replays from its carried state.
      t.keel.client.start('replay-continued', 'Look up six words.', { options: { continueAsNewAfterEvents: 20 } }),
    ]);
    runs.push(team);
    for (const run of runs) await run.result();
    const histories = await Promise.all(runs.map(async (run) => ({ workflowId: run.workflowId, history: await historyOf(run) })));

    expect(await replay(histories)).toEqual(histories.map((h) => ({ workflowId: h.workflowId, error: undefined })));

    if (process.env.KEEL_RECORD_FIXTURES) {
      mkdirSync(FIXTURES, { recursive: true });
      for (const [i, { history }] of histories.entries()) {
        writeFileSync(`${FIXTURES}${agents[i]!.name}.json`, historyToJSON(history));
      }
    }
  });

  it.each(['', 'v0.2/', 'v0.1/'])('replays the stored fixtures in histories/%s', async (folder) => {
    const files = readdirSync(`${FIXTURES}${folder}`).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThanOrEqual(3);
    const histories = files.map((file) => ({
      // The file's name is the run's workflow ID (a sub-agent's ID derives from it).
      workflowId: file.replace(/\.json$/, ''),
      history: historyFromJSON(JSON.parse(readFileSync(`${FIXTURES}${folder}${file}`, 'utf8'))),
    }));
    expect(await replay(histories)).toEqual(histories.map((h) => ({ workflowId: h.workflowId, error: undefined })));
  });
});
