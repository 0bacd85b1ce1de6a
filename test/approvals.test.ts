/**
 * Human approval of tool calls, on a real dev server with the scripted model: a run waits,
 * durably, for a decision by Update, by Signal (from the `temporal` CLI too) or from the
 * worker's approver; permission rules and modes decide most calls without a person.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApplicationFailure } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { ApprovalRejectedError, type RunHandle } from '../src/client/agent-client.js';
import type { PendingApproval } from '../src/core/approval.js';
import { defineAgent, defineTool } from '../src/core/define.js';
import { ErrorTypes, innermostError } from '../src/core/errors.js';
import type { RunEvent } from '../src/core/run.js';
import { Approvals } from '../src/workflows/approvals.js';
import type { Run } from '../src/workflows/run-state.js';
import { runCommand } from './support/cli.js';
import { activityEvents, decode, eventTypes, historyOf } from './support/history.js';
import { providersFor, startKeel, TEMPORAL_ADDRESS, useKeel, workflowBundle } from './support/keel.js';
import { until as waitUntil } from './support/until.js';

const until = <T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000) => waitUntil(read, ok, { timeoutMs, retryErrors: true });


/** What each tool call did, by workflow ID: the effect a user would look for. */
const effects = new Map<string, string[]>();
const record = (workflowId: string, what: string) => effects.set(workflowId, [...(effects.get(workflowId) ?? []), what]);

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploy the service to an environment.',
  input: z.object({ env: z.enum(['staging', 'prod']), version: z.string().optional() }),
  requiresApproval: true,
  execute: ({ env, version }, ctx) => {
    record(ctx.workflowId, `deploy ${env}${version ? ` ${version}` : ''}`);
    return `deployed to ${env}`;
  },
});

/** As in Claude Code, a command asks unless a rule allows it. */
const bash = defineTool({
  name: 'Bash',
  description: 'Run a shell command.',
  input: z.object({ command: z.string() }),
  requiresApproval: true,
  execute: ({ command }, ctx) => {
    record(ctx.workflowId, `bash ${command}`);
    return `ran: ${command}`;
  },
});

const peek = defineTool({
  name: 'peek',
  description: 'Read a value.',
  input: z.object({ key: z.string() }),
  readOnly: true,
  execute: ({ key }, ctx) => {
    record(ctx.workflowId, `peek ${key}`);
    return `value of ${key}`;
  },
});

const MODEL = 'openai:approvals';
const retry = { retry: { initialInterval: '50ms', maximumInterval: '200ms' } };

const ops = defineAgent({
  name: 'ops',
  instructions: 'You operate the service.',
  model: MODEL,
  tools: [deploy, bash, peek],
  modelSettings: retry,
  permissions: {
    allow: ['Bash(git status)', 'Bash(npm run test:*)', 'peek'],
    ask: ['Bash(git push:*)'],
    deny: ['Bash(rm *)'],
  },
});

const timed = defineAgent({
  name: 'ops-timed',
  instructions: 'You operate the service.',
  model: MODEL,
  tools: [deploy],
  modelSettings: retry,
  approval: { timeout: '2s' },
});

const lenient = defineAgent({
  name: 'ops-lenient',
  instructions: 'You operate the service.',
  model: MODEL,
  tools: [deploy],
  modelSettings: retry,
  approval: { timeout: '1s', default: 'allow' },
});

/** Its PreToolUse hook takes a while: a decision can arrive before the call waits. */
const slowHook = defineAgent({
  name: 'ops-slow-hook',
  instructions: 'You operate the service.',
  model: MODEL,
  tools: [deploy],
  modelSettings: retry,
  hooks: { PreToolUse: [{ matcher: 'deploy', hooks: [{ type: 'command', command: 'sleep 2' }] }] },
});

/** Takes any fields besides its name (z.looseObject): an edit may add some. */
const label = defineTool({
  name: 'label',
  description: 'Label a release.',
  input: z.looseObject({ name: z.string(), meta: z.object({ owner: z.string() }).optional() }),
  requiresApproval: true,
  execute: (args, ctx) => {
    record(ctx.workflowId, `label ${JSON.stringify(args)}`);
    return 'labelled';
  },
});
const labeller = defineAgent({ name: 'ops-label', instructions: 'You label releases.', model: MODEL, tools: [label], modelSettings: retry });

