/** Background agents: spawned monitors that report back, on the scripted model and a real dev server. */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/core/define.js';
import type { MonitorState } from '../src/core/monitor.js';
import type { RunEvent } from '../src/core/run.js';
import { providersFor, startKeel, useKeel } from './support/keel.js';
import { until as waitUntil } from './support/until.js';

const until = <T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000) => waitUntil(read, ok, { timeoutMs, retryErrors: true });


const retry = { retry: { initialInterval: '50ms', maximumInterval: '200ms' } };

const readGauge = defineTool({
  name: 'read_gauge',
  description: 'Read the pressure gauge.',
  input: z.object({}),
  readOnly: true,
  execute: () => 'pressure 9.5 bar (high)',
});
const wipe = defineTool({
  name: 'wipe_disk',
  description: 'Never give this to a watcher.',
  input: z.object({}),
  execute: () => 'wiped',
});

const watcher = defineAgent({
  name: 'watcher',
  instructions: 'You watch a gauge.',
  model: 'openai:watcher-model',
  modelSettings: retry,
  tools: [readGauge],
});

const overseer = defineAgent({
  name: 'overseer',
  instructions: 'You oversee watchers.',
  model: 'openai:overseer-model',
  modelSettings: retry,
  tools: [wipe],
  background: { agent: watcher, maxConcurrent: 2, taskQueues: ['remote-watchers'] },
});

const letGo = defineAgent({
  name: 'let-go',
  instructions: 'You start watchers and leave.',
  model: 'openai:let-go-model',
  modelSettings: retry,
  background: { agent: watcher, onParentEnd: 'continue' },
});

/** Reads what its background agents report (sent here by the test, as a background agent would). */
const reportReader = defineAgent({
  name: 'report-reader',
  instructions: 'You read reports.',
  model: 'openai:report-reader-model',
  modelSettings: retry,
  background: { agent: watcher },
});

const t = useKeel([overseer, watcher, letGo, reportReader]);

const ofType = <T extends RunEvent['type']>(events: RunEvent[], type: T) => events.filter((e) => e.type === type) as Extract<RunEvent, { type: T }>[];
const spawn = (args: Record<string, unknown>, id = `s-${randomUUID().slice(0, 6)}`) => ({ toolCalls: [{ id, name: 'spawn_agent', arguments: args }] });
const sleepLong = { toolCalls: [{ name: 'schedule_next_turn', arguments: { delay_seconds: 3600, next_prompt: 'Check on the watchers.', reason: 'wait for reports' } }] };
const done = (detail: string) => ({ toolCalls: [{ name: 'report_done', arguments: { detail } }] });
const lastUserText = (model: string): string => {
  const messages = t.server.requests(model).at(-1)!.body.messages as { role: string; content: unknown }[];
  return JSON.stringify(messages.filter((m) => m.role === 'user').at(-1)?.content);
};


