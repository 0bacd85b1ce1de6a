/**
 * Approvals from the command line: `keel pending`, `keel approve`, `keel deny`, `keel mode`,
 * `keel run` without a terminal, and the inline prompt (src/client/cli/approval-prompt.ts)
 * driven through streams. The runs are real, on the tests' dev server and the worker of this
 * file; the CLI runs as a child process (bin/keel.js, compiled code).
 */
import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunHandle } from '../src/client/agent-client.js';
import { parseEdit } from '../src/client/cli/approval-commands.js';
import { CHOICES, parseChoice, parseJsonObject, promptForApprovals, type PromptOutcome } from '../src/client/cli/approval-prompt.js';
import {
  createStyle,
  formatAgo,
  formatEvent,
  formatIn,
  formatPending,
  formatResult,
  formatStatus,
  shellQuote,
  type FollowContext,
} from '../src/client/cli/format.js';
import type { PendingApproval } from '../src/core/approval.js';
import { defineAgent, defineTool } from '../src/core/define.js';
import { defineGuardrail } from '../src/core/guardrails.js';
import type { RunEvent } from '../src/core/run.js';
import { keel } from './support/cli.js';
import { useKeel } from './support/keel.js';
import type { ScriptStep } from './support/model-server.js';
import { until as waitUntil } from './support/until.js';


/** What each tool ran with, by workflow ID. */
const ran = new Map<string, { tool: string; args: unknown }[]>();
const record = (workflowId: string, tool: string, args: unknown) => ran.set(workflowId, [...(ran.get(workflowId) ?? []), { tool, args }]);

const send = defineTool({
  name: 'send',
  description: 'Send a message to someone.',
  input: z.object({ to: z.string(), text: z.string() }),
  requiresApproval: true,
  execute: (args, ctx) => {
    record(ctx.workflowId, 'send', args);
    return `sent to ${args.to}`;
  },
});

/** Two read-only tools that need approval: the calls of one turn wait side by side. */
const lookup = (name: string) =>
  defineTool({
    name,
    description: `Look something up (${name}).`,
    input: z.object({ q: z.string() }),
    readOnly: true,
    requiresApproval: true,
    execute: (args, ctx) => {
      record(ctx.workflowId, name, args);
      return `${name}: found ${args.q}`;
    },
  });

const noSecrets = defineGuardrail({
  name: 'no-secrets',
  check: (subject) => {
    const text = subject.kind === 'toolInput' ? JSON.stringify(subject.arguments) : '';
    return /secret/i.test(text) ? { tripped: true, reason: 'the arguments mention a secret' } : { tripped: false };
  },
});

const suffix = randomUUID().slice(0, 8);
const AGENT = `approval-cli-${suffix}`;
const RUN_AGENT = `approval-cli-run-${suffix}`;
const GUARDED_AGENT = `approval-cli-guarded-${suffix}`;
const RUN_MODEL = `approval-cli-run-${suffix}`;
const GUARDED_MODEL = `approval-cli-guarded-${suffix}`;

const tools = [send, lookup('lookup_a'), lookup('lookup_b')];
const agents = [
  // Each test gives its runs a model of its own (start's `model`), so their scripts stay apart.
  defineAgent({ name: AGENT, instructions: 'Help.', model: 'openai:approval-cli-unused', tools }),
  defineAgent({ name: RUN_AGENT, instructions: 'Help.', model: `openai:${RUN_MODEL}`, tools }),
  defineAgent({ name: GUARDED_AGENT, instructions: 'Help.', model: `openai:${GUARDED_MODEL}`, tools, guardrails: { toolInput: [noSecrets] } }),
];

const t = useKeel(agents);

let models = 0;
/** A model name of its own, scripted with these replies in order. */
function scripted(...replies: ScriptStep[]): string {
  const model = `approval-cli-${suffix}-${++models}`;
  t.server.script(model, replies);
  return model;
}

async function start(model: string, prompt = 'Go.'): Promise<RunHandle> {
  return t.keel.client.start(AGENT, prompt, { model: `openai:${model}` });
}