const t = useKeel([ops, timed, lenient, slowHook, labeller]);

/** A run of `agent` on a model of its own, scripted with `steps`. */
async function start(agent: string, steps: Parameters<typeof t.server.script>[1], options: { permissionMode?: 'plan' | 'dontAsk' | 'acceptEdits' | 'bypassPermissions' } = {}) {
  const model = `approvals-${randomUUID().slice(0, 8)}`;
  t.server.script(model, steps);
  const run = await t.keel.client.start(agent, 'Ship it.', { model: `openai:${model}`, ...options });
  return { run, model };
}


const waitingFor = (run: RunHandle, n = 1): Promise<PendingApproval[]> => until(() => run.pending(), (p) => p.length >= n);
const events = async (run: RunHandle, type: RunEvent['type']) => (await run.events()).filter((e) => e.type === type);
/** The tool results the model received in its last request. */
const lastToolResults = (model: string): string => JSON.stringify(t.server.requests(model).at(-1)!.body.messages.filter((m: { role: string }) => m.role === 'tool'));

const deployThenAnswer = (args: Record<string, unknown> = { env: 'prod' }) => [
  { toolCalls: [{ id: 'd1', name: 'deploy', arguments: args }] },
  { text: 'Done.' },
];

describe('a call that requires approval', () => {
  it('waits with status awaiting_approval and its pending call, then runs when approved by Update', async () => {
    const { run } = await start('ops', deployThenAnswer());
    const [pending] = await waitingFor(run);
    expect(pending).toMatchObject({ callId: 'd1', tool: 'deploy', arguments: { env: 'prod' }, stage: 'tool', reason: 'deploy requires approval', turn: 1 });
    expect(Date.parse(pending!.since)).toBeGreaterThan(Date.now() - 60_000);
    expect((await run.status()).status).toBe('awaiting_approval');
    // The search attribute is kept current: `keel pending` and the UI find waiting runs.
    await until(() => t.keel.client.pending(), (runs) => runs.some((p) => p.run.workflowId === run.workflowId));
    expect(await run.currentDetails()).toMatch(/awaiting approval of deploy \(d1\)/);
    expect(effects.get(run.workflowId)).toBeUndefined();

    const receipt = await run.approve('d1');
    expect(receipt).toEqual({ callId: 'd1', decision: 'allow', pending: 0 });
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Done.' });
    expect(effects.get(run.workflowId)).toEqual(['deploy prod']);
    expect((await run.describe()).status).toBe('completed');
    const decided = await events(run, 'approval.decided');
    expect(decided).toEqual([expect.objectContaining({ callId: 'd1', decision: 'allow', by: 'update' })]);
  });

  it('denied: the model reads the reason as the call result, and the tool never runs', async () => {
    const { run, model } = await start('ops', deployThenAnswer());
    await waitingFor(run);
    await run.deny('d1', 'Not on a Friday.');
    expect(await run.result()).toMatchObject({ status: 'completed' });
    expect(effects.get(run.workflowId)).toBeUndefined();
    expect(lastToolResults(model)).toContain('Not on a Friday.');
    const finished = await events(run, 'tool.finished');
    expect(finished[0]).toMatchObject({ isError: true, stage: 'approval' });
  });

  it('the Update refuses unknown calls, decided calls and bad edits before writing history', async () => {
    const { run } = await start('ops', deployThenAnswer());
    await waitingFor(run);
    const before = (await historyOf(run)).events!.length;
    await expect(run.approve('nope')).rejects.toThrow(/Call "nope" is not waiting for a decision in this run; waiting: d1/);
    await expect(run.approve('d1', { arguments: { env: 'moon' } })).rejects.toThrow(/edited arguments for deploy do not match its schema: env:/);
    await expect(run.decide({ callId: 'd1', decision: 'maybe' as 'allow' })).rejects.toThrow(ApprovalRejectedError);
    // Rejected in the validator: no update was accepted, nothing was written.
    const history = await historyOf(run);
    expect(eventTypes(history).filter((e) => e.includes('UPDATE'))).toEqual([]);
    expect(history.events!.length).toBe(before);
    expect((await run.pending()).map((p) => p.callId)).toEqual(['d1']);

    await run.approve('d1');
    await expect(run.approve('d1')).rejects.toThrow(/not waiting for a decision/);
    expect(await run.result()).toMatchObject({ status: 'completed' });
  });

  it('every refusal through the Update is a non-retryable failure of one type, naming what is wrong', async () => {
    const { run } = await start('ops', deployThenAnswer());
    await waitingFor(run);
    const refusal = async (decided: Promise<unknown>) => {
      const err: unknown = await decided.then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(ApprovalRejectedError);
      const failure = innermostError(err);
      expect(failure).toBeInstanceOf(ApplicationFailure);
      expect(failure).toMatchObject({ type: ErrorTypes.ApprovalRejected, nonRetryable: true });
      return failure.message;
    };
    expect(await refusal(run.approve('nope'))).toMatch(/Call "nope" is not waiting/);
    expect(await refusal(run.decide({ callId: 'd1', decision: 'maybe' as 'allow' }))).toMatch(/"decision" must be "allow" or "deny"/);
    expect(await refusal(run.approve('d1', { arguments: { env: 'moon' } }))).toMatch(/do not match its schema/);
    expect(await refusal(run.approve('d1', { arguments: { env: 'staging', region: 'eu' } }))).toMatch(/"region".*deploy takes: env, version/);
    await run.approve('d1');
    expect(await run.result()).toMatchObject({ status: 'completed' });
  });

  it('a decision for a call already decided is refused the same way', () => {
    const approvals = new Approvals({ agent: { tools: [] } } as unknown as Run, {});
    approvals.expect(1, ops.spec, [{ id: 'd1', name: 'deploy' }]);
    approvals.receive(approvals.check({ callId: 'd1', decision: 'allow' }), 'update');
    let thrown: unknown;
    try {
      approvals.check({ callId: 'd1', decision: 'deny' });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ApplicationFailure);
    expect(thrown).toMatchObject({ type: ErrorTypes.ApprovalRejected, nonRetryable: true, message: 'Call "d1" was already decided.' });
  });

  it('an edit with a field the tool does not take is refused, naming it: by Update nothing is written, by Signal an event; the call still waits', async () => {
    const { run } = await start('ops', deployThenAnswer());
    await waitingFor(run);
    const before = (await historyOf(run)).events!.length;
    await expect(run.approve('d1', { arguments: { env: 'staging', region: 'eu' } })).rejects.toThrow(
      /The edited arguments for deploy have a field it does not take: "region" \(deploy takes: env, version\)/,
    );
    expect((await historyOf(run)).events!.length).toBe(before);
    await run.signalDecision({ callId: 'd1', decision: 'allow', arguments: { env: 'staging', regions: ['eu'], Env: 'prod' } });
    const [rejected] = await until(() => events(run, 'approval.rejected'), (e) => e.length === 1);
    expect(rejected).toMatchObject({ callId: 'd1', error: expect.stringMatching(/fields it does not take: "regions", "Env" \(deploy takes: env, version\)/) });
    expect((await run.status()).status).toBe('awaiting_approval');
    expect((await run.pending()).map((p) => p.callId)).toEqual(['d1']);
    await run.signalDecision({ callId: 'd1', decision: 'allow', arguments: { env: 'staging' } });
    expect(await run.result()).toMatchObject({ status: 'completed' });
    expect(effects.get(run.workflowId)).toEqual(['deploy staging']);
    // The refusal is behind a patch (runs recorded before it ran such edits): its history replays.
    const history = await historyOf(run);
    const patches = (history.events ?? []).flatMap((e) => e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads ?? []).map(decode);
    expect(patches).toEqual([{ id: 'keel-refuse-unknown-fields', deprecated: false }]);
    const sinks = { conversation: { append: { fn: () => undefined }, continued: { fn: () => undefined } } };
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle(), sinks }, history, run.workflowId);
  });

  it('a tool that takes extra fields (z.looseObject) keeps them in an edit; its nested z.object does not', async () => {
    const { run } = await start('ops-label', [{ toolCalls: [{ id: 'l1', name: 'label', arguments: { name: 'v1' } }] }, { text: 'Labelled.' }]);
    await waitingFor(run);
    await expect(run.approve('l1', { arguments: { name: 'v1', meta: { owner: 'ann', team: 'ops' } } })).rejects.toThrow(
      /have a field it does not take: "meta.team" \(meta takes: owner\)/,
    );
    await run.approve('l1', { arguments: { name: 'v2', color: 'red', meta: { owner: 'ann' } } });
    expect(await run.result()).toMatchObject({ status: 'completed' });
    const [ran] = effects.get(run.workflowId)!;
    expect(JSON.parse(ran!.replace(/^label /, ''))).toEqual({ name: 'v2', color: 'red', meta: { owner: 'ann' } });
  });

  it('an edit that passes runs with the edited arguments; one the policy denies is denied with the reason', async () => {
    const edited = await start('ops', deployThenAnswer({ env: 'prod' }));
    await waitingFor(edited.run);
    await edited.run.approve('d1', { arguments: { env: 'staging', version: 'v2' } });
    await edited.run.result();
    expect(effects.get(edited.run.workflowId)).toEqual(['deploy staging v2']);
    expect(await events(edited.run, 'approval.decided')).toEqual([expect.objectContaining({ edited: true })]);

    // A command the rules ask about, edited by the approver into one the rules deny.
    const denied = await start('ops', [{ toolCalls: [{ id: 'b1', name: 'Bash', arguments: { command: 'git push origin main' } }] }, { text: 'ok' }]);
    const [pending] = await waitingFor(denied.run);
    expect(pending).toMatchObject({ stage: 'permissions', reason: expect.stringContaining('Bash(git push:*)') });
    await denied.run.approve('b1', { arguments: { command: 'rm -rf /' } });
    await denied.run.result();
    expect(effects.get(denied.run.workflowId)).toBeUndefined();
    expect(lastToolResults(denied.model)).toMatch(/edited arguments are denied: .*Bash\(rm \*\)/);
  });

  it('two pending calls of one turn wait together and are decided one by one', async () => {
    const { run, model } = await start('ops', [
      {
        toolCalls: [
          { id: 'd1', name: 'deploy', arguments: { env: 'staging' } },
          { id: 'd2', name: 'deploy', arguments: { env: 'prod' } },
        ],
      },
      { text: 'Both decided.' },
    ]);
    const pending = await waitingFor(run, 2);
    expect(pending.map((p) => p.callId).sort()).toEqual(['d1', 'd2']);
    // The second decided first: nothing runs until the first call (in the model's order) is decided.
    expect(await run.deny('d2', 'prod is frozen')).toEqual({ callId: 'd2', decision: 'deny', pending: 1 });
    // The Update's completion is recorded with the workflow task that took the decision, together
    // with whatever that task started: no tool call.
    const history = await historyOf(run);
    expect(eventTypes(history)).toContain('WORKFLOW_EXECUTION_UPDATE_COMPLETED');
    expect(activityEvents(history).filter((a) => a.type === 'toolCall')).toEqual([]);
    expect((await run.status()).status).toBe('awaiting_approval');
    expect((await run.pending()).map((p) => p.callId)).toEqual(['d1']);
    await run.approve('d1');
    await run.result();
    expect(effects.get(run.workflowId)).toEqual(['deploy staging']);
    expect(lastToolResults(model)).toContain('prod is frozen');
  });

  it('a plain Signal from the temporal CLI decides; a bad signal is an event, never a failure', async () => {
    const { run } = await start('ops', deployThenAnswer());
    await waitingFor(run);
    const temporal = async (input: unknown) => {
      const cli = await runCommand(
        'temporal',
        ['workflow', 'signal', '--address', TEMPORAL_ADDRESS, '--workflow-id', run.workflowId, '--name', 'approve', '--input', JSON.stringify(input)],
        { cwd: process.cwd(), env: { ...process.env, PATH: `${process.env.HOME}/.cache/keel/temporal-v1.5.1/bin:${process.env.PATH}` } },
      );
      expect(cli.code, cli.stderr).toBe(0);
    };
    await temporal({ callId: 'd1', decision: 'perhaps' });
    await temporal({ callId: 'zzz', decision: 'allow' });
    const rejected = await until(() => events(run, 'approval.rejected'), (e) => e.length === 2);
    expect(rejected[0]).toMatchObject({ callId: 'd1', error: expect.stringContaining('"decision" must be "allow" or "deny"') });
    expect(rejected[1]).toMatchObject({ callId: 'zzz', error: expect.stringContaining('not waiting') });
    expect((await run.status()).status).toBe('awaiting_approval');

    await temporal({ callId: 'd1', decision: 'allow', reason: 'looks fine' });
    expect(await run.result()).toMatchObject({ status: 'completed' });
    expect(await events(run, 'approval.decided')).toEqual([expect.objectContaining({ by: 'signal', reason: 'looks fine' })]);
  });

  it('a decision sent before the call reaches its wait is kept and applied', async () => {
    const { run } = await start('ops-slow-hook', deployThenAnswer());
    await until(() => events(run, 'tool.requested'), (e) => e.length === 1);
    // The hook is still running: the call has not reached its wait.
    expect(await run.pending()).toEqual([]);
    await run.signalDecision({ callId: 'd1', decision: 'allow' });
    expect(await run.result()).toMatchObject({ status: 'completed' });
    expect(effects.get(run.workflowId)).toEqual(['deploy prod']);
    // It never waited: no approval was requested.
    expect(await events(run, 'approval.requested')).toEqual([]);
    expect(await events(run, 'approval.decided')).toEqual([expect.objectContaining({ by: 'signal' })]);
  });

  it('at the approval timeout the call gets its default: deny unless set', async () => {
    const denied = await start('ops-timed', deployThenAnswer());
    const [pending] = await waitingFor(denied.run);
    expect(Date.parse(pending!.expires!) - Date.parse(pending!.since)).toBe(2_000);
    await denied.run.result();
    expect(effects.get(denied.run.workflowId)).toBeUndefined();
    expect(lastToolResults(denied.model)).toMatch(/No decision within 2 s; the call's default is deny/);
    expect(await events(denied.run, 'approval.decided')).toEqual([expect.objectContaining({ by: 'timeout', decision: 'deny' })]);
    // The wait was a durable timer.
    expect(eventTypes(await historyOf(denied.run))).toContain('TIMER_FIRED');

    const allowed = await start('ops-lenient', deployThenAnswer());
    await allowed.run.result();
    expect(effects.get(allowed.run.workflowId)).toEqual(['deploy prod']);
  });
});

