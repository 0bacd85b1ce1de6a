/** Monitors: agents that schedule their own next turn and sleep durably between turns. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/core/define.js';
import type { RunEvent } from '../src/core/run.js';
import type { RecordedRequest, ScriptStep } from './support/model-server.js';
import { decode, eventTypes, historyOf } from './support/history.js';
import { providersFor, startKeel, useKeel } from './support/keel.js';
import { until as waitUntil } from './support/until.js';

const until = <T>(read: () => Promise<T> | T, ok: (v: T) => boolean, timeoutMs = 30_000) => waitUntil(read, ok, { timeoutMs, intervalMs: 100 });


/** A tool that runs until the test lets it end: a turn that is running while the test acts. */
let releaseLook!: () => void;
const lookGate = { started: false, opened: new Promise<void>((resolve) => (releaseLook = resolve)) };
const look = defineTool({
  name: 'look',
  description: 'Look at the disk.',
  input: z.object({}),
  readOnly: true,
  execute: async () => {
    lookGate.started = true;
    await lookGate.opened;
    return 'the disk is at 95%';
  },
});

const watcher = (name: string, model: string) =>
  defineAgent({ name, instructions: 'Watch the disk.', model, modelSettings: { retry: { initialInterval: '100ms', maximumInterval: '200ms' } } });

const agents = [
  watcher('watch-basic', 'openai:mon-basic'),
  watcher('watch-inject', 'anthropic:mon-inject'),
  watcher('watch-pause', 'openai:mon-pause'),
  watcher('watch-budget', 'openai:mon-budget'),
  watcher('watch-caps', 'openai:mon-caps'),
  watcher('watch-retry', 'openai:mon-retry'),
  watcher('watch-long', 'openai:mon-long'),
  watcher('watch-stop', 'openai:mon-stop'),
  defineAgent({ name: 'watch-inbox', instructions: 'Watch the disk.', model: 'openai:mon-inbox', tools: [look] }),
];

const t = useKeel(agents);

const schedule = (args: Record<string, unknown>): ScriptStep => ({ toolCalls: [{ name: 'schedule_next_turn', arguments: args }] });
const done = (detail: string): ScriptStep => ({ toolCalls: [{ name: 'report_done', arguments: { detail } }] });
/** The last user text the model saw (its turn's prompt). */
const lastUser = (r: RecordedRequest): string => {
  const users = (r.body.messages as { role: string; content: unknown }[]).filter((m) => m.role === 'user');
  const content = users.at(-1)?.content;
  return typeof content === 'string' ? content : JSON.stringify(content);
};
/** Whether the model's last message was the prompt of a new turn (not a tool result). */
const newTurn = (r: RecordedRequest) => (r.body.messages as { role: string }[]).at(-1)?.role === 'user' && !JSON.stringify(r.body.messages.at(-1)).includes('tool_result');


const ofType = <T extends RunEvent['type']>(events: RunEvent[], type: T) => events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);