describe('background agents', () => {
  it('a spawned watcher runs as a child monitor; its alert wakes the sleeping parent, which reads it as a [Background reports] block', async () => {
    t.server.reset();
    t.server.script('overseer-model', [
      spawn({ name: 'gauge', goal: 'Watch the gauge; alert me when it is high.', tools: ['read_gauge'] }),
      sleepLong,
      { text: 'Sleeping until the watcher reports.' },
      { toolCalls: [{ id: 'l1', name: 'list_agents', arguments: {} }] },
      done('The gauge is high; handled.'),
    ]);
    t.server.script('watcher-model', [
      { toolCalls: [{ id: 'g1', name: 'read_gauge', arguments: {} }] },
      { toolCalls: [{ id: 'a1', name: 'report_alert', arguments: { text: 'gauge high: 9.5 bar' } }] },
      done('Watched; it was high.'),
    ]);
    const parent = await t.keel.client.startMonitor('overseer', 'Keep the plant safe.');
    const result = await parent.result();
    expect(result).toMatchObject({ status: 'completed', detail: 'The gauge is high; handled.' });

    // Woken by the alert long before its hour was up.
    const events = await parent.events();
    expect(ofType(events, 'monitor.wake')[0]).toMatchObject({ cause: 'wake' });
    expect(ofType(events, 'background.spawned')).toEqual([expect.objectContaining({ name: 'gauge', workflowId: `${parent.workflowId}/gauge` })]);
    expect(ofType(events, 'background.report').map((r) => r.kind)).toContain('alert');
    // The model read the alert in its next turn's prompt.
    const secondTurn = t.server.requests('overseer-model')[3]!;
    expect(JSON.stringify(secondTurn.body.messages)).toMatch(/\[Background reports\]\\n- gauge \(alert\): gauge high: 9.5 bar/);
    // The child is a monitor of the watcher agent, with the tools it was given, linked to its parent.
    const child = await t.keel.env.client.workflow.getHandle(`${parent.workflowId}/gauge`).describe();
    expect(child.type).toBe('agentMonitor');
    expect(child.parentExecution?.workflowId).toBe(parent.workflowId);
    const childTools = JSON.stringify(t.server.requests('watcher-model')[0]!.body.tools);
    expect(childTools).toContain('read_gauge');
    expect(childTools).toContain('report_alert');
    // keel tree shows it under its parent.
    const tree = await t.keel.client.tree(parent.workflowId);
    expect(tree.children).toEqual([expect.objectContaining({ workflowId: `${parent.workflowId}/gauge`, kind: 'background', name: 'gauge', agent: 'watcher' })]);
  });

  it('limits: unique names, at most maxConcurrent running, tools from the catalog only, known task queues', async () => {
    t.server.reset();
    t.server.script('overseer-model', [
      {
        toolCalls: [
          { id: 's1', name: 'spawn_agent', arguments: { name: 'a', goal: 'Watch.' } },
          { id: 's2', name: 'spawn_agent', arguments: { name: 'a', goal: 'Watch again.' } },
          { id: 's3', name: 'spawn_agent', arguments: { name: 'b', goal: 'Watch.' } },
          { id: 's4', name: 'spawn_agent', arguments: { name: 'c', goal: 'Watch.' } },
          { id: 's5', name: 'spawn_agent', arguments: { name: 'd', goal: 'Wipe.', tools: ['wipe_disk'] } },
          { id: 's6', name: 'spawn_agent', arguments: { name: 'e', goal: 'Elsewhere.', taskQueue: 'unknown-queue' } },
          { id: 's7', name: 'spawn_agent', arguments: { name: 'Bad Name', goal: 'x' } },
        ],
      },
      done('limits seen'),
    ]);
    // The watchers sleep for long: they stay running.
    t.server.script('watcher-model', (_req, _i) => sleepLong);
    const parent = await t.keel.client.startMonitor('overseer', 'Start watchers.');
    await parent.result();
    const results = JSON.stringify(t.server.requests('overseer-model')[1]!.body.messages);
    expect(results).toContain('the name \\"a\\" is taken');
    expect(results).toContain('2 background agents are running, the limit (2)');
    expect(results).toContain('unknown tools wipe_disk; a background agent may have: read_gauge');
    expect(results).toContain('task queue \\"unknown-queue\\" is not one this agent may use');
    expect(results).toContain('is not a valid name');
    // The parent ended: its watchers were cancelled (the default).
    for (const name of ['a', 'b']) {
      await until(() => t.keel.env.client.workflow.getHandle(`${parent.workflowId}/${name}`).describe(), (d) => d.status.name === 'CANCELLED');
    }
  });

  it('stop_agent stops a watcher, which reports that it stopped; check_agent shows it', async () => {
    t.server.reset();
    t.server.script('overseer-model', [
      spawn({ name: 'w', goal: 'Watch.' }),
      { toolCalls: [{ id: 'st', name: 'stop_agent', arguments: { name: 'w', reason: 'no longer needed' } }] },
      sleepLong,
      { text: 'waiting for the stop report' },
      { toolCalls: [{ id: 'ck', name: 'check_agent', arguments: { name: 'w' } }] },
      done('stopped it'),
    ]);
    t.server.script('watcher-model', (_req, _i) => sleepLong);
    const parent = await t.keel.client.startMonitor('overseer', 'Start and stop.');
    await parent.result();
    const child = await t.keel.client.getMonitor(`${parent.workflowId}/w`).result();
    expect(child).toMatchObject({ status: 'cancelled', detail: 'no longer needed' });
    const events = await parent.events();
    expect(ofType(events, 'background.report')).toEqual([expect.objectContaining({ name: 'w', kind: 'stopped' })]);
    expect(JSON.stringify(t.server.requests('overseer-model')[5]!.body.messages)).toMatch(/\\"status\\":\\"stopped\\"/);
  });

  it('onParentEnd "continue" lets the watchers run after the parent ends', async () => {
    t.server.reset();
    t.server.script('let-go-model', [spawn({ name: 'stay', goal: 'Watch on.' }), { text: 'Started a watcher; leaving.' }]);
    t.server.script('watcher-model', (_req, _i) => sleepLong);
    const run = await t.keel.client.start('let-go', 'Start a watcher.');
    expect(await run.result()).toMatchObject({ status: 'completed' });
    const child = t.keel.client.getMonitor(`${run.workflowId}/stay`);
    const state = await until(() => child.status(), (s: MonitorState) => s.phase === 'sleeping');
    expect(state.phase).toBe('sleeping');
    await t.keel.env.client.workflow.getHandle(child.workflowId).cancel();
  });

  it('a spawn may run on another task queue, served by a second worker (a remote agent)', async () => {
    t.server.reset();
    const remote = await startKeel({ agents: [watcher], providers: providersFor(t.server), taskQueue: 'remote-watchers' });
    try {
      t.server.script('overseer-model', [
        spawn({ name: 'far', goal: 'Watch from afar.', taskQueue: 'remote-watchers' }),
        sleepLong,
        { text: 'waiting' },
        done('heard from afar'),
      ]);
      t.server.script('watcher-model', [done('far and fine')]);
      const parent = await t.keel.client.startMonitor('overseer', 'Use a remote watcher.');
      expect(await parent.result()).toMatchObject({ status: 'completed' });
      const child = await t.keel.env.client.workflow.getHandle(`${parent.workflowId}/far`).describe();
      expect(child.taskQueue).toBe('remote-watchers');
      expect(ofType(await parent.events(), 'background.report')).toEqual([expect.objectContaining({ name: 'far', kind: 'completed', text: 'far and fine' })]);
      expect(lastUserText('overseer-model')).toContain('far (completed): far and fine');
    } finally {
      await remote.stop();
    }
  });

  it('a report delivered twice is read once: one background.report event, one line in one turn', async () => {
    const model = 'report-reader-model';
    t.server.reset();
    // Each turn sleeps for an hour, until the second report (the valve) comes; then it is done.
    t.server.script(model, (request) => {
      const last = (request.body.messages as { role: string; content: unknown }[]).at(-1)!;
      if (last.role !== 'user') return { text: 'noted' };
      return String(last.content).includes('valve stuck') ? done('read both reports') : sleepLong;
    });
    const monitor = await t.keel.client.startMonitor('report-reader', 'Read what the watchers report.');
    const signal = (report: Record<string, unknown>) => t.keel.env.client.workflow.getHandle(monitor.workflowId).signal('backgroundReport', report);
    const gauge = { name: 'gauge', seq: 1, kind: 'alert', text: 'gauge high: 9.5 bar', at: new Date().toISOString() };
    await until(() => monitor.status(), (s: MonitorState) => s.phase === 'sleeping');
    // Delivered twice at once (a retried signal), then once more after the turn that read it.
    await signal(gauge);
    await signal(gauge);
    await until(() => monitor.status(), (s: MonitorState) => s.turns >= 2 && s.phase === 'sleeping');
    await signal(gauge);
    // The next report, sent after every copy of the first: the turn that reads it comes after them all.
    await signal({ name: 'gauge', seq: 2, kind: 'alert', text: 'valve stuck', at: new Date().toISOString() });
    expect(await monitor.result()).toMatchObject({ status: 'completed', detail: 'read both reports' });

    expect(ofType(await monitor.events(), 'background.report').map((e) => [e.name, e.report, e.text])).toEqual([
      ['gauge', 1, 'gauge high: 9.5 bar'],
      ['gauge', 2, 'valve stuck'],
    ]);
    // The prompts of the turns: the first report's line in one of them, once.
    const prompts = t.server
      .requests(model)
      .map((r) => (r.body.messages as { role: string; content: unknown }[]).at(-1)!)
      .filter((m) => m.role === 'user')
      .map((m) => String(m.content));
    const lines = prompts.flatMap((p) => p.split('\n')).filter((line) => line === '- gauge (alert): gauge high: 9.5 bar');
    expect(lines).toHaveLength(1);
    expect(prompts.at(-1)).toMatch(/^\[Background reports\]\n- gauge \(alert\): valve stuck\n\n/);
    // And the conversation holds it once.
    const transcript = JSON.stringify(await monitor.transcript());
    expect(transcript.split('gauge high: 9.5 bar')).toHaveLength(2);
  });
});