describe('permission rules and modes', () => {
  const bashTurn = (...commands: string[]) => [
    { toolCalls: commands.map((command, i) => ({ id: `b${i + 1}`, name: 'Bash', arguments: { command } })) },
    { text: 'ok' },
  ];

  it('allow rules run without asking, deny rules deny, compound commands need every part allowed', async () => {
    const { run, model } = await start('ops', bashTurn('git status', 'npm run test --silent', 'rm -rf build', 'git status && curl evil.sh'));
    // The compound command asks (curl is not allowed); the rest were decided by rules.
    const [pending] = await waitingFor(run);
    expect(pending).toMatchObject({ callId: 'b4', stage: 'tool' });
    await run.deny('b4', 'no curl');
    await run.result();
    expect(effects.get(run.workflowId)).toEqual(['bash git status', 'bash npm run test --silent']);
    const results = lastToolResults(model);
    expect(results).toMatch(/denied \(permissions\): .*Bash\(rm \*\)/);
    const decided = await events(run, 'tool.decided');
    expect(decided).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ callId: 'b1', stage: 'permissions', decision: 'allow' }),
        expect.objectContaining({ callId: 'b3', stage: 'permissions', decision: 'deny' }),
      ]),
    );
  });

  it('remember: an approval adds an allow rule for the rest of the run, shown in its status', async () => {
    const { run } = await start('ops', [
      { toolCalls: [{ id: 'b1', name: 'Bash', arguments: { command: 'make release' } }] },
      { toolCalls: [{ id: 'b2', name: 'Bash', arguments: { command: 'make release' } }, { id: 'b3', name: 'Bash', arguments: { command: 'make clean' } }] },
      { text: 'released twice' },
    ]);
    await waitingFor(run);
    await run.approve('b1', { remember: true });
    // The same command again runs without asking; another one still asks.
    const [next] = await waitingFor(run);
    expect(next!.callId).toBe('b3');
    expect((await run.status()).rememberedRules).toEqual(['Bash(make release)']);
    await run.approve('b3');
    await run.result();
    expect(effects.get(run.workflowId)).toEqual(['bash make release', 'bash make release', 'bash make clean']);
    expect(await events(run, 'approval.decided')).toEqual([
      expect.objectContaining({ callId: 'b1', remembered: 'Bash(make release)' }),
      expect.objectContaining({ callId: 'b3' }),
    ]);
  });

  it('dontAsk turns an ask into a deny; plan allows only read-only tools; the mode can change by signal', async () => {
    const dontAsk = await start('ops', deployThenAnswer(), { permissionMode: 'dontAsk' });
    await dontAsk.run.result();
    expect(effects.get(dontAsk.run.workflowId)).toBeUndefined();
    expect(lastToolResults(dontAsk.model)).toMatch(/dontAsk/);

    const plan = await start(
      'ops',
      [
        { toolCalls: [{ id: 'p1', name: 'peek', arguments: { key: 'a' } }, { id: 'b1', name: 'Bash', arguments: { command: 'git status' } }] },
        // Slow enough for the mode to change before this turn's call is decided.
        { toolCalls: [{ id: 'b2', name: 'Bash', arguments: { command: 'git status' } }], delayMs: 2_000 },
        { text: 'ok' },
      ],
      { permissionMode: 'plan' },
    );
    await until(() => events(plan.run, 'tool.finished'), (e) => e.length === 2);
    expect((await plan.run.status()).permissionMode).toBe('plan');
    await plan.run.setPermissionMode('default');
    await plan.run.result();
    // Turn 1 in plan mode: the read-only peek ran, Bash was denied; turn 2 after the signal: allowed by its rule.
    expect(effects.get(plan.run.workflowId)).toEqual(['peek a', 'bash git status']);
    expect(await events(plan.run, 'permission.mode')).toEqual([expect.objectContaining({ mode: 'default' })]);
  });
});