describe('a monitor', () => {
  it('schedules a wake, sleeps on a durable timer, wakes with its next prompt, then reports done', async () => {
    t.server.script('mon-basic', (request) => {
      const prompt = lastUser(request);
      if (!newTurn(request)) return { text: 'Noted.' };
      if (prompt.includes('check again')) return done('the disk is fine');
      return schedule({ delay_seconds: 2, next_prompt: 'check again', reason: 'waiting for the disk to settle' });
    });
    const monitor = await t.keel.client.startMonitor('watch-basic', 'Watch the disk until it settles.');
    const asleep = await until(() => monitor.status(), (s) => s.phase === 'sleeping');
    expect(asleep).toMatchObject({ wakeReason: 'waiting for the disk to settle', turns: 1 });
    expect(Date.parse(asleep.nextWakeAt!)).toBeGreaterThan(Date.now() - 2_000);
    expect(await monitor.run.describe()).toMatchObject({ status: 'sleeping' });
    expect(await monitor.run.currentDetails()).toMatch(/^sleeping until .*: waiting for the disk to settle/);

    expect(await monitor.result()).toMatchObject({ status: 'completed', detail: 'the disk is fine', turns: 2, agent: 'watch-basic' });
    const requests = t.server.requests('mon-basic');
    expect(requests).toHaveLength(3);
    expect(lastUser(requests[0]!)).toBe('Watch the disk until it settles.');
    expect(JSON.stringify(requests[1]!.body.messages.at(-1))).toContain('Scheduled: you will wake at');
    expect(lastUser(requests[2]!)).toBe('check again');
    // It woke no earlier than it asked to.
    expect(requests[2]!.receivedAt - requests[1]!.receivedAt).toBeGreaterThanOrEqual(1_900);
    const events = await monitor.events();
    expect(ofType(events, 'monitor.sleep')).toEqual([expect.objectContaining({ turn: 1, reason: 'waiting for the disk to settle', nextPrompt: 'check again' })]);
    expect(ofType(events, 'monitor.wake')).toEqual([expect.objectContaining({ cause: 'timer' })]);
    expect(events.at(-1)).toMatchObject({ type: 'run.finished', status: 'completed', output: 'the disk is fine' });
    // The sleep is a timer with a summary in the Temporal UI.
    const history = await historyOf(monitor.run);
    const timers = (history.events ?? []).filter((e) => e.timerStartedEventAttributes);
    expect(timers.map((e) => decode(e.userMetadata?.summary))).toContain('next turn: waiting for the disk to settle');
    expect(await monitor.run.describe()).toMatchObject({ status: 'completed' });
  });

  it('wakes at once for a message, which reaches the model as an [Inbox] block', async () => {
    t.server.script('mon-inject', (request) => {
      const prompt = lastUser(request);
      if (!newTurn(request)) return { text: 'Noted.' };
      if (prompt.includes('[Inbox]')) return done('handled the message');
      return schedule({ delay_seconds: 3600, next_prompt: 'look again', reason: 'nothing to do for an hour' });
    });
    const monitor = await t.keel.client.startMonitor('watch-inject', 'Watch the disk.');
    await until(() => monitor.status(), (s) => s.phase === 'sleeping');
    expect(await monitor.inject('the disk is 95% full')).toEqual({ queued: 1 });
    expect(await monitor.result()).toMatchObject({ status: 'completed', detail: 'handled the message', turns: 2 });
    const woke = t.server.requests('mon-inject').at(-1)!;
    expect(lastUser(woke)).toContain('[Inbox]\n- the disk is 95% full\n\nlook again');
    expect(ofType(await monitor.events(), 'monitor.wake')).toEqual([expect.objectContaining({ cause: 'inject' })]);
  });

  it('a message injected while a turn runs, or while asleep, reaches the next turn and not the one after', async () => {
    t.server.script('mon-inbox', (request) => {
      if (!newTurn(request)) return { text: 'ok' };
      const prompt = lastUser(request);
      if (prompt === 'Watch the disk.') return { toolCalls: [{ id: 'look1', name: 'look', arguments: {} }] };
      if (prompt.includes('the disk is 95% full')) return schedule({ delay_seconds: 3600, next_prompt: 'look again', reason: 'an hour' });
      if (prompt.includes('the fan is loud')) return { text: 'noted the fan' };
      return prompt === 'continue' ? done('inbox read once') : { text: `unexpected prompt: ${prompt}` };
    });
    const monitor = await t.keel.client.startMonitor('watch-inbox', 'Watch the disk.', { budgets: { maxTurns: 6 } });
    // While turn 1 runs (its tool call holds it), a message comes; the turn goes on without it.
    await until(() => lookGate.started, Boolean);
    expect(await monitor.inject('the disk is 95% full')).toEqual({ queued: 1 });
    await until(() => monitor.events(), (events) => ofType(events, 'monitor.injected').length === 1);
    releaseLook();
    // Turn 2 reads it and sleeps for an hour; a second message wakes it for turn 3.
    const asleep = await until(() => monitor.status(), (s) => (s.phase === 'sleeping' && s.turns === 2) || !['running', 'sleeping'].includes(s.phase));
    expect(asleep).toMatchObject({ phase: 'sleeping', turns: 2, inbox: 0 });
    expect(await monitor.inject('the fan is loud')).toEqual({ queued: 1 });
    expect(await monitor.result()).toMatchObject({ status: 'completed', detail: 'inbox read once', turns: 4 });

    // Each message in the prompt of the turn after it came, as a new inbox item, and in no later one.
    expect(t.server.requests('mon-inbox').filter(newTurn).map(lastUser)).toEqual([
      'Watch the disk.',
      '[Inbox]\n- the disk is 95% full\n\ncontinue',
      '[Inbox]\n- the fan is loud\n\nlook again',
      'continue',
    ]);
    expect(ofType(await monitor.events(), 'monitor.turn').map((e) => e.inbox)).toEqual([0, 1, 1, 0]);
    // The conversation still holds each message, once.
    const seen = JSON.stringify(t.server.requests('mon-inbox').at(-1)!.body.messages);
    expect(seen.split('the disk is 95% full')).toHaveLength(2);
    expect(seen.split('the fan is loud')).toHaveLength(2);
    expect(JSON.stringify(await monitor.transcript()).split('the disk is 95% full')).toHaveLength(2);
  });

  it('paused while asleep, stays asleep past its wake time; resumed, wakes', async () => {
    t.server.script('mon-pause', (request) => {
      if (!newTurn(request)) return { text: 'Noted.' };
      return lastUser(request).includes('again') ? done('resumed fine') : schedule({ delay_seconds: 1, next_prompt: 'again', reason: 'a short nap' });
    });
    const monitor = await t.keel.client.startMonitor('watch-pause', 'Nap.');
    await until(() => monitor.status(), (s) => s.phase === 'sleeping');
    await monitor.pause();
    const held = await until(() => monitor.status(), (s) => s.phase === 'paused');
    const before = t.server.requests('mon-pause').length;
    // At its wake time the run says it stays paused (the event it emits where it would have woken):
    // still paused after it, no new turn.
    await until(() => monitor.events(), (events) => ofType(events, 'monitor.paused').length > 0);
    expect(await monitor.status()).toMatchObject({ phase: 'paused', turns: held.turns });
    expect(t.server.requests('mon-pause')).toHaveLength(before);
    expect(await monitor.run.describe()).toMatchObject({ status: 'paused' });
    await monitor.resume();
    expect(await monitor.result()).toMatchObject({ status: 'completed', detail: 'resumed fine' });
    expect(ofType(await monitor.events(), 'monitor.wake')).toEqual([expect.objectContaining({ cause: 'resume' })]);
  });

  it('stop cancels the current turn cleanly and ends cancelled', async () => {
    t.server.script('mon-stop', [{ fault: 'hang' }]);
    const monitor = await t.keel.client.startMonitor('watch-stop', 'Think.');
    await until(() => t.server.requests('mon-stop').length, (n) => n > 0);
    await monitor.stop('enough');
    expect(await monitor.result()).toMatchObject({ status: 'cancelled', detail: 'enough', turns: 1 });
    const types = eventTypes(await historyOf(monitor.run));
    expect(types).toContain('ACTIVITY_TASK_CANCELED');
    expect(await monitor.run.describe()).toMatchObject({ status: 'cancelled' });
  });
});