/** Waits until the run has (at least) `n` calls waiting (also while another process starts it). */
async function waiting(run: RunHandle, n = 1): Promise<PendingApproval[]> {
  const pending = () =>
    run.pending().catch((e: Error) => {
      if (e.name === 'WorkflowNotFoundError') return [];
      throw e;
    });
  return waitUntil(pending, (p) => p.length >= n, { what: `${n} calls of ${run.workflowId} to wait`, timeoutMs: 30_000, intervalMs: 100 });
}

/** The tool results the model was sent in its last request. */
function toolResults(model: string): string[] {
  const messages = t.server.requests(model).at(-1)!.body.messages as { role: string; content: string }[];
  return messages.filter((m) => m.role === 'tool').map((m) => m.content);
}

/** Reads until `done` holds (visibility, for one, is eventually consistent). */
const until = <T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> =>
  waitUntil(read, done, { what, timeoutMs: 30_000, intervalMs: 250 });

describe('keel pending, approve, deny', () => {
  it('keel pending lists the call with the commands to decide it; keel approve runs it and the run completes', async () => {
    const model = scripted({ toolCalls: [{ id: 'c1', name: 'send', arguments: { to: 'bob', text: 'hello' } }] }, { text: 'done' });
    const run = await start(model);
    await waiting(run);

    // Visibility learns the status awaiting_approval a moment after the run sets it.
    const listed = await until(() => keel(['pending', '--agent', AGENT]), (r) => r.stdout.includes(run.workflowId), 'the run in keel pending');
    expect(listed.code).toBe(0);
    const text = listed.stdout;
    expect(text).toMatch(/^1 call of 1 run waits for approval:$/m);
    expect(text).toContain(`${run.workflowId} · ${AGENT}`);
    expect(text).toMatch(/^ {2}\? send call c1 · turn 1 · waiting since (just now|\d+s ago)$/m);
    expect(text).toContain('    arguments  {"to":"bob","text":"hello"}');
    expect(text).toContain('    asked by   tool: send requires approval');
    expect(text).toContain(`    allow      keel approve ${run.workflowId} c1`);
    expect(text).toContain(`    deny       keel deny ${run.workflowId} c1 --reason "..."`);

    const json = await keel(['pending', '--agent', AGENT, '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({
        workflowId: run.workflowId,
        agent: AGENT,
        calls: [expect.objectContaining({ callId: 'c1', tool: 'send', arguments: { to: 'bob', text: 'hello' }, stage: 'tool', reason: 'send requires approval', turn: 1 })],
      }),
    ]);

    // keel status shows the call too, and keel list takes the status.
    const status = await keel(['status', run.workflowId]);
    expect(status.stdout).toMatch(/status\s+awaiting_approval/);
    expect(status.stdout).toMatch(/now\s+turn 1: awaiting approval of send \(c1\)/);
    expect(status.stdout).toContain('Waiting for approval (1 call)');
    expect(status.stdout).toContain(`    allow      keel approve ${run.workflowId} c1`);
    const list = await keel(['list', '--status', 'awaiting_approval', '--agent', AGENT]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^${run.workflowId}\\s+${AGENT}\\s+awaiting_approval`, 'm'));

    const approved = await keel(['approve', run.workflowId, 'c1']);
    expect(approved.stderr).toBe('');
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain('✓ allowed send (call c1)');
    expect(approved.stdout).toContain('No call of the run waits any more: it goes on.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'done' });
    expect(ran.get(run.workflowId)).toEqual([{ tool: 'send', args: { to: 'bob', text: 'hello' } }]);

    // Decided calls are gone from the list.
    const after = await until(() => keel(['pending', '--agent', AGENT]), (r) => !r.stdout.includes(run.workflowId), 'the run to leave keel pending');
    expect(after.stdout.trim()).toBe(`No run of agent ${AGENT} is waiting for approval.`);
    // A decision for a run that has ended says so.
    const late = await keel(['approve', run.workflowId, 'c1']);
    expect(late.code).toBe(1);
    expect(late.stderr).toMatch(/has ended \(completed\): no call of it waits for a decision/);
  });

  it('keel deny --reason: the tool does not run and the model reads the reason as its result', async () => {
    const model = scripted({ toolCalls: [{ id: 'c1', name: 'send', arguments: { to: 'bob', text: 'hello' } }] }, { text: 'ok, not sent' });
    const run = await start(model);
    await waiting(run);
    const denied = await keel(['deny', run.workflowId, 'c1', '--reason', 'no']);
    expect(denied.code).toBe(0);
    expect(denied.stdout).toContain('✗ denied send (call c1): no');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'ok, not sent' });
    expect(ran.get(run.workflowId)).toBeUndefined();
    // (The OpenAI adapter marks an error result with "Error: ".)
    expect(toolResults(model)).toEqual(['Error: The call to send was denied (approval): no']);
    expect(await run.events()).toContainEqual(expect.objectContaining({ type: 'approval.decided', callId: 'c1', decision: 'deny', by: 'update', reason: 'no' }));
  });

  it('keel approve --edit runs the tool with the edited arguments; an edit that fails the schema is refused (exit 1)', async () => {
    const model = scripted({ toolCalls: [{ id: 'c1', name: 'send', arguments: { to: 'bob', text: 'hello' } }] }, { text: 'done' });
    const run = await start(model);
    await waiting(run);

    const wrong = await keel(['approve', run.workflowId, 'c1', '--edit', '{"to": 5}']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/✗ The run refused to approve call c1: The edited arguments for send do not match its schema: .*to/);
    expect(wrong.stdout).toBe('');
    // Nothing changed: the call still waits.
    expect((await run.pending()).map((p) => p.callId)).toEqual(['c1']);

    // No call ID: the only call that waits.
    const edited = await keel(['approve', run.workflowId, '--edit', '{"to": "carol", "text": "edited"}', '--reason', 'carol instead']);
    expect(edited.code).toBe(0);
    expect(edited.stdout).toContain('✓ allowed send (call c1) with the arguments {"to":"carol","text":"edited"} (carol instead)');
    expect(await run.result()).toMatchObject({ status: 'completed' });
    expect(ran.get(run.workflowId)).toEqual([{ tool: 'send', args: { to: 'carol', text: 'edited' } }]);
    expect(await run.events()).toContainEqual(expect.objectContaining({ type: 'approval.decided', callId: 'c1', decision: 'allow', edited: true }));
  });

  it('checks --edit (and what goes with it) before contacting the server', async () => {
    // An address where nothing listens: any attempt to connect would say so instead.
    const offline = { env: { TEMPORAL_ADDRESS: '127.0.0.1:1' } };
    const notJson = await keel(['approve', 'some-run', 'c1', '--edit', '{to: carol}'], offline);
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toMatch(/--edit takes the call's new arguments as a JSON object, such as --edit '\{"city": "Paris"\}'\. That is not JSON/);
    expect(notJson.stderr).not.toContain('Cannot reach');
    const array = await keel(['approve', 'some-run', 'c1', '--edit', '[1, 2]'], offline);
    expect(array.code).toBe(1);
    expect(array.stderr).toMatch(/That is JSON, but not an object/);
    const both = await keel(['approve', 'some-run', 'c1', '--all'], offline);
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(/Give a call ID or --all, not both/);
    const editAll = await keel(['approve', 'some-run', '--all', '--edit', '{}'], offline);
    expect(editAll.code).toBe(1);
    expect(editAll.stderr).toMatch(/--edit changes the arguments of one call/);
    expect(() => parseEdit('{"a": 1}')).not.toThrow();
  });

  it('keel approve --signal sends the plain Signal; a bad one is recorded by the run, not refused', async () => {
    const model = scripted({ toolCalls: [{ id: 'c1', name: 'send', arguments: { to: 'bob', text: 'hello' } }] }, { text: 'done' });
    const run = await start(model);
    await waiting(run);

    const stray = await keel(['approve', run.workflowId, 'no-such-call', '--signal']);
    expect(stray.code).toBe(0);
    expect(stray.stdout).toContain('Sent: allowed call no-such-call (as a Signal: fire and forget)');
    expect(stray.stdout).toMatch(/recorded as an approval\.rejected event/);
    const rejected = await until(() => run.events(), (events) => events.some((e) => e.type === 'approval.rejected'), 'approval.rejected');
    expect(rejected.find((e) => e.type === 'approval.rejected')).toMatchObject({ callId: 'no-such-call', error: expect.stringMatching(/not waiting for a decision/) });
    expect((await run.pending()).map((p) => p.callId)).toEqual(['c1']);

    const sent = await keel(['approve', run.workflowId, 'c1', '--signal']);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toContain('Sent: allowed send (call c1) (as a Signal: fire and forget)');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'done' });
    expect(ran.get(run.workflowId)).toHaveLength(1);
    expect(await run.events()).toContainEqual(expect.objectContaining({ type: 'approval.decided', callId: 'c1', decision: 'allow', by: 'signal' }));
  });

  it('with two calls waiting: no call ID lists them (exit 1); --all approves both', async () => {
    const model = scripted(
      {
        toolCalls: [
          { id: 'a1', name: 'lookup_a', arguments: { q: 'one' } },
          { id: 'b1', name: 'lookup_b', arguments: { q: 'two' } },
        ],
      },
      { text: 'found both' },
    );
    const run = await start(model);
    await waiting(run, 2);

    const unclear = await keel(['approve', run.workflowId]);
    expect(unclear.code).toBe(1);
    expect(unclear.stdout).toBe('');
    expect(unclear.stderr).toContain(`2 calls of run ${run.workflowId} wait for a decision:`);
    expect(unclear.stderr).toMatch(/\? lookup_a call a1/);
    expect(unclear.stderr).toMatch(/\? lookup_b call b1/);
    expect(unclear.stderr).toContain(`Pass the call ID (keel approve ${run.workflowId} <call>), or --all to approve them all.`);
    expect(await run.pending()).toHaveLength(2);

    const all = await keel(['approve', run.workflowId, '--all']);
    expect(all.code).toBe(0);
    expect(all.stdout).toContain('✓ allowed lookup_a (call a1)');
    expect(all.stdout).toContain('✓ allowed lookup_b (call b1)');
    expect(all.stdout).toContain('No call of the run waits any more: it goes on.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'found both' });
    expect(ran.get(run.workflowId)?.map((r) => r.tool).sort()).toEqual(['lookup_a', 'lookup_b']);
  });

  it('keel deny --all denies every waiting call', async () => {
    const model = scripted(
      {
        toolCalls: [
          { id: 'a1', name: 'lookup_a', arguments: { q: 'one' } },
          { id: 'b1', name: 'lookup_b', arguments: { q: 'two' } },
        ],
      },
      { text: 'nothing found' },
    );
    const run = await start(model);
    await waiting(run, 2);
    const denied = await keel(['deny', run.workflowId, '--all', '--reason', 'not now']);
    expect(denied.code).toBe(0);
    expect(denied.stdout).toContain('✗ denied lookup_a (call a1): not now');
    expect(denied.stdout).toContain('✗ denied lookup_b (call b1): not now');
    expect(await run.result()).toMatchObject({ status: 'completed' });
    expect(ran.get(run.workflowId)).toBeUndefined();
    expect(toolResults(model)).toEqual([
      'Error: The call to lookup_a was denied (approval): not now',
      'Error: The call to lookup_b was denied (approval): not now',
    ]);
  });

  it('a run with nothing waiting, or no such run, says so (exit 1)', async () => {
    const model = scripted({ text: 'no tools needed' });
    const run = await start(model);
    await run.result();
    const none = await keel(['deny', run.workflowId]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/has ended \(completed\)/);
    const missing = await keel(['approve', `no-such-run-${suffix}`]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/No run with workflow ID "no-such-run-/);
  });
});

describe('keel mode', () => {
  it("changes the run's permission mode: in dontAsk, a call that needs approval is denied without asking", async () => {
    const model = scripted(
      { toolCalls: [{ id: 'a1', name: 'lookup_a', arguments: { q: 'one' } }] },
      { toolCalls: [{ id: 's1', name: 'send', arguments: { to: 'bob', text: 'hello' } }] },
      { text: 'done' },
    );
    const run = await start(model);
    await waiting(run);

    const bad = await keel(['mode', run.workflowId, 'yolo']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/expected one of default, acceptEdits, plan, dontAsk, bypassPermissions/);

    const set = await keel(['mode', run.workflowId, 'dontAsk']);
    expect(set.code).toBe(0);
    expect(set.stdout).toContain(`Permission mode of ${run.workflowId} set to dontAsk`);
    await until(() => run.status(), (s) => s.permissionMode === 'dontAsk', 'the mode in the status');
    const status = await keel(['status', run.workflowId]);
    expect(status.stdout).toMatch(/mode\s+dontAsk/);

    // The call that already waits is still a person's to decide.
    expect((await keel(['approve', run.workflowId])).code).toBe(0);
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'done' });
    // The next one was denied at once, without waiting.
    expect(ran.get(run.workflowId)?.map((r) => r.tool)).toEqual(['lookup_a']);
    expect(toolResults(model).at(-1)).toMatch(/The call to send was denied \(permissions\): mode dontAsk/);
    const events = await run.events();
    expect(events).toContainEqual(expect.objectContaining({ type: 'permission.mode', mode: 'dontAsk', by: 'signal' }));
    expect(events.filter((e) => e.type === 'approval.requested')).toHaveLength(1);
  });
});

describe('keel run without a terminal', () => {
  it('prints the commands that decide a waiting call, keeps following, and goes on once someone decides', async () => {
    t.server.script(RUN_MODEL, [{ toolCalls: [{ id: 'c1', name: 'send', arguments: { to: 'bob', text: 'hi' } }] }, { text: 'all right' }]);
    const id = `approval-cli-run-${randomUUID().slice(0, 8)}`;
    const following = keel(['run', RUN_AGENT, 'Send bob a hi.', '--id', id, '--task-queue', t.keel.taskQueue]);
    await waiting(t.keel.client.getHandle(id));
    const denied = await keel(['deny', id, 'c1', '--reason', 'not today']);
    expect(denied.code).toBe(0);
    const { code, stdout } = await following;
    expect(code).toBe(0);
    expect(stdout).toContain('  → send {"to":"bob","text":"hi"}');
    expect(stdout).toContain('  ? send waits for approval (call c1) · tool: send requires approval');
    expect(stdout).toContain('  ⏸ The run waits for a decision on send (call c1). Decide with:');
    expect(stdout).toContain(`      keel approve ${id} c1\n      keel deny ${id} c1 --reason "..."`);
    expect(stdout).toContain('  ✗ send denied by an Update: not today');
    expect(stdout).toContain('  ✗ send The call to send was denied (approval): not today');
    // The run streams: its answer is printed as it arrives, after the decision, not again under "Answer".
    expect(stdout.slice(stdout.indexOf('send denied by an Update'))).toMatch(/\n {2}all right\n/);
    expect(stdout).not.toMatch(/^Answer$/m);
  });

  it('a guardrail that trips blocks the run: it says which and why, and exits 3', async () => {
    t.server.script(GUARDED_MODEL, [{ toolCalls: [{ id: 'c1', name: 'send', arguments: { to: 'bob', text: 'the secret' } }] }]);
    const { code, stdout } = await keel(['run', GUARDED_AGENT, 'Tell bob.', '--task-queue', t.keel.taskQueue]);
    expect(code).toBe(3);
    expect(stdout).toContain("  ⊘ guardrail no-secrets tripped on a tool call's arguments (call c1): the arguments mention a secret");
    expect(stdout).toContain('Blocked\nStopped by guardrail "no-secrets" (a tool call\'s arguments, call c1 of send): the arguments mention a secret');
    expect(stdout).toMatch(/blocked · 1 turn · /);
  });
});

describe('the inline approval prompt (streams in place of a terminal)', () => {
  /** Runs the prompt with these lines as the person's answers; returns what it wrote and its outcomes. */
  async function answer(run: RunHandle, calls: PendingApproval[], lines: string[] | 'eof'): Promise<{ outcomes: PromptOutcome[]; output: string }> {
    const input = new PassThrough();
    const output = new PassThrough();
    let written = '';
    output.on('data', (chunk: Buffer) => (written += chunk.toString()));
    // Answers may arrive before their prompt shows: they are kept in order.
    if (lines === 'eof') input.end();
    else input.write(lines.map((l) => `${l}\n`).join(''));
    const outcomes = await promptForApprovals(calls, run, { input, output }, { width: 120 });
    return { outcomes, output: written };
  }

  it('asks about each waiting call: wrong answers, invalid JSON and a refused edit are asked again; deny takes a reason', async () => {
    const model = scripted(
      {
        toolCalls: [
          { id: 'a1', name: 'lookup_a', arguments: { q: 'one' } },
          { id: 'b1', name: 'lookup_b', arguments: { q: 'two' } },
        ],
      },
      { text: 'done' },
    );
    const run = await start(model);
    const calls = await waiting(run, 2);
    const { outcomes, output } = await answer(run, calls, ['x', 'e', '{q: nope}', '[1]', '{"q": 5}', '{"q": "edited"}', 'd', 'too risky']);

    expect(outcomes).toEqual([
      expect.objectContaining({ callId: 'a1', kind: 'decided', decision: { callId: 'a1', decision: 'allow', arguments: { q: 'edited' } }, receipt: { callId: 'a1', decision: 'allow', pending: 1 } }),
      expect.objectContaining({ callId: 'b1', kind: 'decided', decision: { callId: 'b1', decision: 'deny', reason: 'too risky' } }),
    ]);
    expect(output).toContain(`? Allow lookup_a? (1 of 2) · call a1 · turn 1 · run ${run.workflowId}`);
    expect(output).toContain('  arguments  {"q":"one"}');
    expect(output).toContain('  asked by   tool: lookup_a requires approval');
    expect(output).toContain(`  ${CHOICES} > `);
    expect(output).toContain('  Answer a (allow), d (deny), e (edit the arguments) or A (allow always).');
    expect(output).toContain('  Now: {"q":"one"}');
    expect(output).toMatch(/ {2}That is not JSON \(.*\)\. Try again\./);
    expect(output).toContain('  That is JSON, but not an object: give the arguments as {"name": value, ...}. Try again.');
    expect(output).toMatch(/ {2}✗ The run refused it: The edited arguments for lookup_a do not match its schema: .*q/);
    expect(output).toContain('  ✓ allowed with the edited arguments; 1 other call still waits');
    expect(output).toContain('? Allow lookup_b? (2 of 2) · call b1');
    expect(output).toContain('  Why? The model reads it (Enter for no reason) > ');
    expect(output).toContain('  ✗ denied');

    expect(await run.result()).toMatchObject({ status: 'completed' });
    expect(ran.get(run.workflowId)).toEqual([{ tool: 'lookup_a', args: { q: 'edited' } }]);
    expect(toolResults(model)).toContain('Error: The call to lookup_b was denied (approval): too risky');
  });

  it('allow always remembers a rule: the next call of the tool runs without asking', async () => {
    const model = scripted(
      { toolCalls: [{ id: 'c1', name: 'send', arguments: { to: 'bob', text: 'one' } }] },
      { toolCalls: [{ id: 'c2', name: 'send', arguments: { to: 'bob', text: 'two' } }] },
      { text: 'sent twice' },
    );
    const run = await start(model);
    const { outcomes, output } = await answer(run, await waiting(run), ['A']);
    expect(outcomes).toEqual([expect.objectContaining({ kind: 'decided', decision: { callId: 'c1', decision: 'allow', remember: true } })]);
    expect(output).toContain('  ✓ allowed (and calls like it, for the rest of the run)');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'sent twice' });
    expect(ran.get(run.workflowId)?.map((r) => (r.args as { text: string }).text)).toEqual(['one', 'two']);
    const events = await run.events();
    const decided = events.find((e) => e.type === 'approval.decided');
    expect(decided).toMatchObject({ callId: 'c1', decision: 'allow', remembered: expect.any(String) });
    expect(events.filter((e) => e.type === 'approval.requested')).toHaveLength(1);
    const rule = (decided as { remembered: string }).remembered;
    const status = await keel(['status', run.workflowId]);
    expect(status.stdout).toMatch(new RegExp(`remembered\\s+${rule.replace(/[()*]/g, '\\$&')}`));
  });

  it('when the input ends the call is left waiting; a call decided elsewhere meanwhile is reported gone', async () => {
    const model = scripted({ toolCalls: [{ id: 'c1', name: 'send', arguments: { to: 'bob', text: 'hello' } }] }, { text: 'done' });
    const run = await start(model);
    const calls = await waiting(run);
    const ended = await answer(run, calls, 'eof');
    expect(ended.outcomes).toEqual([{ callId: 'c1', kind: 'unanswered' }]);
    expect((await run.pending()).map((p) => p.callId)).toEqual(['c1']);

    // Someone else decides first: the prompt's answer is refused, and the call no longer waits.
    await run.approve('c1');
    const late = await answer(run, calls, ['a']);
    expect(late.outcomes).toEqual([{ callId: 'c1', kind: 'gone', message: expect.stringMatching(/c1/) }]);
    expect(late.output).toMatch(/✗ The run refused it: /);
    expect(await run.result()).toMatchObject({ status: 'completed' });
  });

  it('reads the choices as typed', () => {
    expect(parseChoice('a')).toBe('allow');
    expect(parseChoice(' allow ')).toBe('allow');
    expect(parseChoice('A')).toBe('always');
    expect(parseChoice('always')).toBe('always');
    expect(parseChoice('d')).toBe('deny');
    expect(parseChoice('D')).toBe('deny');
    expect(parseChoice('e')).toBe('edit');
    expect(parseChoice('')).toBeUndefined();
    expect(parseChoice('maybe')).toBeUndefined();
    expect(parseJsonObject('{"a": 1}')).toEqual({ a: 1 });
    expect(parseJsonObject('null')).toMatch(/not an object/);
    expect(parseJsonObject('{')).toMatch(/not JSON/);
  });
});

describe('formatting approvals and the new events', () => {
  const plain = createStyle(false);
  const at = '2025-01-01T00:00:00.000Z';
  const now = Date.parse('2025-01-01T00:02:30.000Z');

  it('renders the events of the tool-call gate, approvals, guardrails and hooks', () => {
    const events: RunEvent[] = [
      { seq: 1, at, type: 'tool.decided', turn: 1, callId: 'c1', tool: 'Bash', stage: 'permissions', decision: 'ask', reason: 'rule Bash(rm:*)' },
      { seq: 2, at, type: 'tool.decided', turn: 1, callId: 'c1', tool: 'Bash', stage: 'redact', decision: 'rewrite', reason: 'removed a token' },
      { seq: 3, at, type: 'approval.requested', turn: 1, callId: 'c1', tool: 'Bash', stage: 'permissions', reason: 'rule Bash(rm:*)', arguments: '{"command":"rm -rf x"}' },
      { seq: 4, at, type: 'approval.decided', turn: 1, callId: 'c1', tool: 'Bash', decision: 'allow', by: 'update', edited: true, remembered: 'Bash(rm -rf x)' },
      { seq: 5, at, type: 'approval.decided', turn: 1, callId: 'c2', tool: 'send', decision: 'deny', by: 'timeout', reason: 'No decision within 1 h' },
      { seq: 6, at, type: 'approval.decided', turn: 1, callId: 'c3', tool: 'send', decision: 'allow', by: 'approver' },
      { seq: 7, at, type: 'approval.decided', turn: 1, callId: 'c4', tool: 'send', decision: 'allow', by: 'signal' },
      { seq: 8, at, type: 'approval.rejected', callId: 'nope', error: 'Call "nope" is not waiting' },
      { seq: 9, at, type: 'permission.mode', mode: 'plan', by: 'signal' },
      { seq: 10, at, type: 'guardrail.tripped', guardrail: 'no-secrets', kind: 'toolInput', reason: 'a secret', callId: 'c5' },
      { seq: 11, at, type: 'hook.failed', event: 'PreToolUse', error: 'timed out after 60 s', callId: 'c6' },
      { seq: 12, at, type: 'hook.context', event: 'SessionStart', text: 'Today is Monday.' },
      { seq: 13, at, type: 'run.finished', status: 'blocked', error: 'blocked by guardrail' },
    ];
    const context: FollowContext = {};
    expect(events.map((e) => formatEvent(e, context, plain, 120))).toEqual([
      '  · Bash permissions says ask: rule Bash(rm:*)',
      '  · Bash redact rewrote the arguments: removed a token',
      '  ? Bash waits for approval (call c1) · permissions: rule Bash(rm:*)',
      '  ✓ Bash allowed by an Update, with edited arguments, remembered as Bash(rm -rf x)',
      '  ✗ send denied at the timeout (its default): No decision within 1 h',
      "  ✓ send allowed by the worker's approver",
      '  ✓ send allowed by a Signal',
      '  ! a decision was refused (call nope): Call "nope" is not waiting',
      '  ⚙ permission mode plan (set by signal)',
      "  ⊘ guardrail no-secrets tripped on a tool call's arguments (call c5): a secret",
      '  ! PreToolUse hook failed (call c6): timed out after 60 s',
      '  ℹ SessionStart hook added context: Today is Monday.',
      undefined,
    ]);
  });

  it('lists pending calls with relative times and the commands, quoted for a shell when needed', () => {
    expect(formatAgo('2025-01-01T00:02:28.000Z', now)).toBe('just now');
    expect(formatAgo('2025-01-01T00:02:00.000Z', now)).toBe('30s ago');
    expect(formatAgo(at, now)).toBe('2m ago');
    expect(formatAgo('2024-12-31T21:00:00.000Z', now)).toBe('3h ago');
    expect(formatAgo('2024-12-28T00:00:00.000Z', now)).toBe('4d ago');
    expect(formatIn('2025-01-01T01:02:30.000Z', now)).toBe('in 1h');
    expect(formatIn(at, now)).toBe('now');
    expect(shellQuote('demo-1a2b')).toBe('demo-1a2b');
    expect(shellQuote("it's odd")).toBe(`'it'\\''s odd'`);

    const call: PendingApproval = { callId: 'c1', tool: 'send', arguments: { to: 'bob' }, stage: 'tool', reason: 'send requires approval', since: at, expires: '2025-01-01T01:00:00.000Z', turn: 2 };
    expect(formatPending([{ workflowId: 'w 1', agent: 'mailer', calls: [call] }], plain, { now })).toEqual([
      '1 call of 1 run waits for approval:',
      '',
      'w 1 · mailer',
      '  ? send call c1 · turn 2 · waiting since 2m ago · expires in 57m',
      '    arguments  {"to":"bob"}',
      '    asked by   tool: send requires approval',
      "    allow      keel approve 'w 1' c1",
      "    deny       keel deny 'w 1' c1 --reason \"...\"",
    ]);
    expect(formatPending([], plain)).toEqual(['No run is waiting for approval.']);
    expect(formatPending([], plain, { agent: 'mailer' })).toEqual(['No run of agent mailer is waiting for approval.']);

    const status = formatStatus(
      { workflowId: 'w1', agent: 'mailer', status: 'awaiting_approval', startTime: new Date(now), uiUrl: 'http://ui' },
      {
        kind: 'run',
        agent: 'mailer',
        status: 'awaiting_approval',
        turns: 2,
        usage: { inputTokens: 1, outputTokens: 1 },
        messages: 3,
        lastSeq: 9,
        pending: [call],
        permissionMode: 'acceptEdits',
        rememberedRules: ['send', 'Bash(npm test)'],
      },
      plain,
      'turn 2: awaiting approval of send (c1)',
      undefined,
      { now },
    );
    expect(status).toContain('status      awaiting_approval');
    expect(status).toContain('mode        acceptEdits (permission mode; change it with: keel mode <run> <mode>)');
    expect(status).toContain('remembered  send, Bash(npm test)');
    expect(status).toContain('Waiting for approval (1 call)');
    expect(status).toContain('    allow      keel approve w1 c1');
  });

  it('prints what blocked a run', () => {
    const lines = formatResult(
      {
        kind: 'run',
        status: 'blocked',
        output: null,
        usage: { inputTokens: 10, outputTokens: 2 },
        turns: 1,
        agent: 'mailer',
        blocked: { guardrail: 'no-secrets', kind: 'toolInput', reason: 'a secret', callId: 'c1', tool: 'send' },
      },
      'http://ui',
      plain,
    );
    expect(lines).toEqual([
      '',
      'Blocked',
      'Stopped by guardrail "no-secrets" (a tool call\'s arguments, call c1 of send): a secret',
      '',
      'blocked · 1 turn · 10 input + 2 output tokens',
      'Temporal UI: http://ui',
    ]);
  });
});