describe('durability', () => {
  it('a run waiting for approval survives its worker stopping; approved later, it completes', async () => {
    const server = t.server;
    const model = `approvals-${randomUUID().slice(0, 8)}`;
    server.script(model, deployThenAnswer());
    const taskQueue = `approvals-restart-${randomUUID().slice(0, 8)}`;
    const first = await startKeel({ agents: [ops], providers: providersFor(server), taskQueue });
    const run = await first.client.start('ops', 'Ship it.', { model: `openai:${model}` });
    await waitingFor(run);
    await first.stop();

    // No worker: the decision is accepted by the server and waits in history (a Signal: an
    // Update needs a worker to validate it).
    const waiting = t.keel.client.getHandle(run.workflowId);
    await waiting.signalDecision({ callId: 'd1', decision: 'allow' });
    const types = eventTypes(await historyOf(waiting));
    expect(types).toContain('WORKFLOW_EXECUTION_SIGNALED');
    // No workflow task has taken it yet, so nothing ran.
    expect(types.slice(types.lastIndexOf('WORKFLOW_EXECUTION_SIGNALED'))).not.toContain('WORKFLOW_TASK_COMPLETED');
    expect(effects.get(run.workflowId)).toBeUndefined();

    const second = await startKeel({ agents: [ops], providers: providersFor(server), taskQueue });
    try {
      expect(await second.client.getHandle(run.workflowId).result()).toMatchObject({ status: 'completed' });
      expect(effects.get(run.workflowId)).toEqual(['deploy prod']);
    } finally {
      await second.stop();
    }
  });

  it("the worker's approver decides first; with no answer the call waits for a person", async () => {
    const server = t.server;
    const taskQueue = `approvals-approver-${randomUUID().slice(0, 8)}`;
    const seen: string[] = [];
    const keel = await startKeel({
      agents: [ops],
      providers: providersFor(server),
      taskQueue,
      approver: ({ tool, arguments: args }) => {
        seen.push(`${tool} ${JSON.stringify(args)}`);
        if (args.env === 'staging') return { decision: 'allow', reason: 'staging is always fine' };
        return undefined;
      },
    });
    try {
      const model = `approvals-${randomUUID().slice(0, 8)}`;
      server.script(model, [
        { toolCalls: [{ id: 'd1', name: 'deploy', arguments: { env: 'staging' } }] },
        { toolCalls: [{ id: 'd2', name: 'deploy', arguments: { env: 'prod' } }] },
        { text: 'done' },
      ]);
      const run = await keel.client.start('ops', 'Ship it.', { model: `openai:${model}` });
      const [pending] = await waitingFor(run);
      expect(pending!.callId).toBe('d2');
      await run.approve('d2');
      await run.result();
      expect(seen).toEqual(['deploy {"env":"staging"}', 'deploy {"env":"prod"}']);
      expect(effects.get(run.workflowId)).toEqual(['deploy staging', 'deploy prod']);
      const decided = await events(run, 'approval.decided');
      expect(decided.map((e) => (e as { by: string }).by)).toEqual(['approver', 'update']);
    } finally {
      await keel.stop();
    }
  });

  it('cancelling a run that waits for approval ends it cancelled, the tool never ran', async () => {
    const { run } = await start('ops', deployThenAnswer());
    await waitingFor(run);
    await run.cancel();
    await expect(run.result()).rejects.toThrow(/cancelled/);
    expect((await run.describe()).status).toBe('cancelled');
    expect(effects.get(run.workflowId)).toBeUndefined();
  });
});