describe('from any Temporal client', () => {
  it('takes plain JSON input and plain signals; a bad signal is a warning, never a failure', async () => {
    t.server.script('mon-inject', (request) => {
      if (!newTurn(request)) return { text: 'ok' };
      return lastUser(request).includes('[Inbox]') ? done('got it') : schedule({ delay_seconds: 3600, next_prompt: 'later', reason: 'an hour' });
    });
    const workflowId = `raw-monitor-${Date.now()}`;
    const handle = await t.keel.env.client.workflow.start('agentMonitor', {
      taskQueue: t.keel.taskQueue,
      workflowId,
      args: [{ agent: 'watch-inject', goal: 'Watch.', budgets: { maxTurns: 5 } }],
    });
    const monitor = t.keel.client.getMonitor(workflowId);
    await until(() => monitor.status(), (s) => s.phase === 'sleeping');
    await handle.signal('inject', { nothing: true });
    await handle.signal('inject', 'a plain string message');
    expect(await monitor.result()).toMatchObject({ status: 'completed', detail: 'got it' });
    expect(lastUser(t.server.requests('mon-inject').at(-1)!)).toContain('- a plain string message');
    expect(ofType(await monitor.events(), 'monitor.warning')).toEqual([
      expect.objectContaining({ message: expect.stringMatching(/Ignored an inject signal without a message/) }),
    ]);
  });

  it('refuses bad input with an error that says what was expected', async () => {
    const handle = await t.keel.env.client.workflow.start('agentMonitor', {
      taskQueue: t.keel.taskQueue,
      workflowId: `bad-monitor-${Date.now()}`,
      args: [{ agent: 'watch-inject', budgets: { maxTurns: -1, wallclock: 'soon' } }],
    });
    await expect(handle.result()).rejects.toMatchObject({
      cause: {
        message: expect.stringMatching(/"goal" must be a non-empty string.*budgets\.maxTurns must be a number, 0 or more.*budgets\.wallclock must be a positive duration/),
      },
    });
  });
});

