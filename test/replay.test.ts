/**
 * Replay guards determinism: histories of real runs must replay against the current workflow
 * code. Fresh histories are recorded here; a few are kept in test/fixtures/histories (this
 * version's) and in its subfolders (earlier versions': v0.1/), so a change that breaks the replay
 * of runs recorded by an earlier version fails this test. KEEL_RECORD_FIXTURES=1 writes the fresh
 * ones (keep the earlier version's in a subfolder first: they are what guards running runs);
 * `-t` picks which test records, e.g. `-t monitors` for the monitors' and background agents' only.
 *
 * A fixture's file name is its run's workflow ID, URL-encoded (a background agent's ID holds a
 * `/`), and `~<label>` when it is another execution of a chain than its last (`~first`).
 */
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/core/define.js';
import { injectSignal } from '../src/workflows/api.js';
import { historyOf, type History } from './support/history.js';
import { useKeel, workflowBundle } from './support/keel.js';
import type { RecordedRequest, ScriptStep } from './support/model-server.js';
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

// Monitors and background agents: every kind of workflow keel runs has a fixture.
const gauge = defineTool({
  name: 'read_gauge',
  description: 'Read the pressure gauge.',
  input: z.object({}),
  readOnly: true,
  execute: () => 'pressure 9.5 bar (high)',
});
const fast = { retry: { initialInterval: '50ms', maximumInterval: '200ms' } };
const watcher = defineAgent({ name: 'replay-watcher', instructions: 'Watch a gauge.', model: 'openai:replay-watcher', modelSettings: fast, tools: [gauge] });
const monitors = [
  defineAgent({ name: 'replay-monitor', instructions: 'Watch the disk.', model: 'openai:replay-monitor', modelSettings: fast }),
  defineAgent({ name: 'replay-overseer', instructions: 'Oversee watchers.', model: 'openai:replay-overseer', modelSettings: fast, background: { agent: watcher } }),
  defineAgent({ name: 'replay-spawner', instructions: 'Start a watcher and leave.', model: 'openai:replay-spawner', modelSettings: fast, background: { agent: watcher } }),
  watcher,
];

const sessionAgent = defineAgent({ name: 'replay-session', instructions: 'Chat.', model: 'openai:replay-session', modelSettings: fast, tools: [deploy], handoffs: [helper] });

// Client tools: one call a client answers, one that times out.
const pickFile = defineTool({ name: 'pick_file', description: 'Ask the user to pick a file.', input: z.object({ prompt: z.string() }), runsOn: 'client', timeout: '1s' });
const readFile = defineTool({ name: 'read_file', description: "Read a file on the user's machine.", input: z.object({ path: z.string() }), runsOn: 'client' });
const clientAgent = defineAgent({ name: 'replay-client', instructions: 'Read files.', model: 'openai:replay-client', modelSettings: fast, tools: [pickFile, readFile] });

// The run's state: written by a tool and by a sub-agent, read by instructions evaluated again, carried across continue-as-new.
const note = defineTool({
  name: 'note',
  description: 'Note a word in the state.',
  input: z.object({ word: z.string() }),
  execute: ({ word }, ctx) => {
    ctx.state.set('words', [...(ctx.state.get<string[]>('words') ?? []), word]);
    return `noted ${word}`;
  },
});
const stateHelper = defineAgent({ name: 'replay-state-helper', instructions: 'Note for {owner}.', model: 'openai:replay-state-helper', modelSettings: fast, tools: [note] });
const stateful = defineAgent({
  name: 'replay-state',
  instructions: ({ state }) => `Words so far: ${(state.get<string[]>('words') ?? []).join(', ') || 'none'}.`,
  model: 'openai:replay-state',
  modelSettings: fast,
  tools: [note],
  subAgents: [stateHelper],
  maxTurns: 20,
});

// A streamed run: deltas by signal, polls by Update, continue-as-new with the stream's state.
const streamed = defineAgent({ name: 'replay-streamed', instructions: 'Look words up.', model: 'openai:replay-streamed', modelSettings: fast, tools: [lookup] });

const t = useKeel([...agents, helper, ...monitors, sessionAgent, clientAgent, stateHelper, stateful, streamed]);

/** The workflow ID a fixture file replays under (see the file's comment). */
const workflowIdOf = (file: string) => decodeURIComponent(file.replace(/(~[^~]*)?\.json$/, ''));
const fileOf = (workflowId: string, label?: string) => `${encodeURIComponent(workflowId)}${label ? `~${label}` : ''}.json`;