describe('approvals across continue-as-new and in monitors', () => {
  it('the mode and remembered rules go on after the run continues as new', async () => {
    const model = `approvals-${randomUUID().slice(0, 8)}`;
    const release = { toolCalls: [{ id: '', name: 'Bash', arguments: { command: 'make release' } }] };
    t.server.script(model, [
      ...Array.from({ length: 6 }, (_, i) => ({ toolCalls: [{ ...release.toolCalls[0]!, id: `r${i + 1}` }] })),
      { text: 'released six times' },
    ]);
    const run = await t.keel.client.start('ops', 'Release.', { model: `openai:${model}`, options: { continueAsNewAfterEvents: 20 } });
    await waitingFor(run);
    await run.approve('r1', { remember: true });
    await run.setPermissionMode('acceptEdits');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'released six times' });
    expect(effects.get(run.workflowId)).toHaveLength(6);
    // It did continue as new, and never asked again.
    expect((await run.events()).filter((e) => e.type === 'run.continued').length).toBeGreaterThan(0);
    expect(await events(run, 'approval.requested')).toHaveLength(1);
    const state = await run.status();
    expect(state).toMatchObject({ rememberedRules: ['Bash(make release)'], permissionMode: 'acceptEdits' });
  });

  it('a monitor waits for approval too: phase awaiting_approval, decided like a run', async () => {
    const model = `approvals-${randomUUID().slice(0, 8)}`;
    t.server.script(model, [
      { toolCalls: [{ id: 'm1', name: 'deploy', arguments: { env: 'staging' } }] },
      { toolCalls: [{ id: 'done', name: 'report_done', arguments: { detail: 'deployed' } }] },
    ]);
    const monitor = await t.keel.client.startMonitor('ops', 'Keep staging deployed.', { model: `openai:${model}` });
    const handle = t.keel.client.getHandle(monitor.workflowId);
    const [pending] = await waitingFor(handle);
    expect(pending).toMatchObject({ callId: 'm1', tool: 'deploy' });
    expect((await monitor.status()).phase).toBe('awaiting_approval');
    await handle.approve('m1');
    expect(await monitor.result()).toMatchObject({ status: 'completed', detail: 'deployed' });
    expect(effects.get(monitor.workflowId)).toEqual(['deploy staging']);
  });
});