describe('budgets', () => {
  const answerEachTurn = (usage = { inputTokens: 100, outputTokens: 10 }) => () => ({ text: 'All quiet.', usage });

  it('max_turns', async () => {
    t.server.script('mon-budget', answerEachTurn());
    const monitor = await t.keel.client.startMonitor('watch-budget', 'Keep watching.', { budgets: { maxTurns: 3 } });
    expect(await monitor.result()).toMatchObject({ status: 'max_turns', turns: 3, usage: { inputTokens: 300, outputTokens: 30 } });
    // Later turns get the continuation prompt.
    expect(t.server.requests('mon-budget').slice(-2).map(lastUser)).toEqual(['continue', 'continue']);
  });

  it('max_tokens, input and output separately', async () => {
    t.server.script('mon-budget', answerEachTurn());
    const input = await (await t.keel.client.startMonitor('watch-budget', 'Watch.', { budgets: { maxInputTokens: 250 } })).result();
    expect(input).toMatchObject({ status: 'max_tokens', turns: 3 });
    const output = await (await t.keel.client.startMonitor('watch-budget', 'Watch.', { budgets: { maxOutputTokens: 20 } })).result();
    expect(output).toMatchObject({ status: 'max_tokens', turns: 2 });
  });

  it('max_cost, from the price table', async () => {
    t.server.script('mon-budget', answerEachTurn({ inputTokens: 1_000_000, outputTokens: 100_000 }));
    const monitor = await t.keel.client.startMonitor('watch-budget', 'Watch.', {
      budgets: { maxCostUsd: 5 },
      options: { prices: { 'openai:mon-budget': { input: 2, output: 10 } } },
    });
    // $3 a turn: over $5 after the second.
    expect(await monitor.result()).toMatchObject({ status: 'max_cost', turns: 2, cost: 6 });
  });

  it('wallclock: a sleep past it ends the run at its deadline', async () => {
    t.server.script('mon-budget', (request) =>
      newTurn(request) ? schedule({ delay_seconds: 3600, next_prompt: 'again', reason: 'an hour' }) : { text: 'ok' },
    );
    const monitor = await t.keel.client.startMonitor('watch-budget', 'Watch.', { budgets: { wallclock: '3s' } });
    expect(await monitor.result()).toMatchObject({ status: 'wallclock', turns: 1 });
  });

  it('a turn over its timeout fails; after its retries the run ends retry_aborted', async () => {
    t.server.script('mon-budget', () => ({ text: 'slow', delayMs: 5_000 }));
    const monitor = await t.keel.client.startMonitor('watch-budget', 'Watch.', {
      budgets: { turnTimeout: '1s' },
      options: { turnRetry: [{ action: 'retry', maxAttempts: 2 }] },
    });
    expect(await monitor.result()).toMatchObject({ status: 'retry_aborted', detail: expect.stringMatching(/timeout/), turns: 1 });
    const failed = ofType(await monitor.events(), 'monitor.turn_failed');
    expect(failed.map((e) => [e.attempt, e.action, e.errorType])).toEqual([
      [1, 'retry', 'KeelTurnTimeout'],
      [2, 'abort', 'KeelTurnTimeout'],
    ]);
  });
});

