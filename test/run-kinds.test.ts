/**
 * One lifecycle for every kind of run: what a plain run gets at its start and end, a monitor and
 * a background agent get too; a driver's own tools follow the run through a handoff; limits hold
 * for background agents; the episode's loop controls (stopWhen, onTurnEnd) in a run and a monitor.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/core/define.js';
import { defineGuardrail } from '../src/core/guardrails.js';
import { ref } from '../src/core/handoff.js';
import type { RunEvent } from '../src/core/run.js';
import { StreamText, type StreamItem } from '../src/core/stream.js';
import type { RecordedRequest } from './support/model-server.js';
import { useKeel } from './support/keel.js';
import { until } from './support/until.js';

const retry = { retry: { initialInterval: '50ms', maximumInterval: '200ms' } };
const ofType = <T extends RunEvent['type']>(events: RunEvent[], type: T) => events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
const messagesOf = (r: RecordedRequest) => r.body.messages as { role: string; content: unknown; tool_call_id?: string }[];
const lastMessage = (r: RecordedRequest) => messagesOf(r).at(-1)!;
const text = (r: RecordedRequest) => JSON.stringify(r.body.messages);
const done = (detail: string) => ({ toolCalls: [{ name: 'report_done', arguments: { detail } }] });

const dir = mkdtempSync(join(tmpdir(), 'keel-kinds-'));
function script(name: string, body: string): string {
  const path = join(dir, `${name}.sh`);
  writeFileSync(path, ['#!/bin/sh', 'input=$(cat)', `sid=$(printf '%s' "$input" | sed -n 's/.*"session_id":"\\([^"]*\\)".*/\\1/p')`, body, ''].join('\n'));
  chmodSync(path, 0o755);
  return path;
}
const sessionContext = script('session-context', 'echo "The night shift is on call."');
const sessionEnd = script('session-end', `printf '%s' "$input" > '${dir}/ended-'"$(printf '%s' "$sid" | tr '/' '_')"'.json'`);
const endedFile = (workflowId: string) => join(dir, `ended-${workflowId.replace(/\//g, '_')}.json`);

// Defect 1: background agents nest no deeper than maxDepth.
const nester = defineAgent({
  name: 'nester',
  instructions: 'You delegate to background agents.',
  model: 'openai:nester-model',
  modelSettings: retry,
  background: { maxDepth: 1, onParentEnd: 'continue' },
});

// Defect 2: a monitor's own tools after a handoff.
const ops = defineAgent({ name: 'ops', instructions: 'You are ops.', model: 'openai:ops-model', modelSettings: retry });
const desk = defineAgent({ name: 'desk', instructions: 'You route.', model: 'openai:desk-model', modelSettings: retry, handoffs: [ref('ops')] });

// Defect 3: a monitor's (and a background agent's) start and end checks.
const noForbidden = defineGuardrail({
  name: 'no-forbidden',
  check: (subject) => (subject.kind === 'input' && subject.text.includes('forbidden') ? { tripped: true, reason: 'a forbidden goal' } : { tripped: false }),
});
const guarded = defineAgent({
  name: 'guarded',
  instructions: 'You watch.',
  model: 'openai:guarded-model',
  modelSettings: retry,
  guardrails: { input: [noForbidden] },
  hooks: {
    SessionStart: [{ hooks: [{ type: 'command', command: sessionContext }] }],
    SessionEnd: [{ hooks: [{ type: 'command', command: sessionEnd }] }],
  },
});
const spawner = defineAgent({
  name: 'spawner',
  instructions: 'You start guarded watchers.',
  model: 'openai:spawner-model',
  modelSettings: retry,
  background: { agent: guarded, onParentEnd: 'continue' },
});

