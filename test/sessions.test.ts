/** Sessions: many messages in one agentSession workflow, on the real dev server and the scripted model. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SessionRefusedError, type SessionHandle } from '../src/client/session-handle.js';
import { defineAgent, defineTool } from '../src/core/define.js';
import type { RunEvent } from '../src/core/run.js';
import { activityEvents, historyOf } from './support/history.js';
import { useKeel } from './support/keel.js';
import type { RecordedRequest } from './support/model-server.js';
import { until } from './support/until.js';

const fast = { retry: { initialInterval: '50ms', maximumInterval: '200ms' } };

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploy to an environment.',
  input: z.object({ env: z.string() }),
  requiresApproval: true,
  execute: ({ env }) => `deployed ${env}`,
});

const hookDir = mkdtempSync(join(tmpdir(), 'keel-session-hooks-'));
const hookLog = join(hookDir, 'hooks.log');
const hookScript = join(hookDir, 'log-hook.mjs');
writeFileSync(
  hookScript,
  [
    "import { appendFileSync } from 'node:fs';",
    "let s = '';",
    'process.stdin.on("data", (d) => (s += d)).on("end", () => {',
    '  const input = JSON.parse(s);',
    "  const line = process.argv[2] + ' ' + (input.source ?? input.reason);",
    `  appendFileSync(${JSON.stringify(hookLog)}, line + '\\n');`,
    "  console.log('hook context: ' + line);",
    '});',
  ].join('\n'),
);
/** A command hook that appends its event and source or reason to the log, and says so on stdout (SessionStart's context). */
const logHook = (event: string) => ({ hooks: [{ type: 'command' as const, command: `node ${hookScript} ${event}` }] });

const chat = defineAgent({ name: 'session-chat', instructions: 'Chat.', model: 'openai:session-chat', modelSettings: fast, tools: [deploy] });
const hooked = defineAgent({
  name: 'session-hooked',
  instructions: 'Chat.',
  model: 'openai:session-hooked',
  modelSettings: fast,
  hooks: { SessionStart: [logHook('SessionStart')], SessionEnd: [logHook('SessionEnd')] },
});
const flaky = defineAgent({ name: 'session-flaky', instructions: 'Chat.', model: 'anthropic:session-flaky', modelSettings: { retry: { initialInterval: '50ms', maximumInterval: '100ms', maximumAttempts: 2 } } });
const billing = defineAgent({ name: 'session-billing', description: 'Invoices.', instructions: 'You are billing.', model: 'openai:session-billing', modelSettings: fast });
const triage = defineAgent({ name: 'session-triage', instructions: 'You are triage.', model: 'openai:session-triage', modelSettings: fast, handoffs: [billing] });

// A session's state, written by one message's tool and read by the next's, and its instructions' templates.
const remember = defineTool({
  name: 'remember',
  description: 'Remember a value under a key.',
  input: z.object({ key: z.string(), value: z.string() }),
  execute: ({ key, value }, ctx) => {
    ctx.state.set(key, value);
    return `remembered ${key}`;
  },
});
const recall = defineTool({
  name: 'recall',
  description: 'Recall the value of a key.',
  input: z.object({ key: z.string() }),
  readOnly: true,
  execute: ({ key }, ctx) => String(ctx.state.get(key) ?? 'nothing'),
});
const notes = defineAgent({ name: 'session-notes', instructions: 'You take notes for {user}.', model: 'openai:session-notes', modelSettings: fast, tools: [remember, recall] });

const pickColor = defineTool({ name: 'pick_color', description: 'Ask the user for a color.', input: z.object({ prompt: z.string() }), runsOn: 'client' });
const painter = defineAgent({ name: 'session-painter', instructions: 'Paint.', model: 'openai:session-painter', modelSettings: fast, tools: [pickColor] });

const delegator = defineAgent({ name: 'session-delegator', instructions: 'Delegate invoices.', model: 'openai:session-delegator', modelSettings: fast, subAgents: [billing] });

const t = useKeel([chat, hooked, flaky, billing, triage, delegator, notes, painter]);