describe('scheduling caps', () => {
  it('the tool cap returns an error the model adapts to', async () => {
    t.server.script('mon-caps', [
      schedule({ delay_seconds: 3600, next_prompt: 'again', reason: 'later' }),
      schedule({ delay_seconds: 1, next_prompt: 'again', reason: 'sooner' }),
      { text: 'ok' },
      done('capped'),
    ]);
    const monitor = await t.keel.client.startMonitor('watch-caps', 'Watch.', { options: { scheduleTool: { maxDelaySeconds: 60 } } });
    expect(await monitor.result()).toMatchObject({ status: 'completed', detail: 'capped' });
    const finished = ofType(await monitor.events(), 'tool.finished').filter((e) => e.tool === 'schedule_next_turn');
    expect(finished.map((e) => e.isError)).toEqual([true, false]);
    expect(lastUser(t.server.requests('mon-caps').at(-1)!)).toBe('again');
    expect(finished[0]!.result).toMatch(/you may schedule at most 60 seconds ahead/);
  });

  it('the driver cap clamps silently, with a warning event', async () => {
    t.server.script('mon-caps', (request) => {
      if (!newTurn(request)) return { text: 'ok' };
      return lastUser(request).includes('again') ? done('clamped') : schedule({ delay_seconds: 3600, next_prompt: 'again', reason: 'later' });
    });
    const monitor = await t.keel.client.startMonitor('watch-caps', 'Watch.', { options: { maxDeferSeconds: 1 } });
    expect(await monitor.result()).toMatchObject({ status: 'completed', detail: 'clamped', turns: 2 });
    const warnings = ofType(await monitor.events(), 'monitor.warning');
    expect(warnings).toEqual([expect.objectContaining({ message: expect.stringMatching(/clamped to 1 s/) })]);
  });
});

describe('failed turns', () => {
  const refuseOnce = () => {
    let refused = false;
    return (request: RecordedRequest): ScriptStep => {
      if (!newTurn(request)) return { text: 'ok' };
      if (!refused) {
        refused = true;
        return { fault: 'status', status: 400 };
      }
      return lastUser(request) === 'continue' ? done('second turn') : done('first turn, second attempt');
    };
  };

  it('retry: the turn runs again and succeeds', async () => {
    t.server.script('mon-retry', refuseOnce());
    const monitor = await t.keel.client.startMonitor('watch-retry', 'Go.');
    expect(await monitor.result()).toMatchObject({ status: 'completed', detail: 'first turn, second attempt', turns: 1 });
    // The failed attempt left nothing behind in the conversation.
    expect((await monitor.transcript()).filter((m) => m.role === 'user')).toHaveLength(1);
  });

  it('skip: the run goes on with its next turn', async () => {
    t.server.script('mon-retry', refuseOnce());
    const monitor = await t.keel.client.startMonitor('watch-retry', 'Go.', {
      options: { turnRetry: [{ errorType: 'KeelProviderRequestError', action: 'skip' }] },
    });
    expect(await monitor.result()).toMatchObject({ status: 'completed', detail: 'second turn', turns: 2 });
  });

  it('abort: the run ends retry_aborted with the error', async () => {
    t.server.script('mon-retry', refuseOnce());
    const monitor = await t.keel.client.startMonitor('watch-retry', 'Go.', { options: { turnRetry: [{ action: 'abort' }] } });
    expect(await monitor.result()).toMatchObject({ status: 'retry_aborted', detail: expect.stringMatching(/400/), turns: 1 });
  });
});