// The episode's loop controls.
const submitReport = defineTool({ name: 'submit_report', description: 'Submit the report.', input: z.object({ text: z.string() }), execute: () => 'submitted' });
const stopper = defineAgent({
  name: 'stopper',
  instructions: 'Write and submit a report.',
  model: 'openai:stopper-model',
  modelSettings: retry,
  tools: [submitReport],
  stopWhen: { toolCalled: 'submit_report' },
});
const persistent = defineAgent({
  name: 'persistent',
  instructions: 'Check A and B.',
  model: 'openai:persistent-model',
  modelSettings: retry,
  maxTurns: 4,
  onTurnEnd: ({ answer }) => (answer.includes('B') ? undefined : 'You have not checked B yet.'),
});

// The run's state, in a monitor and in a background agent.
const note = defineTool({
  name: 'note',
  description: 'Note a value under a key in the state.',
  input: z.object({ key: z.string(), value: z.string() }),
  execute: ({ key, value }, ctx) => {
    ctx.state.set(key, value);
    return `noted ${key}`;
  },
});
const read = defineTool({
  name: 'read',
  description: 'Read a key of the state.',
  input: z.object({ key: z.string() }),
  readOnly: true,
  execute: ({ key }, ctx) => JSON.stringify(ctx.state.get(key) ?? null),
});
const keeper = defineAgent({ name: 'keeper', instructions: 'You keep notes for {owner}.', model: 'openai:keeper-model', modelSettings: retry, tools: [note, read] });
const chief = defineAgent({
  name: 'chief',
  instructions: 'You delegate.',
  model: 'openai:chief-model',
  modelSettings: retry,
  tools: [read],
  background: { agent: keeper, onParentEnd: 'continue' },
});

// Remembered approvals, shared with a sub-agent both ways.
const ran: string[] = [];
const shell = defineTool({
  name: 'Bash',
  description: 'Run a shell command.',
  input: z.object({ command: z.string() }),
  requiresApproval: true,
  execute: ({ command }) => {
    ran.push(command);
    return `ran: ${command}`;
  },
});
const mate = defineAgent({ name: 'mate', instructions: 'You run commands.', model: 'openai:mate-model', modelSettings: retry, tools: [shell] });
const captain = defineAgent({ name: 'captain', instructions: 'You command.', model: 'openai:captain-model', modelSettings: retry, tools: [shell], subAgents: [mate] });

// Live streaming in a monitor and in a sub-agent's run.
const streamHelper = defineAgent({ name: 'stream-helper', instructions: 'Help.', model: 'openai:stream-helper-model', modelSettings: retry });
const streamLead = defineAgent({ name: 'stream-lead', instructions: 'Lead.', model: 'openai:stream-lead-model', modelSettings: retry, subAgents: [streamHelper] });
const streamWatch = defineAgent({ name: 'stream-watch', instructions: 'Watch.', model: 'openai:stream-watch-model', modelSettings: retry });

const t = useKeel([nester, ops, desk, guarded, spawner, stopper, persistent, keeper, chief, mate, captain, streamHelper, streamLead, streamWatch]);