const scheduleCall = (seconds: number, nextPrompt: string) => ({
  name: 'schedule_next_turn',
  arguments: { delay_seconds: seconds, next_prompt: nextPrompt, reason: `wait for ${nextPrompt}` },
});
const schedule = (seconds: number, nextPrompt: string): ScriptStep => ({ toolCalls: [scheduleCall(seconds, nextPrompt)] });
const done = (detail: string): ScriptStep => ({ toolCalls: [{ name: 'report_done', arguments: { detail } }] });
/** The prompt of a new turn, or undefined when the request follows a tool result. */
const turnPrompt = (r: RecordedRequest): string | undefined => {
  const last = (r.body.messages as { role: string; content: unknown }[]).at(-1);
  return last?.role === 'user' ? JSON.stringify(last.content) : undefined;
};

async function replay(histories: { workflowId: string; history: History }[]) {
  const results = [];
  // The conversation sink is never called on replay, but the replayer wants to know it.
  const sinks = { conversation: { append: { fn: () => undefined }, continued: { fn: () => undefined } } };
  for await (const result of Worker.runReplayHistories({ workflowBundle: await workflowBundle(), sinks }, histories)) {
    results.push({ workflowId: result.workflowId, error: result.error?.message });
  }
  return results;
}

/** The first execution of a chain, from the history of a later one. */
async function firstExecution(workflowId: string, history: History): Promise<string> {
  let runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
  if (!runId) throw new Error(`${workflowId} did not continue as new`);
  for (;;) {
    const previous = await t.keel.env.client.workflow.getHandle(workflowId, runId).fetchHistory();
    const before: string | null | undefined = previous.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    if (!before) return runId;
    runId = before;
  }
}