describe('running long', () => {
  it('continues as new with exact totals, its inbox and its conversation; each message arrives once', async () => {
    // Answers each turn at once, until it has seen the last note.
    t.server.script('mon-long', (request) =>
      JSON.stringify(request.body.messages).includes('note 5') && newTurn(request)
        ? { ...done('all notes read'), usage: { inputTokens: 7, outputTokens: 3 } }
        : { text: 'checked', usage: { inputTokens: 7, outputTokens: 3 } },
    );
    const monitor = await t.keel.client.startMonitor('watch-long', 'Check often.', {
      budgets: { maxTurns: 0 },
      options: { continueAsNewEveryTurns: 2 },
    });
    // Messages sent while it runs and continues as new, one after the other.
    const sent: string[] = [];
    for (let i = 0; i < 6; i++) {
      // (A query may fail for a moment while the run continues as new.)
      const { turns } = await waitUntil(() => monitor.status(), () => true, { retryErrors: true });
      await monitor.inject(`note ${i}`);
      sent.push(`note ${i}`);
      // The next one once a turn has passed: they reach different turns and executions.
      await waitUntil(() => monitor.status(), (s) => s.turns > turns, { retryErrors: true, intervalMs: 50 });
    }
    const result = await monitor.result();
    expect(result).toMatchObject({ status: 'completed', detail: 'all notes read' });
    const requests = t.server.requests('mon-long');
    // Exact totals across every execution: one model call a turn.
    expect(requests).toHaveLength(result.turns);
    expect(result.usage).toEqual({ inputTokens: 7 * result.turns, outputTokens: 3 * result.turns });
    const events = await monitor.events();
    expect(ofType(events, 'run.continued').length).toBeGreaterThanOrEqual(2);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    // Every message reached the model exactly once, as the prompt of one turn.
    const prompts = requests.filter(newTurn).map(lastUser);
    for (const message of sent) expect(prompts.filter((p) => p.includes(`- ${message}\n`)).length).toBe(1);
    expect((await monitor.transcript()).filter((m) => m.role === 'assistant')).toHaveLength(result.turns);
  });

  it('keeps the model within its context budget: the goal, a marker, and the most recent turns', async () => {
    t.server.script('mon-long', (request) => ({ text: `answer ${request.body.messages.length} `.padEnd(400, '.') }));
    const monitor = await t.keel.client.startMonitor('watch-long', 'The goal: watch the logs.', {
      budgets: { maxTurns: 8 },
      // About 1,000 characters: two turns of ~450 characters each fit, not three.
      options: { contextTokens: 250 },
    });
    expect(await monitor.result()).toMatchObject({ status: 'max_turns', turns: 8 });
    const last = t.server.requests('mon-long').at(-1)!.body.messages as { role: string; content: string }[];
    const seen = last.filter((m) => m.role !== 'system');
    expect(seen[0]).toEqual({ role: 'user', content: 'The goal: watch the logs.' });
    expect(seen[1]!.content).toMatch(/^\[\d+ earlier messages are left out to keep the conversation within its budget\.\]\n\ncontinue$/);
    expect(seen.length).toBeLessThan(1 + 2 * 8);
    // The conversation itself is whole.
    expect(await monitor.transcript()).toHaveLength(2 * 8);
  });

  it('wakes on time after its worker was stopped during the sleep and started again', async () => {
    const taskQueue = `mon-restart-${Date.now()}`;
    t.server.script('mon-long', (request) => {
      if (!newTurn(request)) return { text: 'ok' };
      return lastUser(request).includes('wake up') ? done('woke on time') : schedule({ delay_seconds: 4, next_prompt: 'wake up', reason: 'later' });
    });
    const first = await startKeel({ agents, providers: providersFor(t.server), taskQueue, workerOptions: { stickyQueueScheduleToStartTimeout: '1s' } });
    const monitor = await first.client.startMonitor('watch-long', 'Sleep a little.');
    const asleep = await until(() => monitor.status(), (s) => s.phase === 'sleeping');
    await first.stop();
    const second = await startKeel({ agents, providers: providersFor(t.server), taskQueue });
    try {
      const handle = second.client.getMonitor(monitor.workflowId);
      expect(await handle.result()).toMatchObject({ status: 'completed', detail: 'woke on time' });
      const woke = t.server.requests('mon-long').at(-1)!;
      expect(woke.receivedAt).toBeGreaterThanOrEqual(Date.parse(asleep.nextWakeAt!) - 50);
    } finally {
      await second.stop();
    }
  });
});