describe('every kind of run', () => {
  it('a background agent whose own agent spawns past maxDepth gets an error result for that spawn', async () => {
    t.server.script('nester-model', (request) => {
      const tools = messagesOf(request).some((m) => m.role === 'tool');
      const goal = JSON.stringify(messagesOf(request).find((m) => m.role === 'user')?.content);
      if (goal.includes('Find the leak.')) {
        // The background agent (depth 1) tries to spawn one of its own (depth 2).
        if (tools) return done('could not delegate');
        return { toolCalls: [{ id: 'deep', name: 'spawn_agent', arguments: { name: 'deeper', goal: 'Look deeper.' } }] };
      }
      if (tools) return { text: 'Delegated.' };
      return { toolCalls: [{ id: 'top', name: 'spawn_agent', arguments: { name: 'leak', goal: 'Find the leak.' } }] };
    });
    const run = await t.keel.client.start('nester', 'Delegate the search for the leak.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Delegated.' });
    const child = t.keel.client.getMonitor(`${run.workflowId}/leak`);
    expect(await child.result()).toMatchObject({ status: 'completed', detail: 'could not delegate' });
    const refused = ofType(await child.run.events(), 'tool.finished').find((e) => e.callId === 'deep');
    expect(refused).toMatchObject({ isError: true, result: expect.stringMatching(/may nest 1 deep here, and this one would be 2/) });
    expect(ofType(await child.run.events(), 'background.spawned')).toEqual([]);
  });

  it("a monitor that hands off keeps its own tools: the target schedules the next turn, then reports done", async () => {
    t.server.script('desk-model', [{ toolCalls: [{ id: 'h1', name: 'transfer_to_ops', arguments: {} }] }]);
    t.server.script('ops-model', (request) => {
      const last = lastMessage(request);
      if (String(last.content).includes('check the queue again')) return done('queue drained by ops');
      // Right after the handoff, the target schedules the next turn; after that tool, it answers.
      if (last.role === 'tool' && last.tool_call_id !== 'h1') return { text: 'Noted.' };
      return { toolCalls: [{ id: 's1', name: 'schedule_next_turn', arguments: { delay_seconds: 1, next_prompt: 'check the queue again', reason: 'let it drain' } }] };
    });
    const monitor = await t.keel.client.startMonitor('desk', 'Watch the support queue.');
    expect(await monitor.result()).toMatchObject({ status: 'completed', detail: 'queue drained by ops', turns: 2, agent: 'ops' });
    const events = await monitor.run.events();
    expect(ofType(events, 'handoff')).toEqual([expect.objectContaining({ from: 'desk', to: 'ops' })]);
    const scheduled = ofType(events, 'tool.finished').find((e) => e.callId === 's1');
    expect(scheduled).toMatchObject({ isError: false, stage: 'monitor' });
    expect(ofType(events, 'monitor.wake')).toEqual([expect.objectContaining({ cause: 'timer' })]);
  });

  it("a monitor's goal passes its input guardrails: a tripped one blocks it before any model call", async () => {
    const before = t.server.requests('guarded-model').length;
    const monitor = await t.keel.client.startMonitor('guarded', 'Do something forbidden.');
    expect(await monitor.result()).toMatchObject({ status: 'blocked', detail: expect.stringMatching(/no-forbidden/) });
    expect(t.server.requests('guarded-model').length).toBe(before);
    expect(ofType(await monitor.run.events(), 'run.finished')).toEqual([expect.objectContaining({ status: 'blocked' })]);
  });

  it('a background agent gets SessionStart context with its goal and runs SessionEnd at its end', async () => {
    t.server.script('spawner-model', (request) =>
      lastMessage(request).role === 'tool' ? { text: 'Started.' } : { toolCalls: [{ id: 'sp', name: 'spawn_agent', arguments: { name: 'night', goal: 'Watch the night queue.' } }] },
    );
    t.server.script('guarded-model', () => done('quiet night'));
    const run = await t.keel.client.start('spawner', 'Start a night watcher.');
    await run.result();
    const childId = `${run.workflowId}/night`;
    expect(await t.keel.client.getMonitor(childId).result()).toMatchObject({ status: 'completed', detail: 'quiet night' });
    const first = t.server.requests('guarded-model').find((r) => text(r).includes('Watch the night queue.'))!;
    expect(text(first)).toContain('The night shift is on call.');
    await until(() => existsSync(endedFile(childId)), Boolean);
    expect(JSON.parse(readFileSync(endedFile(childId), 'utf8'))).toMatchObject({ hook_event_name: 'SessionEnd', session_id: childId });
  });

  it('stopWhen ends a run completed once the named tool has run, with no further model turn', async () => {
    t.server.script('stopper-model', [
      { text: 'Here is my draft.', toolCalls: [{ id: 'r1', name: 'submit_report', arguments: { text: 'all good' } }] },
      { text: 'This turn must never be asked for.' },
    ]);
    const run = await t.keel.client.start('stopper', 'Report on the build.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Here is my draft.', turns: 1 });
    expect(ofType(await run.events(), 'run.stop_condition')).toEqual([expect.objectContaining({ turn: 1, condition: 'toolCalled submit_report' })]);
    expect(t.server.requests('stopper-model')).toHaveLength(1);
  });

  it('stopWhen ends a monitor too: completed, naming the condition, without sleeping or another turn', async () => {
    t.server.script('stopper-model', [
      { toolCalls: [{ id: 'r2', name: 'submit_report', arguments: { text: 'nightly report' } }] },
      { text: 'This turn must never be asked for.' },
    ]);
    const before = t.server.requests('stopper-model').length;
    const monitor = await t.keel.client.startMonitor('stopper', 'Report every night.');
    expect(await monitor.result()).toMatchObject({ kind: 'monitor', status: 'completed', output: 'stop condition: toolCalled submit_report', turns: 1 });
    expect(t.server.requests('stopper-model').length - before).toBe(1);
    expect(ofType(await monitor.run.events(), 'monitor.sleep')).toEqual([]);
  });

  it("onTurnEnd continues a run past an answer with its input, recorded, until it lets an answer stand", async () => {
    t.server.script('persistent-model', [{ text: 'A is fine.' }, { text: 'A and B are fine.' }]);
    const run = await t.keel.client.start('persistent', 'Check A and B.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'A and B are fine.', turns: 2 });
    expect(ofType(await run.events(), 'turn.continued')).toEqual([expect.objectContaining({ turn: 1, input: 'You have not checked B yet.' })]);
    const second = t.server.requests('persistent-model')[1]!;
    expect(lastMessage(second)).toMatchObject({ role: 'user', content: 'You have not checked B yet.' });
  });

  it('onTurnEnd is bounded by maxTurns', async () => {
    t.server.script('persistent-model', () => ({ text: 'Only A.' }));
    const run = await t.keel.client.start('persistent', 'Check A and B.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Only A.', turns: 4 });
    expect(ofType(await run.events(), 'turn.continued')).toHaveLength(3);
  });

  it("a session's message passes its input guardrails (a tripped one blocks that run, the session goes on); SessionStart's context goes with its first message; SessionEnd at its end", async () => {
    t.server.script('guarded-model', (request) => ({ text: `seen: ${JSON.stringify(lastMessage(request).content).slice(1, 30)}` }));
    const session = await t.keel.client.startSession('guarded');
    const before = t.server.requests('guarded-model').length;
    const blockedRun = await session.send('Do something forbidden.');
    expect(blockedRun).toMatchObject({ run: 'run-1', status: 'blocked', error: expect.stringMatching(/no-forbidden/) });
    expect(t.server.requests('guarded-model').length).toBe(before);
    expect((await session.status()).checkpoints).toEqual([]);
    const answered = await session.send('Watch the queue.');
    expect(answered).toMatchObject({ run: 'run-2', status: 'completed', checkpoint: 'cp-2' });
    const first = t.server.requests('guarded-model').find((r) => text(r).includes('Watch the queue.'))!;
    expect(text(first)).toContain('The night shift is on call.');
    expect(await session.end('prompt_input_exit')).toMatchObject({ reason: 'prompt_input_exit', runs: 2 });
    await until(() => existsSync(endedFile(session.workflowId)), Boolean);
    expect(JSON.parse(readFileSync(endedFile(session.workflowId), 'utf8'))).toMatchObject({ hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' });
  });

  it("stopWhen ends a session's run and onTurnEnd continues one, each within the run's own turn limit", async () => {
    t.server.script('stopper-model', [{ text: 'Draft.', toolCalls: [{ id: 'r3', name: 'submit_report', arguments: { text: 'ok' } }] }, { text: 'Next message.' }]);
    const stopping = await t.keel.client.startSession('stopper');
    expect(await stopping.send('Report.')).toMatchObject({ status: 'completed', output: 'Draft.', turns: 1 });
    expect(ofType(await stopping.events(), 'run.stop_condition')).toHaveLength(1);
    expect(await stopping.send('And now?')).toMatchObject({ status: 'completed', output: 'Next message.', turns: 1 });

    t.server.script('persistent-model', (request) => ({ text: JSON.stringify(request.body.messages).includes('second') ? 'Only A.' : 'A and B.' }));
    const persisting = await t.keel.client.startSession('persistent');
    expect(await persisting.send('first')).toMatchObject({ status: 'completed', output: 'A and B.', turns: 1 });
    // maxTurns (4) bounds each message's run, not the session: as in a plain run, the last answer stands.
    expect(await persisting.send('second')).toMatchObject({ status: 'completed', output: 'Only A.', turns: 4 });
    expect(await persisting.send('third')).toMatchObject({ status: 'completed', output: 'Only A.', turns: 4 });
    expect(ofType(await persisting.events(), 'turn.continued')).toHaveLength(6);
  });

  it("a monitor starts with its state, fills its instructions from it, and its tools write it", async () => {
    t.server.script('keeper-model', (request) => {
      const last = lastMessage(request);
      if (last.role === 'tool' && last.tool_call_id === 'n1') return done('noted the weather');
      return { toolCalls: [{ id: 'n1', name: 'note', arguments: { key: 'weather', value: 'rain' } }] };
    });
    const monitor = await t.keel.client.startMonitor('keeper', 'Note the weather.', { state: { owner: 'Ada' } });
    expect(await monitor.result()).toMatchObject({ kind: 'monitor', status: 'completed', state: { owner: 'Ada', weather: 'rain' } });
    expect(await monitor.state()).toEqual({ owner: 'Ada', weather: 'rain' });
    const first = t.server.requests('keeper-model').find((r) => text(r).includes('Note the weather.'))!;
    expect(JSON.stringify(messagesOf(first)[0])).toContain('You keep notes for Ada.');
    expect(ofType(await monitor.run.events(), 'state.changed')).toEqual([expect.objectContaining({ keys: ['weather'], callId: 'n1' })]);
  });

  it("a background agent starts with a copy of its parent's state; its writes stay its own", async () => {
    t.server.script('keeper-model', (request) => {
      const last = lastMessage(request);
      if (last.role === 'tool' && last.tool_call_id === 'bg1') return done('noted the tide');
      return { toolCalls: [{ id: 'bg1', name: 'note', arguments: { key: 'tide', value: 'high' } }] };
    });
    t.server.script('chief-model', (request) => {
      const last = lastMessage(request);
      if (last.role === 'tool' && last.tool_call_id === 'sp') return { text: 'Delegated.' };
      return { toolCalls: [{ id: 'sp', name: 'spawn_agent', arguments: { name: 'tides', goal: 'Note the tide.' } }] };
    });
    const run = await t.keel.client.start('chief', 'Delegate the tide.', { state: { owner: 'Grace' } });
    expect(await run.result()).toMatchObject({ status: 'completed', state: { owner: 'Grace' } });
    const child = t.keel.client.getMonitor(`${run.workflowId}/tides`);
    expect(await child.result()).toMatchObject({ status: 'completed', state: { owner: 'Grace', tide: 'high' } });
    expect(await run.state()).toEqual({ owner: 'Grace' });
  });

  it('remembered approvals are shared with a sub-agent: it starts with the parent\'s, and those it adds come back', async () => {
    t.server.script('captain-model', [
      { toolCalls: [{ id: 'c1', name: 'Bash', arguments: { command: 'make release' } }] },
      { toolCalls: [{ id: 'sub', name: 'mate', arguments: { input: 'Release, then deploy.' } }] },
      { toolCalls: [{ id: 'c2', name: 'Bash', arguments: { command: 'make deploy' } }] },
      { text: 'Released and deployed.' },
    ]);
    t.server.script('mate-model', [
      { toolCalls: [{ id: 'm1', name: 'Bash', arguments: { command: 'make release' } }] },
      { toolCalls: [{ id: 'm2', name: 'Bash', arguments: { command: 'make deploy' } }] },
      { text: 'Done.' },
    ]);
    const run = await t.keel.client.start('captain', 'Ship it.');
    await until(() => run.pending(), (p) => p.some((c) => c.callId === 'c1'), { what: 'c1 to wait' });
    await run.approve('c1', { remember: true });
    // The sub-agent runs `make release` without asking: the parent remembered it. `make deploy` asks, from the parent.
    await until(() => run.pending(), (p) => p.some((c) => c.callId === 'm2'), { what: "the sub-agent's m2 to wait" });
    expect(ran.filter((c) => c === 'make release')).toHaveLength(2);
    await run.approve('m2', { remember: true });
    // Back in the parent, `make deploy` runs without asking: the sub-agent remembered it.
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Released and deployed.' });
    expect((await run.status()).rememberedRules).toEqual(['Bash(make release)', 'Bash(make deploy)']);
    const asked = ofType(await run.events(), 'approval.requested').map((e) => e.callId);
    expect(asked).toEqual(['c1']);
    expect(ofType(await run.events(), 'tool.finished').find((e) => e.callId === 'c2')).toMatchObject({ result: 'ran: make deploy', isError: false });
  });

  it('a monitor streams every turn, and a streaming run\'s sub-agent streams on its own run', async () => {
    t.server.script('stream-watch-model', [
      { text: 'All quiet on the first look. ', toolCalls: [{ name: 'schedule_next_turn', arguments: { delay_seconds: 1, next_prompt: 'Look again.', reason: 'soon' } }] },
      { text: 'Until the next look.' },
      { text: 'Still quiet. ', ...done('quiet') },
    ]);
    const monitor = await t.keel.client.startMonitor('stream-watch', 'Watch the queue.', { options: { stream: true } });
    const seen: StreamItem[] = [];
    for await (const item of monitor.stream()) seen.push(item);
    const text = new StreamText();
    for (const item of seen) text.apply(item);
    // Both monitor turns (model turns 1 and 2, then 3), across the sleep between them, on one stream, to the monitor's end.
    expect([text.text(1), text.text(2), text.text(3)]).toEqual(['All quiet on the first look. ', 'Until the next look.', 'Still quiet. ']);
    expect(seen.some((i) => i.type === 'monitor.sleep')).toBe(true);
    expect(seen.at(-1)).toMatchObject({ type: 'stream.end', status: 'completed' });

    t.server.script('stream-lead-model', [{ toolCalls: [{ id: 'h1', name: 'stream-helper', arguments: { input: 'Count to three.' } }] }, { text: 'It counted.' }]);
    t.server.script('stream-helper-model', [{ text: 'one two three', chunkDelayMs: 20 }]);
    const lead = await t.keel.client.start('stream-lead', 'Get it counted.', { stream: true });
    const leadItems: StreamItem[] = [];
    let helperText: Promise<string> | undefined;
    for await (const item of lead.stream()) {
      leadItems.push(item);
      // The parent's stream names the sub-agent's run; its own stream has the sub-agent's text.
      if (item.type === 'subagent.started') {
        helperText = (async () => {
          const own = new StreamText();
          for await (const chunk of t.keel.client.getHandle(item.workflowId).stream()) own.apply(chunk);
          return own.text(1);
        })();
      }
    }
    expect(await helperText).toBe('one two three');
    expect(leadItems.at(-1)).toMatchObject({ type: 'stream.end', status: 'completed' });
    expect(t.server.requests('stream-helper-model').every((r) => r.stream)).toBe(true);
  });
});