/** With KEEL_RECORD_FIXTURES=1, writes fresh histories as this version's fixtures. */
function record(histories: { file: string; history: History }[]): void {
  if (!process.env.KEEL_RECORD_FIXTURES) return;
  mkdirSync(FIXTURES, { recursive: true });
  for (const { file, history } of histories) writeFileSync(`${FIXTURES}${file}`, historyToJSON(history));
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

    record(histories.map(({ history }, i) => ({ file: `${agents[i]!.name}.json`, history })));
  });

  it('replays the history of a run whose client tools a client answered, one after its timeout', async () => {
    t.server.script('replay-client', [
      { toolCalls: [{ id: 'p1', name: 'pick_file', arguments: { prompt: 'Which file?' } }] },
      { toolCalls: [{ id: 'r1', name: 'read_file', arguments: { path: 'notes.txt' } }] },
      { text: 'Read it.' },
    ]);
    const run = await t.keel.client.start('replay-client', 'Read a file.', { workflowId: 'replay-client' });
    // pick_file waits for its timeout; read_file is answered.
    await until(() => run.clientToolCalls(), (calls) => calls.some((c) => c.callId === 'r1'), { retryErrors: true, what: 'read_file to wait for a client' });
    await run.sendClientToolResult({ callId: 'r1', output: 'contents of notes.txt' });
    await run.result();
    expect((await run.events()).filter((e) => e.type === 'tool.finished').map((e) => (e as { by?: string }).by)).toEqual(['timeout', 'client']);
    const histories = [{ workflowId: run.workflowId, history: await historyOf(run) }];
    expect(await replay(histories)).toEqual([{ workflowId: run.workflowId, error: undefined }]);
    record([{ file: 'replay-client.json', history: histories[0]!.history }]);
  });

  it('replays the histories of fresh monitors (asleep and woken, inject, continued) and background agents (spawn, report)', async () => {
    // Runs a previous recording left running would keep these fixed IDs taken.
    const ids = ['replay-monitor-timer', 'replay-monitor-inject', 'replay-monitor-continued', 'replay-overseer', 'replay-spawner'];
    await Promise.all(ids.map((id) => t.keel.env.client.workflow.getHandle(id).terminate('a new recording').catch(() => undefined)));

    // Asleep on its timer, woken by it; then done.
    t.server.script('replay-monitor', (request) => {
      const prompt = turnPrompt(request);
      if (prompt === undefined) return { text: 'Noted.' };
      if (prompt.includes('by signal')) return done('woken by a signal inject');
      if (prompt.includes('by update')) return schedule(3600, 'the next message');
      if (prompt.includes('check again')) return done('the disk is fine');
      if (prompt.includes('Watch the disk.')) return schedule(1, 'check again');
      if (prompt.includes('Watch for messages.')) return schedule(3600, 'a message');
      return { text: 'All quiet.' };
    });
    const timer = await t.keel.client.startMonitor('replay-monitor', 'Watch the disk.', { workflowId: 'replay-monitor-timer' });
    // Asleep for an hour, woken early by an inject through the Update, then through the Signal.
    const inject = await t.keel.client.startMonitor('replay-monitor', 'Watch for messages.', { workflowId: 'replay-monitor-inject' });
    await until(() => inject.status(), (s) => s.phase === 'sleeping' && s.turns === 1, { retryErrors: true });
    await inject.inject('a message by update');
    await until(() => inject.status(), (s) => s.phase === 'sleeping' && s.turns === 2);
    await inject.run.workflow.signal(injectSignal, { message: 'a message by signal' });
    // Continues as new after every turn: its first execution ends in the continue-as-new, its last restores the carried state.
    const continued = await t.keel.client.startMonitor('replay-monitor', 'Check often.', {
      workflowId: 'replay-monitor-continued',
      budgets: { maxTurns: 3 },
      options: { continueAsNewEveryTurns: 1 },
    });

    // A background agent: the overseer spawns a watcher and sleeps; the watcher's alert wakes it, and
    // it reads the alert at its next turn and sleeps again; then the watcher is told to finish, and its
    // end report wakes the overseer, which reads it and is done.
    t.server.script('replay-overseer', (request) => {
      const prompt = turnPrompt(request);
      if (prompt === undefined) return { text: 'Waiting for reports.' };
      if (prompt.includes('gauge (completed)')) return done('the gauge was high; the watcher is done');
      if (prompt.includes('gauge (alert)')) return schedule(3600, 'the end report');
      return { toolCalls: [{ id: 's1', name: 'spawn_agent', arguments: { name: 'gauge', goal: 'Watch the gauge; alert me when it is high.', tools: ['read_gauge'] } }, scheduleCall(3600, 'an alert')] };
    });
    t.server.script('replay-watcher', (request) => {
      if (JSON.stringify(request.body.messages).includes('Watch on.')) return schedule(3600, 'nothing');
      if (turnPrompt(request)?.includes('finish')) return done('watched; it was high');
      const results = request.body.messages.filter((m: { role: string }) => m.role === 'tool').length;
      if (results === 0) return { toolCalls: [{ id: 'g1', name: 'read_gauge', arguments: {} }] };
      if (results === 1) return { toolCalls: [{ id: 'a1', name: 'report_alert', arguments: { text: 'gauge high: 9.5 bar' } }] };
      return results === 2 ? schedule(3600, 'the next check') : { text: 'Alerted.' };
    });
    const overseer = await t.keel.client.startMonitor('replay-overseer', 'Keep the plant safe.', { workflowId: 'replay-overseer' });
    const child = t.keel.client.getMonitor('replay-overseer/gauge');
    await until(() => overseer.status(), (s) => s.phase === 'sleeping' && s.turns === 2, { retryErrors: true });
    await until(() => child.status(), (s) => s.phase === 'sleeping', { retryErrors: true });
    await child.inject('finish');
    // A plain run spawns a watcher and ends: its end cancels the watcher.
    t.server.script('replay-spawner', (request) =>
      turnPrompt(request) === undefined
        ? { text: 'Started a watcher; leaving.' }
        : { toolCalls: [{ id: 's1', name: 'spawn_agent', arguments: { name: 'stay', goal: 'Watch on.' } }] },
    );
    const spawner = await t.keel.client.start('replay-spawner', 'Start a watcher.', { workflowId: 'replay-spawner' });

    expect(await timer.result()).toMatchObject({ status: 'completed', detail: 'the disk is fine' });
    expect(await inject.result()).toMatchObject({ status: 'completed', detail: 'woken by a signal inject' });
    expect(await continued.result()).toMatchObject({ status: 'max_turns', turns: 3 });
    expect(await overseer.result()).toMatchObject({ status: 'completed' });
    expect(await spawner.result()).toMatchObject({ status: 'completed' });
    expect(await child.result()).toMatchObject({ status: 'completed', detail: 'watched; it was high' });
    const cancelled = t.keel.client.getMonitor('replay-spawner/stay');
    await expect(cancelled.result()).rejects.toThrow(/cancel/);

    // What the fixtures hold: the wakes, the reports read, the chain.
    const wakes = async (m: typeof timer) => (await m.events()).filter((e) => e.type === 'monitor.wake').map((e) => (e as { cause: string }).cause);
    expect(await wakes(timer)).toEqual(['timer']);
    expect(await wakes(inject)).toEqual(['inject', 'inject']);
    expect(await wakes(overseer)).toEqual(['wake', 'wake']);
    expect(await wakes(child)).toEqual(['inject']);
    const reports = (await overseer.events()).filter((e) => e.type === 'background.report').map((e) => (e as { kind: string }).kind);
    expect(reports).toEqual(['alert', 'completed']);

    const last = await historyOf(continued.run);
    const lastStart = last.events?.[0]?.workflowExecutionStartedEventAttributes;
    expect(lastStart?.continuedExecutionRunId).toBeTruthy();
    let firstRunId = lastStart!.continuedExecutionRunId!;
    for (;;) {
      const previous = await t.keel.env.client.workflow.getHandle('replay-monitor-continued', firstRunId).fetchHistory();
      const before = previous.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
      if (!before) break;
      firstRunId = before;
    }
    const first = await t.keel.env.client.workflow.getHandle('replay-monitor-continued', firstRunId).fetchHistory();

    const histories = [
      { workflowId: timer.workflowId, history: await historyOf(timer.run) },
      { workflowId: inject.workflowId, history: await historyOf(inject.run) },
      { workflowId: continued.workflowId, history: first, label: 'first' },
      { workflowId: continued.workflowId, history: last },
      { workflowId: overseer.workflowId, history: await historyOf(overseer.run) },
      { workflowId: child.workflowId, history: await historyOf(child.run) },
      { workflowId: spawner.workflowId, history: await historyOf(spawner) },
      { workflowId: cancelled.workflowId, history: await historyOf(cancelled.run) },
    ];
    expect(await replay(histories)).toEqual(histories.map((h) => ({ workflowId: h.workflowId, error: undefined })));
    record(histories.map(({ workflowId, history, label }) => ({ file: fileOf(workflowId, label), history })));
  });

  it('replays the histories of a fresh session (messages, an approval, a handoff, a failed run resumed, rewind, fork, clear, continue-as-new, end)', async () => {
    const ids = ['replay-session', 'replay-session-fork', 'replay-session-clear'];
    await Promise.all(ids.map((id) => t.keel.env.client.workflow.getHandle(id).terminate('a new recording').catch(() => undefined)));
    let down = false;
    t.server.script('replay-session', (request) => {
      const last = (request.body.messages as { role: string; content: unknown }[]).at(-1)!;
      const said = JSON.stringify(last.content);
      if (last.role !== 'user') return { text: 'done' };
      if (down) return { fault: 'status', status: 400 };
      if (said.includes('deploy')) return { toolCalls: [{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }] };
      if (said.includes('helper')) return { toolCalls: [{ id: 'h1', name: 'transfer_to_replay-helper', arguments: {} }] };
      return { text: `noted ${said.slice(1, 20)}` };
    });
    t.server.script('replay-helper', () => ({ text: 'helper here' }));
    const session = await t.keel.client.startSession('replay-session', { id: 'replay-session', state: { user: 'ada' }, options: { continueAsNewAfterEvents: 40 } });
    await session.send('hello');
    const deploying = session.send('please deploy');
    await until(() => session.status(), (s) => s.pending.length > 0, { what: 'the deploy to wait for approval', intervalMs: 100 });
    await session.run.approve('d1');
    await deploying;
    down = true;
    expect((await session.send('this fails')).status).toBe('failed');
    down = false;
    expect((await session.resume()).status).toBe('completed');
    await session.rewind('cp-3');
    await session.send('to the helper');
    await session.send('and on');
    const fork = await session.fork({ workflowId: 'replay-session-fork' });
    await until(() => fork.status(), (s) => s.messages > 0, { retryErrors: true });
    const cleared = await session.clear({ workflowId: 'replay-session-clear' });
    await until(() => cleared.status(), (s) => s.kind === 'session', { retryErrors: true });
    await fork.end('prompt_input_exit');
    await cleared.end('logout');
    await session.end('logout');

    const last = await historyOf(session.run);
    const firstRunId = await firstExecution('replay-session', last);
    const first = await t.keel.env.client.workflow.getHandle('replay-session', firstRunId).fetchHistory();
    const histories = [
      { workflowId: 'replay-session', history: first, label: 'first' },
      { workflowId: 'replay-session', history: last },
      { workflowId: 'replay-session-fork', history: await historyOf(fork.run) },
      { workflowId: 'replay-session-clear', history: await historyOf(cleared.run) },
    ];
    expect(await replay(histories)).toEqual(histories.map((h) => ({ workflowId: h.workflowId, error: undefined })));
    record(histories.map(({ workflowId, history, label }) => ({ file: fileOf(workflowId, label), history })));
  });

  it("replays the history of a run with state (a tool's writes, a sub-agent's, instructions of the state, continue-as-new)", async () => {
    await t.keel.env.client.workflow.getHandle('replay-state').terminate('a new recording').catch(() => undefined);
    t.server.script('replay-state-helper', [{ toolCalls: [{ id: 'h1', name: 'note', arguments: { word: 'helped' } }] }, { text: 'Noted.' }]);
    t.server.script('replay-state', (request) => {
      const done = request.body.messages.filter((m: { role: string }) => m.role === 'tool').length;
      if (done === 2) return { toolCalls: [{ id: 'sub', name: 'replay-state-helper', arguments: { input: 'Note a word.' } }] };
      return done < 5 ? { toolCalls: [{ id: `n${done}`, name: 'note', arguments: { word: `w${done}` } }] } : { text: 'five notes' };
    });
    const run = await t.keel.client.start('replay-state', 'Note words.', { workflowId: 'replay-state', state: { owner: 'ada' }, options: { continueAsNewAfterEvents: 30 } });
    expect(await run.result()).toMatchObject({ status: 'completed', state: { owner: 'ada', words: ['w0', 'w1', 'helped', 'w3', 'w4'] } });
    const child = t.keel.client.getHandle('replay-state/replay-state-helper-sub');
    const histories = [
      { workflowId: run.workflowId, history: await historyOf(run) },
      { workflowId: child.workflowId, history: await historyOf(child) },
    ];
    expect(await replay(histories)).toEqual(histories.map((h) => ({ workflowId: h.workflowId, error: undefined })));
    record(histories.map(({ workflowId, history }) => ({ file: fileOf(workflowId), history })));
  });

  it('replays the history of a streamed run, read by a subscriber, continued as new', async () => {
    t.server.script('replay-streamed', (request) => {
      const done = request.body.messages.filter((m: { role: string }) => m.role === 'tool').length;
      return done < 3
        ? { text: `Looking up w${done}. `, toolCalls: [{ id: `s${done}`, name: 'lookup', arguments: { word: `w${done}` } }], chunkDelayMs: 5 }
        : { text: 'three words, all looked up', chunkDelayMs: 5 };
    });
    const run = await t.keel.client.start('replay-streamed', 'Look up three words.', { workflowId: 'replay-streamed', stream: true, options: { continueAsNewAfterEvents: 40 } });
    const seen: string[] = [];
    for await (const chunk of run.stream()) seen.push(chunk.type);
    expect(seen.at(-1)).toBe('stream.end');
    expect((await run.result()).output).toBe('three words, all looked up');
    const history = await historyOf(run);
    expect(history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId).toBeTruthy();
    const signalled = (history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === '__temporal_workflow_stream_publish');
    expect(signalled.length).toBeGreaterThan(0);
    const histories = [{ workflowId: run.workflowId, history }];
    expect(await replay(histories)).toEqual([{ workflowId: run.workflowId, error: undefined }]);
    record([{ file: fileOf(run.workflowId), history }]);
  });

  it.each(['', 'v0.2/', 'v0.1/'])('replays the stored fixtures in histories/%s', async (folder) => {
    const files = readdirSync(`${FIXTURES}${folder}`).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThanOrEqual(3);
    const histories = files.map((file) => ({
      // The file's name is the run's workflow ID (a sub-agent's or background agent's ID derives from it).
      workflowId: workflowIdOf(file),
      history: historyFromJSON(JSON.parse(readFileSync(`${FIXTURES}${folder}${file}`, 'utf8'))),
    }));
    if (folder === '') {
      // This version's fixtures hold every kind of workflow keel runs, a background agent among them.
      const starts = histories.map((h) => h.history.events?.[0]?.workflowExecutionStartedEventAttributes);
      expect(new Set(starts.map((start) => start?.workflowType?.name))).toEqual(new Set(['agentRun', 'agentMonitor', 'agentSession']));
      expect(starts.some((start) => start?.workflowType?.name === 'agentMonitor' && start.parentWorkflowExecution)).toBe(true);
    }
    expect(await replay(histories)).toEqual(histories.map((h) => ({ workflowId: h.workflowId, error: undefined })));
  });
});