type Msg = { role: string; content: unknown };
const messagesOf = (r: RecordedRequest): Msg[] => r.body.messages as Msg[];
const text = (m: Msg | undefined): string => (typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content ?? ''));
const lastUser = (r: RecordedRequest) => text(messagesOf(r).filter((m) => m.role === 'user').at(-1));
/** Answers every message with its echo. */
const echo = (r: RecordedRequest) => ({ text: `echo: ${lastUser(r).slice(0, 40)}` });
const ofType = <T extends RunEvent['type']>(events: RunEvent[], type: T) => events.filter((e) => e.type === type) as Extract<RunEvent, { type: T }>[];

async function refusal(call: Promise<unknown>): Promise<string> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SessionRefusedError);
  return (err as Error).message;
}

async function start(agent: string, options: Parameters<typeof t.keel.client.startSession>[1] = {}): Promise<SessionHandle> {
  return t.keel.client.startSession(agent, options);
}

describe('sessions', () => {
  it('three messages: each run sees the earlier ones; the status lists a checkpoint per message', async () => {
    t.server.script('session-chat', echo);
    const session = await start('session-chat');
    const first = await session.send('My name is Ada.');
    expect(first).toMatchObject({ run: 'run-1', status: 'completed', output: 'echo: My name is Ada.', agent: 'session-chat', turns: 1, checkpoint: 'cp-1' });
    await session.send('I live in Lisbon.');
    const third = await session.send('Where do I live, and what is my name?');
    expect(third.output).toBe('echo: Where do I live, and what is my name?');

    const requests = t.server.requests('session-chat').filter((r) => JSON.stringify(r.body).includes('Ada'));
    const last = messagesOf(requests.at(-1)!).filter((m) => m.role !== 'system');
    expect(last.map((m) => [m.role, text(m)])).toEqual([
      ['user', 'My name is Ada.'],
      ['assistant', 'echo: My name is Ada.'],
      ['user', 'I live in Lisbon.'],
      ['assistant', 'echo: I live in Lisbon.'],
      ['user', 'Where do I live, and what is my name?'],
    ]);
    const status = await session.status();
    expect(status).toMatchObject({ kind: 'session', agent: 'session-chat', busy: false, status: 'idle', messages: 6, runs: 3, pending: [] });
    expect(status.checkpoints.map((c) => [c.id, c.message, c.agent])).toEqual([
      ['cp-1', 'My name is Ada.', 'session-chat'],
      ['cp-2', 'I live in Lisbon.', 'session-chat'],
      ['cp-3', 'Where do I live, and what is my name?', 'session-chat'],
    ]);
    // Each message is stored once in history: in its send Update; each answer once: in its model turn.
    const history = JSON.stringify(await historyOf(session.run));
    expect(history.split(Buffer.from('"I live in Lisbon."').toString('base64').slice(0, 16)).length - 1).toBeLessThanOrEqual(1);
    expect((await session.transcript()).length).toBe(6);
  });

  it('a handoff carries to the next message; rewinding to a checkpoint makes its agent active again and returns its message', async () => {
    t.server.script('session-triage', (r) =>
      lastUser(r).includes('invoice') && !messagesOf(r).some((m) => m.role === 'tool') ? { toolCalls: [{ id: 'h1', name: 'transfer_to_session-billing', arguments: {} }] } : echo(r),
    );
    t.server.script('session-billing', (r) => ({ text: `billing: ${lastUser(r).slice(0, 40)}` }));
    const session = await start('session-triage');
    await session.send('Hello.');
    const handed = await session.send('About my invoice.');
    expect(handed).toMatchObject({ status: 'completed', agent: 'session-billing', output: 'billing: About my invoice.' });
    const next = await session.send('Was it paid?');
    expect(next).toMatchObject({ agent: 'session-billing', output: 'billing: Was it paid?' });
    expect((await session.status()).checkpoints.map((c) => c.agent)).toEqual(['session-triage', 'session-triage', 'session-billing']);

    const rewound = await session.rewind('cp-2');
    expect(rewound).toEqual({ checkpoint: 'cp-2', message: 'About my invoice.', messages: 2, agent: 'session-triage' });
    const status = await session.status();
    expect(status).toMatchObject({ agent: 'session-triage', messages: 2 });
    expect(status.checkpoints.map((c) => c.id)).toEqual(['cp-1']);
    const again = await session.send('Something else.');
    expect(again).toMatchObject({ agent: 'session-triage', output: 'echo: Something else.', checkpoint: 'cp-4' });
    const lastRequest = t.server.requests('session-triage').at(-1)!;
    expect(messagesOf(lastRequest).filter((m) => m.role !== 'system').map(text)).toEqual(['Hello.', 'echo: Hello.', 'Something else.']);
    expect(await refusal(session.rewind('cp-9'))).toMatch(/Unknown checkpoint "cp-9": this session has cp-1, cp-4/);
  });

  it('a run waiting for approval refuses messages, rewind, fork and clear with the reason; discard answers its calls as not run', async () => {
    t.server.script('session-chat', (r) => {
      const last = messagesOf(r).at(-1)!;
      if (last.role === 'user' && text(last).includes('Deploy')) return { toolCalls: [{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }] };
      return echo(r);
    });
    const session = await start('session-chat');
    await session.send('Hi.');
    const started = await session.send('Deploy to prod.', { wait: false });
    expect(started).toMatchObject({ run: 'run-2', status: 'running' });
    const waiting = await until(() => session.status(), (s) => s.pending.length === 1);
    expect(waiting).toMatchObject({ busy: true, status: 'awaiting_approval', run: { run: 'run-2', status: 'awaiting_approval' } });
    expect(await refusal(session.send('Another thing.'))).toMatch(/Approval pending: run run-2 waits for a decision on deploy \(d1\)/);
    expect(await refusal(session.rewind('cp-1'))).toMatch(/Approval pending/);
    expect(await refusal(session.fork())).toMatch(/Approval pending/);
    expect(await refusal(session.clear())).toMatch(/Approval pending/);
    expect(await refusal(session.resume())).toMatch(/Approval pending/);

    const discarded = await session.discard();
    expect(discarded).toMatchObject({ run: 'run-2', status: 'discarded' });
    const after = await session.send('What happened?');
    expect(after.status).toBe('completed');
    const request = t.server.requests('session-chat').at(-1)!;
    const tool = messagesOf(request).find((m) => m.role === 'tool');
    expect(text(tool)).toMatch(/Not run: the user discarded this run/);
    expect(await refusal(session.discard())).toMatch(/Nothing to discard/);
    expect(await refusal(session.resume())).toMatch(/Nothing to resume: no run of this session failed/);
  });

  it('a run in progress makes the session busy until it is discarded; an approval decided lets the run finish', async () => {
    t.server.script('session-chat', (r) => {
      const last = messagesOf(r).at(-1)!;
      if (last.role === 'user' && text(last).includes('hang')) return { fault: 'hang' };
      if (last.role === 'user' && text(last).includes('Deploy')) return { toolCalls: [{ id: 'd2', name: 'deploy', arguments: { env: 'staging' } }] };
      return echo(r);
    });
    const session = await start('session-chat');
    await session.send('Please hang.', { wait: false });
    await until(() => t.server.requests('session-chat').filter((r) => lastUser(r) === 'Please hang.').length, (n) => n > 0);
    expect(await refusal(session.send('Hello?'))).toMatch(/busy: run run-1 is in progress/);
    expect(await refusal(session.rewind('cp-1'))).toMatch(/busy/);
    expect(await session.discard()).toMatchObject({ run: 'run-1', status: 'discarded' });

    const deploying = session.send('Deploy to staging.');
    await until(() => session.status(), (s) => s.pending.length === 1);
    await session.run.approve('d2');
    const done = await deploying;
    expect(done).toMatchObject({ run: 'run-2', status: 'completed', turns: 2 });
  });

  it('a failed run (a provider outage past its retries) is resumed after the provider recovers; a new message gives a failed run up', async () => {
    let down = true;
    t.server.script('session-flaky', (r) => (down ? { fault: 'status', status: 503 } : { text: `up: ${lastUser(r).slice(0, 30)}` }));
    const session = await start('session-flaky');
    const failed = await session.send('Are you there?');
    expect(failed).toMatchObject({ run: 'run-1', status: 'failed' });
    expect(failed.error).toMatch(/503/);
    expect(await session.status()).toMatchObject({ status: 'failed', busy: false, run: { run: 'run-1', status: 'failed' } });
    down = false;
    const resumed = await session.resume();
    expect(resumed).toMatchObject({ run: 'run-1', status: 'completed', output: 'up: Are you there?' });

    down = true;
    expect((await session.send('Again?')).status).toBe('failed');
    down = false;
    const next = await session.send('Now?');
    expect(next).toMatchObject({ run: 'run-3', status: 'completed' });
    const events = await session.events();
    expect(ofType(events, 'session.discarded')).toMatchObject([{ run: 'run-2', reason: 'a new message was sent' }]);
    expect(ofType(events, 'session.resumed')).toMatchObject([{ run: 'run-1' }]);
  });

  it('fork copies conversation, state and checkpoints into a new session; clear starts an empty one and keeps the old; hooks hear startup, fork, clear, resume', async () => {
    t.server.script('session-hooked', echo);
    const session = await start('session-hooked', { state: { user: 'ada' } });
    await session.send('One.');
    await session.send('Two.');
    const fork = await session.fork();
    expect(fork.workflowId).not.toBe(session.workflowId);
    const forked = await until(() => fork.status(), (s) => s.messages === 4, { retryErrors: true });
    expect(forked).toMatchObject({ state: { user: 'ada' }, agent: 'session-hooked' });
    expect(forked.checkpoints.map((c) => c.message)).toEqual(['One.', 'Two.']);
    expect(await fork.transcript()).toEqual(await session.transcript());
    await fork.send('Three, in the fork.');
    expect((await fork.rewind('cp-2')).message).toBe('Two.');
    expect((await session.status()).messages).toBe(4);

    const cleared = await session.clear();
    const fresh = await until(() => cleared.status(), (s) => s.kind === 'session', { retryErrors: true });
    expect(fresh).toMatchObject({ messages: 0, checkpoints: [], state: { user: 'ada' } });
    expect(await session.status()).toMatchObject({ ended: 'clear', messages: 4 });
    await cleared.send('Hello, fresh.');
    const reply = await session.send('Back to the old one.');
    expect(reply.status).toBe('completed');
    // SessionStart's context reaches the model with the first message.
    const firstRequest = t.server.requests('session-hooked').find((r) => lastUser(r).startsWith('One.'))!;
    expect(lastUser(firstRequest)).toMatch(/hook context: SessionStart startup/);
    const log = readFileSync(hookLog, 'utf8').trim().split('\n');
    expect(log).toEqual(expect.arrayContaining(['SessionStart startup', 'SessionStart fork', 'SessionEnd clear', 'SessionStart clear', 'SessionStart resume']));
    expect(await session.end('logout')).toMatchObject({ kind: 'session', status: 'completed', reason: 'logout', messages: 6 });
    expect(readFileSync(hookLog, 'utf8')).toMatch(/SessionEnd logout/);
  });

  it('a session holding several MB forks too: its conversation is copied in pages within the payload limit', async () => {
    t.server.script('session-chat', (r) => ({ text: `ok ${lastUser(r).length}` }));
    const session = await start('session-chat');
    const big = (i: number) => `${i}: ${'x'.repeat(300_000)}`;
    for (let i = 0; i < 12; i++) await session.send(big(i));
    const source = await session.transcript();
    const bytes = JSON.stringify(source).length;
    expect(bytes).toBeGreaterThan(3_500_000);
    const fork = await session.fork({ workflowId: `${session.workflowId}-big-fork` });
    await until(() => fork.status(), (s) => s.messages === 24 && !s.busy, { retryErrors: true, timeoutMs: 120_000 });
    expect(await fork.transcript()).toEqual(source);
    const copies = activityEvents(await historyOf(fork.run)).filter((a) => a.type === 'readConversation');
    expect(copies.length).toBeGreaterThanOrEqual(4);
    // Every page is a payload well under Temporal's 2 MB limit.
    const history = await historyOf(fork.run);
    const results = (history.events ?? []).flatMap((e) => e.activityTaskCompletedEventAttributes?.result?.payloads ?? []);
    expect(Math.max(...results.map((p) => p.data?.length ?? 0))).toBeLessThan(1_100_000);
    const answer = await fork.send('And one more.');
    expect(answer).toMatchObject({ status: 'completed', output: 'ok 13', checkpoint: 'cp-13' });
  }, 240_000);

  it('a session of 300 messages continues as new with nothing lost; the model sees a view within its budget; rewind reaches an earlier execution', async () => {
    t.server.script('session-chat', echo);
    const session = await start('session-chat', { options: { continueAsNewAfterEvents: 600, contextTokens: 2_000 } });
    for (let i = 1; i <= 300; i++) {
      const r = await session.send(`message ${i}`);
      expect(r).toMatchObject({ run: `run-${i}`, status: 'completed', output: `echo: message ${i}` });
    }
    const status = await session.status();
    expect(status).toMatchObject({ messages: 600, runs: 300, busy: false });
    expect(status.checkpoints).toHaveLength(100);
    expect(status.checkpoints[0]!.id).toBe('cp-201');
    const transcript = await session.transcript();
    expect(transcript.map((m) => m.content)).toEqual(Array.from({ length: 300 }, (_, i) => [`message ${i + 1}`, `echo: message ${i + 1}`]).flat());
    const events = await session.events();
    expect(ofType(events, 'session.run_finished')).toHaveLength(300);
    expect(ofType(events, 'run.continued').length).toBeGreaterThanOrEqual(3);
    // The model's view: the first message, a marker, then the latest messages within about 8,000 characters.
    const last = t.server.requests('session-chat').at(-1)!;
    const seen = messagesOf(last).filter((m) => m.role !== 'system');
    expect(text(seen[0])).toBe('message 1');
    expect(seen.length).toBeLessThan(400);
    expect(text(seen.at(-1))).toBe('message 300');
    expect(text(seen[1])).toMatch(/earlier messages are left out/);

    // The recent runs' results are carried: one from an earlier execution, its answer read across the chain.
    expect(await session.result('run-250')).toMatchObject({ status: 'completed', output: 'echo: message 250' });
    expect(await refusal(session.result('run-150'))).toMatch(/Unknown run "run-150"/);
    // cp-201's message is held by an earlier execution: the rewind continues as new from it.
    const { firstHeld } = await session.run.workflow.query('transcript', {}) as { firstHeld: number };
    expect(firstHeld).toBeGreaterThan(400);
    const rewound = await session.rewind('cp-201');
    expect(rewound).toMatchObject({ message: 'message 201', messages: 400 });
    const again = await session.send('message 201, edited');
    expect(again).toMatchObject({ run: 'run-301', output: 'echo: message 201, edited' });
    const after = await session.transcript();
    expect(after).toHaveLength(402);
    expect(after.slice(398).map((m) => m.content)).toEqual(['message 200', 'echo: message 200', 'message 201, edited', 'echo: message 201, edited']);
  }, 400_000);

  it('continues as new before its Update budget runs out, with nothing lost', async () => {
    t.server.script('session-chat', echo);
    const session = await start('session-chat', { options: { continueAsNewAfterUpdates: 3 } });
    const answers = [];
    for (let i = 1; i <= 7; i++) answers.push(await session.send(`u${i}`));
    expect(answers.map((a) => a.output)).toEqual(['u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7'].map((m) => `echo: ${m}`));
    const events = await session.events();
    expect(ofType(events, 'run.continued').length).toBeGreaterThanOrEqual(2);
    expect((await session.transcript()).map((m) => m.content)).toEqual(['u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7'].flatMap((m) => [m, `echo: ${m}`]));
    expect((await session.status()).checkpoints.map((c) => c.id)).toEqual(['cp-1', 'cp-2', 'cp-3', 'cp-4', 'cp-5', 'cp-6', 'cp-7']);
  });

  it('any Temporal client can start one with plain JSON; bad input and bad Updates are refused with what is wrong', async () => {
    t.server.script('session-chat', echo);
    const raw = t.keel.env.client.workflow;
    const handle = await raw.start('agentSession', { taskQueue: t.keel.taskQueue, workflowId: `raw-session-${Date.now()}`, args: [{ agent: 'session-chat', state: { tenant: 't1' } }] });
    const answer = await handle.executeUpdate<{ status: string; answer: number }, [unknown]>('send', { args: [{ message: 'plain JSON' }] });
    expect(answer).toMatchObject({ status: 'completed', answer: 1 });
    const why = (update: string, arg: unknown) => handle.executeUpdate(update, { args: [arg] }).then(() => 'accepted', (e: Error & { cause?: Error & { type?: string } }) => `${e.cause?.type}: ${e.cause?.message}`);
    expect(await why('send', { message: '' })).toMatch(/KeelSessionRefused: Invalid send: "message" must be a non-empty string/);
    expect(await why('send', { text: 'hi' })).toMatch(/"text" is not a field of send/);
    expect(await why('rewind', {})).toMatch(/Invalid rewind: "checkpoint"/);
    expect(await why('end', { reason: 'bored' })).toMatch(/must be logout, prompt_input_exit or other/);
    expect(await handle.query('status')).toMatchObject({ messages: 2, state: { tenant: 't1' } });
    const bad = await raw.start('agentSession', { taskQueue: t.keel.taskQueue, workflowId: `raw-bad-session-${Date.now()}`, args: [{ agent: 'session-chat', state: [1, 2] }] });
    await expect(bad.result()).rejects.toThrow();
    const failure = await bad.result().catch((e: Error & { cause?: Error }) => e.cause?.message ?? e.message);
    expect(failure).toMatch(/Invalid agentSession input: "state" must be a JSON object of keys and values/);
  });

  it("a session's run calls a sub-agent as a plain run does; a run sent without waiting is waited for by its ID", async () => {
    t.server.script('session-delegator', (r) =>
      messagesOf(r).at(-1)!.role === 'tool' ? { text: `billing says: ${text(messagesOf(r).at(-1)).slice(0, 40)}` } : { toolCalls: [{ name: 'session-billing', arguments: { input: lastUser(r) } }] },
    );
    t.server.script('session-billing', (r) => ({ text: `paid (${lastUser(r)})` }));
    const session = await start('session-delegator');
    const { run } = await session.send('Was A7 paid?', { wait: false });
    const answer = await session.result(run);
    expect(answer).toMatchObject({ run: 'run-1', status: 'completed', turns: 2 });
    expect(answer.output).toMatch(/billing says: .*paid \(Was A7 paid\?\)/);
    expect((await session.send('And B2?')).output).toMatch(/paid \(And B2\?\)/);
    const events = await session.events();
    expect(ofType(events, 'subagent.finished').map((e) => e.status)).toEqual(['completed', 'completed']);
    expect(await refusal(session.result('run-9'))).toMatch(/Unknown run "run-9"/);
  });

  it('a session cancelled from outside ends its runs and tells its SessionEnd hooks "other"', async () => {
    t.server.script('session-hooked', (r) => (lastUser(r).includes('hang') ? { fault: 'hang' } : echo(r)));
    const session = await start('session-hooked');
    await session.send('Hello.');
    await session.send('Now hang.', { wait: false });
    await until(() => t.server.requests('session-hooked').filter((r) => lastUser(r).startsWith('Now hang.')).length, (n) => n > 0);
    await session.run.cancel();
    await expect(session.run.result()).rejects.toThrow(/was cancelled/);
    expect(readFileSync(hookLog, 'utf8')).toMatch(/SessionEnd other/);
    expect(ofType(await session.events(), 'run.finished')).toEqual([expect.objectContaining({ status: 'cancelled' })]);
  });

  it('a failed run is carried across continue-as-new and resumed in the next execution', async () => {
    let down = true;
    t.server.script('session-flaky', (r) => (down ? { fault: 'status', status: 503 } : { text: `up: ${lastUser(r).slice(0, 30)}` }));
    const session = await start('session-flaky', { options: { continueAsNewAfterUpdates: 1 } });
    expect(await session.send('Still there?')).toMatchObject({ run: 'run-1', status: 'failed' });
    await until(() => session.events(), (events) => ofType(events, 'run.continued').length > 0);
    expect(await session.status()).toMatchObject({ status: 'failed', run: { run: 'run-1', status: 'failed' } });
    down = false;
    expect(await session.resume()).toMatchObject({ run: 'run-1', status: 'completed', output: 'up: Still there?', turns: 1 });
    expect((await session.transcript()).map((m) => m.content)).toEqual(['Still there?', 'up: Still there?']);
  });
});

describe('sessions with the other features of a run', () => {
  it("streams: each message's text arrives on the session's one stream, in order, before its run finishes; the stream ends with the session", async () => {
    t.server.script('session-chat', [
      { text: 'Hello Ada, nice to meet you.', chunkDelayMs: 10 },
      { text: 'You live in Lisbon, Ada.', chunkDelayMs: 10 },
    ]);
    const session = await start('session-chat', { options: { stream: true } });
    const chunks: { type: string; text?: string; run?: string }[] = [];
    const reading = (async () => {
      for await (const chunk of session.stream()) chunks.push({ type: chunk.type, ...('text' in chunk && { text: chunk.text as string }), ...('run' in chunk && { run: chunk.run as string }) });
    })();
    await session.send('My name is Ada.');
    await session.send('Where do I live?');
    await session.end('logout');
    await reading;
    const finished = (run: string) => chunks.findIndex((c) => c.type === 'session.run_finished' && c.run === run);
    const textOf = (from: number, to: number) => chunks.slice(from, to).filter((c) => c.type === 'text.delta').map((c) => c.text).join('');
    expect(finished('run-1')).toBeGreaterThan(0);
    expect(finished('run-2')).toBeGreaterThan(finished('run-1'));
    expect(textOf(0, finished('run-1'))).toBe('Hello Ada, nice to meet you.');
    expect(textOf(finished('run-1'), finished('run-2'))).toBe('You live in Lisbon, Ada.');
    expect(chunks.filter((c) => c.type === 'text.delta').length).toBeGreaterThan(1);
    expect(chunks.at(-1)?.type).toBe('stream.end');
    // The messages stored are the answers, whole, as without streaming.
    const answers = (await session.transcript()).filter((m) => m.role === 'assistant').map((m) => m.content);
    expect(answers).toEqual(['Hello Ada, nice to meet you.', 'You live in Lisbon, Ada.']);
  });

  it("has a state: its instructions' {user} filled at its start, one message's tool writes it, the next's reads it; status and a fork carry it", async () => {
    t.server.script('session-notes', (request) => {
      const messages = messagesOf(request);
      const last = messages.at(-1)!;
      if (last.role === 'tool') return { text: `ok: ${text(last)}` };
      return lastUser(request).includes('Remember')
        ? { toolCalls: [{ id: 'w1', name: 'remember', arguments: { key: 'city', value: 'Lisbon' } }] }
        : { toolCalls: [{ id: 'r1', name: 'recall', arguments: { key: 'city' } }] };
    });
    const session = await start('session-notes', { state: { user: 'Ada' } });
    expect((await session.send('Remember that I live in Lisbon.')).output).toBe('ok: remembered city');
    expect((await session.send('Where do I live?')).output).toBe('ok: Lisbon');
    expect(text(messagesOf(t.server.requests('session-notes')[0]!)[0])).toBe('You take notes for Ada.');
    expect((await session.status()).state).toEqual({ user: 'Ada', city: 'Lisbon' });
    expect(await session.run.state()).toEqual({ user: 'Ada', city: 'Lisbon' });
    const fork = await session.fork();
    const forked = await until(() => fork.status(), (s) => s.messages > 0, { retryErrors: true });
    expect(forked.state).toEqual({ user: 'Ada', city: 'Lisbon' });
    // A rewind does not roll the state back.
    await session.rewind('cp-1');
    expect((await session.status()).state).toEqual({ user: 'Ada', city: 'Lisbon' });
  });

  it('runs client tools: a client serving the session answers each message\'s calls', async () => {
    t.server.script('session-painter', (request) => {
      const last = messagesOf(request).at(-1)!;
      if (last.role === 'tool') return { text: `painting it ${text(last)}` };
      return { toolCalls: [{ id: `p${messagesOf(request).length}`, name: 'pick_color', arguments: { prompt: lastUser(request) } }] };
    });
    const session = await start('session-painter');
    const stop = new AbortController();
    const colors = ['teal', 'ochre'];
    const serving = session.run.serveClientTools({ pick_color: () => colors.shift()! }, { signal: stop.signal });
    expect((await session.send('The door?')).output).toBe('painting it teal');
    expect((await session.send('The window?')).output).toBe('painting it ochre');
    stop.abort();
    await serving.catch(() => undefined);
    const finished = ofType(await session.events(), 'tool.finished').filter((e) => e.tool === 'pick_color');
    expect(finished.map((e) => [e.stage, e.result])).toEqual([
      ['client', 'teal'],
      ['client', 'ochre'],
    ]);
  });
});
