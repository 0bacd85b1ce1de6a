/**
 * The tool-call pipeline end to end, configured as a user configures it: Claude Code hooks
 * (command scripts and an http endpoint), guardrails and middleware on defineAgent, against the
 * real dev server and the scripted model server. Each test checks what a user would: the run's
 * result, its transcript, what the model got in its next request, the run's events, files on disk.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool, type AgentOptions } from '../src/core/define.js';
import { defineGuardrail, type GuardrailKind } from '../src/core/guardrails.js';
import { defineMiddleware } from '../src/core/middleware.js';
import type { RunEvent } from '../src/core/run.js';
import type { RunHandle } from '../src/client/agent-client.js';
import { providersFor, startKeel, useKeel } from './support/keel.js';
import { activityEvents, historyOf } from './support/history.js';

// ---------------------------------------------------------------------------------------------
// A project directory with hook scripts, and what the tools and hooks did

const dir = mkdtempSync(join(tmpdir(), 'keel-pipeline-'));
const filesDir = join(dir, 'files');
mkdirSync(filesDir);
const hookLog = join(dir, 'hook-log.jsonl');

/** Where write_file puts a file: inside filesDir, whatever the path says. */
const fileFor = (path: string) => join(filesDir, path.replace(/[^a-zA-Z0-9._-]/g, '_'));

/**
 * A hook script: it logs its input (one JSON line in hook-log.jsonl), then runs `body` with the
 * input in $input and the run's workflow ID in $sid.
 */
function script(name: string, body: string): string {
  const path = join(dir, `${name}.sh`);
  writeFileSync(
    path,
    [
      '#!/bin/sh',
      'input=$(cat)',
      `printf '%s\\n' "$input" >> '${hookLog}'`,
      `sid=$(printf '%s' "$input" | sed -n 's/.*"session_id":"\\([^"]*\\)".*/\\1/p')`,
      body,
      '',
    ].join('\n'),
  );
  chmodSync(path, 0o755);
  return path;
}

const json = (value: unknown) => `printf '%s' '${JSON.stringify(value)}'`;

const hook = {
  log: script('log', 'exit 0'),
  deny: script('deny', 'echo "writes to /etc are not allowed" >&2\nexit 2'),
  rewrite: script(
    'rewrite',
    json({ hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { path: 'sandbox.txt', content: 'rewritten by the hook' } } }),
  ),
  allow: script('allow', json({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'the hook trusts everything' } })),
  // Ten minutes, past any test's timeout: a call it holds goes on only by the hook's timeout.
  slow: script('slow', 'sleep 600'),
  postContext: script('post-context', json({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'Note from the linter: the echo looked fine.' } })),
  blockPasswords: script(
    'block-passwords',
    `case "$input" in *password*) ${json({ decision: 'block', reason: 'Prompts must not contain passwords.' })};; esac`,
  ),
  sessionContext: script('session-context', 'echo "Today the office is closed."'),
  stopOnce: script(
    'stop-once',
    [
      `marker='${dir}/stopped-'"$sid"`,
      'if [ -f "$marker" ]; then exit 0; fi',
      'touch "$marker"',
      json({ decision: 'block', reason: 'Run the tests before you finish.' }),
    ].join('\n'),
  ),
  sessionEnd: script('session-end', `printf '%s' "$input" > '${dir}/ended-'"$sid"'.json'`),
  crash: script('crash', 'echo "linter not installed" >&2\nexit 1'),
  stopAll: script('stop-all', json({ continue: false, stopReason: 'The user pressed stop.' })),
};

interface HookInputLine {
  session_id: string;
  hook_event_name: string;
  tool_name?: string;
  tool_input?: Record<string, unknown>;
  tool_use_id?: string;
  [field: string]: unknown;
}

/** The inputs the hook scripts got from one run, in order. */
function hookCalls(workflowId: string): HookInputLine[] {
  if (!existsSync(hookLog)) return [];
  return readFileSync(hookLog, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as HookInputLine)
    .filter((input) => input.session_id === workflowId);
}

/** An http hook endpoint: it records what it got and answers with a deny. */
const httpHookBodies: Record<string, unknown>[] = [];
const httpHookServer = createServer((req: IncomingMessage, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
  req.on('end', () => {
    httpHookBodies.push({ ...(JSON.parse(body) as Record<string, unknown>), contentType: req.headers['content-type'] });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'the policy server says no' } }));
  });
});
await new Promise<void>((resolve) => httpHookServer.listen(0, '127.0.0.1', resolve));
const httpHookUrl = `http://127.0.0.1:${(httpHookServer.address() as AddressInfo).port}/hooks/pre-tool-use`;

afterAll(async () => {
  await new Promise((resolve) => httpHookServer.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** The tool calls that really ran, by workflow ID. */
const ran = new Map<string, { tool: string; args: unknown }[]>();
function record(workflowId: string, tool: string, args: unknown): void {
  ran.set(workflowId, [...(ran.get(workflowId) ?? []), { tool, args }]);
}
const ranIn = (run: RunHandle) => ran.get(run.workflowId) ?? [];

// ---------------------------------------------------------------------------------------------
// Tools

const writeFile = defineTool({
  name: 'write_file',
  description: 'Write a file.',
  input: z.object({ path: z.string(), content: z.string() }),
  execute: ({ path, content }, ctx) => {
    record(ctx.workflowId, 'write_file', { path, content });
    writeFileSync(fileFor(path), content);
    return `wrote ${content.length} bytes to ${path}`;
  },
});

const FILES: Record<string, string> = {
  'notes.txt': 'buy milk',
  'creds.txt': 'user=admin password=hunter2',
};

const readFile = defineTool({
  name: 'read_file',
  description: 'Read a file.',
  input: z.object({ path: z.string() }),
  readOnly: true,
  execute: ({ path }, ctx) => {
    record(ctx.workflowId, 'read_file', { path });
    const text = FILES[path];
    if (text === undefined) throw new Error(`no such file: ${path}`);
    return text;
  },
});

const echo = defineTool({
  name: 'echo',
  description: 'Echo the text.',
  input: z.object({ text: z.string() }),
  execute: ({ text }, ctx) => {
    record(ctx.workflowId, 'echo', { text });
    return text;
  },
});

const lookup = defineTool({
  name: 'lookup',
  description: 'Look up a document by name.',
  input: z.object({ name: z.string() }),
  permissionKey: ({ name }) => name,
  execute: ({ name }, ctx) => {
    record(ctx.workflowId, 'lookup', { name });
    return `the document ${name}`;
  },
});

/** What the guardrails looked at, by kind, so a test can tell a guardrail ran. */
const checked = new Map<string, GuardrailKind[]>();
function sawGuardrail(workflowId: string, kind: GuardrailKind): void {
  checked.set(workflowId, [...(checked.get(workflowId) ?? []), kind]);
}

const noForbiddenInput = defineGuardrail({
  name: 'no-forbidden-input',
  check: (subject, ctx) => {
    sawGuardrail(ctx.workflowId, subject.kind);
    return subject.kind === 'input' && subject.text.includes('forbidden')
      ? { tripped: true, reason: 'the prompt asks for something forbidden' }
      : { tripped: false };
  },
});

const noSecretOutput = defineGuardrail({
  name: 'no-secret-output',
  check: (subject, ctx) => {
    sawGuardrail(ctx.workflowId, subject.kind);
    return subject.kind === 'output' && subject.text.includes('SECRET')
      ? { tripped: true, reason: 'the answer contains a secret' }
      : { tripped: false };
  },
});

const noEtcWrites = defineGuardrail({
  name: 'no-etc-writes',
  check: (subject, ctx) => {
    sawGuardrail(ctx.workflowId, subject.kind);
    return subject.kind === 'toolInput' && String(subject.arguments.path ?? '').startsWith('/etc')
      ? { tripped: true, reason: `${subject.tool} must not touch /etc` }
      : { tripped: false };
  },
});

const noPasswordsOut = defineGuardrail({
  name: 'no-passwords-out',
  check: (subject, ctx) => {
    sawGuardrail(ctx.workflowId, subject.kind);
    return subject.kind === 'toolOutput' && subject.result.includes('password=')
      ? { tripped: true, reason: `${subject.tool} returned a password` }
      : { tripped: false };
  },
});

const noShouting = defineGuardrail({
  name: 'no-shouting',
  check: (subject, ctx) => {
    sawGuardrail(ctx.workflowId, subject.kind);
    return subject.kind === 'toolInput' && /^[A-Z !]+$/.test(String(subject.arguments.text ?? ''))
      ? { tripped: true, reason: 'echo must not shout' }
      : { tripped: false };
  },
});

/** echo with a guardrail of its own (the tool's `guardrails.input`). */
const guardedEcho = defineTool({
  name: 'echo',
  description: 'Echo the text.',
  input: z.object({ text: z.string() }),
  guardrails: { input: [noShouting] },
  execute: ({ text }, ctx) => {
    record(ctx.workflowId, 'echo', { text });
    return text;
  },
});

const submit = defineTool({
  name: 'submit',
  description: 'Submit the final report.',
  input: z.object({ report: z.string() }),
  execute: ({ report }, ctx) => {
    record(ctx.workflowId, 'submit', { report });
    return `Report: ${report}`;
  },
});

// ---------------------------------------------------------------------------------------------
// Middleware

const normalize = defineMiddleware({
  name: 'normalize',
  beforeCall: (call) => {
    if (call.tool !== 'lookup') return;
    return { arguments: { name: String(call.arguments.name).trim().toLowerCase() }, reason: 'names are looked up in lower case' };
  },
});

const noParentDirs = defineMiddleware({
  name: 'no-parent-dirs',
  beforeCall: (call) => {
    if (call.tool === 'write_file' && String(call.arguments.path).includes('..')) {
      return { decision: 'deny', reason: 'paths must stay inside the project (no "..")' };
    }
  },
});

/** The arguments beforeCall saw, by workflow ID. */
const observed = new Map<string, Record<string, unknown>[]>();
const observe = defineMiddleware({
  name: 'observe',
  beforeCall: (call) => {
    observed.set(call.workflowId, [...(observed.get(call.workflowId) ?? []), call.arguments]);
  },
});

/** The order the wrapping middleware ran in, by workflow ID. */
const traces = new Map<string, string[]>();
function trace(workflowId: string, step: string): void {
  traces.set(workflowId, [...(traces.get(workflowId) ?? []), step]);
}

function wrapping(name: string) {
  return defineMiddleware({
    name,
    wrapCall: async (call, next) => {
      trace(call.workflowId, `${name}>`);
      const started = performance.now();
      const value = await next();
      trace(call.workflowId, `<${name}`);
      // The outer one shapes what the tool returned; both measure.
      return name === 'outer' ? { value, ms: Math.round(performance.now() - started) >= 0 } : value;
    },
    afterCall: (call, result) => {
      trace(call.workflowId, `after ${name}`);
      return { content: `${result.content} [${name}]` };
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Agents, one model name each

type Options = Partial<AgentOptions>;

function agent(name: string, options: Options = {}) {
  return defineAgent({
    name,
    instructions: 'You work on files.',
    model: `openai:${name}`,
    tools: [writeFile, readFile, echo],
    maxTurns: 6,
    cwd: dir,
    modelSettings: { retry: { initialInterval: '50ms', maximumInterval: '200ms' } },
    ...options,
  });
}

const agents = [
  agent('plain'),
  agent('after-only', { middleware: [wrapping('outer')] }),
  agent('hook-deny', {
    hooks: {
      PreToolUse: [{ matcher: 'write_file', hooks: [{ type: 'command', command: hook.deny }] }],
      PostToolUse: [{ hooks: [{ type: 'command', command: hook.log }] }],
    },
  }),
  agent('hook-rewrite', {
    hooks: { PreToolUse: [{ matcher: 'write_file', hooks: [{ type: 'command', command: hook.rewrite }] }] },
    middleware: [observe],
    guardrails: { toolInput: [noEtcWrites] },
  }),
  agent('hook-allow', {
    tools: [writeFile, echo, lookup],
    hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: hook.allow }] }] },
    permissions: { deny: ['write_file'], ask: ['lookup(ask-*)'] },
  }),
  agent('hook-timeout', { hooks: { PreToolUse: [{ matcher: 'echo', hooks: [{ type: 'command', command: hook.slow, timeout: 1 }] }] } }),
  agent('hook-timeout-closed', {
    hooks: { PreToolUse: [{ matcher: 'echo', hooks: [{ type: 'command', command: hook.slow, timeout: 1 }] }] },
    hooksFailClosed: true,
  }),
  agent('hook-http', { hooks: { PreToolUse: [{ matcher: 'write_file', hooks: [{ type: 'http', url: httpHookUrl, timeout: 10 }] }] } }),
  agent('hook-post', {
    tools: [writeFile, readFile, echo],
    permissions: { deny: ['write_file'] },
    hooks: {
      PostToolUse: [{ hooks: [{ type: 'command', command: hook.postContext }] }],
      PostToolUseFailure: [{ hooks: [{ type: 'command', command: hook.log }] }],
    },
  }),
  agent('hook-session', {
    hooks: {
      SessionStart: [{ hooks: [{ type: 'command', command: hook.sessionContext }] }],
      UserPromptSubmit: [{ hooks: [{ type: 'command', command: hook.blockPasswords }] }],
      Stop: [{ hooks: [{ type: 'command', command: hook.stopOnce }] }],
      SessionEnd: [{ hooks: [{ type: 'command', command: hook.sessionEnd }] }],
    },
  }),
  agent('guarded', {
    tools: [writeFile, readFile, guardedEcho],
    guardrails: { input: [noForbiddenInput], output: [noSecretOutput], toolInput: [noEtcWrites], toolOutput: [noPasswordsOut] },
  }),
  agent('mw-policy', {
    tools: [writeFile, lookup],
    middleware: [normalize, noParentDirs],
    permissions: { deny: ['lookup(secret*)'] },
  }),
  agent('mw-wrap', { tools: [echo], middleware: [wrapping('outer'), wrapping('inner')] }),
  agent('hook-post-crash', {
    tools: [readFile],
    hooks: { PostToolUseFailure: [{ hooks: [{ type: 'command', command: hook.crash }] }] },
  }),
  agent('hook-continue', { hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: hook.stopAll }] }] } }),
  agent('guarded-stop', { tools: [submit], stopAtTools: ['submit'], guardrails: { output: [noSecretOutput] } }),
  agent('guarded-ask', {
    tools: [writeFile],
    permissions: { ask: ['write_file'] },
    guardrails: { toolInput: [noEtcWrites] },
  }),
];

const t = useKeel(agents);

// ---------------------------------------------------------------------------------------------
// Helpers

function ofType<T extends RunEvent['type']>(events: RunEvent[], type: T): Extract<RunEvent, { type: T }>[] {
  return events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
}

interface WireMessage {
  role: string;
  content: unknown;
  tool_call_id?: string;
}

/** The messages of the model's `index`-th request (OpenAI wire format). */
function sent(model: string, index: number): WireMessage[] {
  const request = t.server.requests(model)[index];
  if (!request) throw new Error(`the model ${model} got no request #${index}`);
  return request.body.messages as WireMessage[];
}

/** The tool result for `callId` as the model received it in its `index`-th request. */
function toolResultSent(model: string, index: number, callId: string): string {
  const message = sent(model, index).find((m) => m.role === 'tool' && m.tool_call_id === callId);
  if (!message) throw new Error(`request #${index} of ${model} has no result for ${callId}`);
  return String(message.content);
}

function activityTypes(history: Awaited<ReturnType<typeof historyOf>>): string[] {
  return activityEvents(history).map((a) => a.type);
}

// ---------------------------------------------------------------------------------------------

describe('PreToolUse hooks', () => {
  it('a command hook that exits 2 denies: the tool never runs, the model reads the reason', async () => {
    t.server.script('hook-deny', [
      { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: '/etc/passwd', content: 'root::0:0' } }] },
      { text: 'I may not write there.' },
    ]);
    const run = await t.keel.client.start('hook-deny', 'Edit /etc/passwd.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'I may not write there.' });

    expect(ranIn(run)).toEqual([]);
    expect(existsSync(fileFor('/etc/passwd'))).toBe(false);
    expect(toolResultSent('hook-deny', 1, 'w1')).toMatch(/denied \(hook\): writes to \/etc are not allowed/);

    const events = await run.events();
    expect(ofType(events, 'tool.decided')).toEqual([
      expect.objectContaining({ callId: 'w1', tool: 'write_file', stage: 'hook', decision: 'deny', reason: 'writes to /etc are not allowed' }),
    ]);
    expect(ofType(events, 'tool.finished')).toEqual([expect.objectContaining({ callId: 'w1', isError: true, stage: 'hook' })]);
    expect(ofType(events, 'tool.started')).toEqual([]);

    // The hook got Claude Code's input; the denied call fired no PostToolUse hook.
    const calls = hookCalls(run.workflowId);
    expect(calls.map((c) => c.hook_event_name)).toEqual(['PreToolUse']);
    expect(calls[0]).toMatchObject({ tool_name: 'write_file', tool_input: { path: '/etc/passwd', content: 'root::0:0' }, tool_use_id: 'w1', cwd: dir });
  });

  it('a hook that rewrites the input (updatedInput): later stages and the tool see the rewritten arguments', async () => {
    t.server.script('hook-rewrite', [
      { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: '/etc/hosts', content: 'evil' } }] },
      { text: 'Done.' },
    ]);
    const run = await t.keel.client.start('hook-rewrite', 'Write a file.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Done.' });

    expect(ranIn(run)).toEqual([{ tool: 'write_file', args: { path: 'sandbox.txt', content: 'rewritten by the hook' } }]);
    // Middleware came after the hook and saw its rewrite; so did the tool input guardrail (it trips on /etc).
    expect(observed.get(run.workflowId)).toEqual([{ path: 'sandbox.txt', content: 'rewritten by the hook' }]);
    expect(ofType(await run.events(), 'guardrail.tripped')).toEqual([]);
    expect(readFileSync(fileFor('sandbox.txt'), 'utf8')).toBe('rewritten by the hook');
    expect(existsSync(fileFor('/etc/hosts'))).toBe(false);
    expect(toolResultSent('hook-rewrite', 1, 'w1')).toBe('wrote 21 bytes to sandbox.txt');
    const decided = ofType(await run.events(), 'tool.decided');
    expect(decided).toEqual([expect.objectContaining({ callId: 'w1', stage: 'hook', decision: 'rewrite' })]);
  });

  it('a hook that allows does not lift a permission deny rule, nor an ask rule', async () => {
    t.server.script('hook-allow', [
      {
        toolCalls: [
          { id: 'w1', name: 'write_file', arguments: { path: 'allowed.txt', content: 'x' } },
          { id: 'e1', name: 'echo', arguments: { text: 'hi' } },
          { id: 'l1', name: 'lookup', arguments: { name: 'ask-me' } },
        ],
      },
      { text: 'Done.' },
    ]);
    const run = await t.keel.client.start('hook-allow', 'Do three things.');

    // The ask rule holds the lookup for a person, although the hook allowed it.
    await expect.poll(() => run.pending(), { timeout: 20_000 }).toEqual([expect.objectContaining({ callId: 'l1', tool: 'lookup', stage: 'permissions' })]);
    expect((await run.status()).status).toBe('awaiting_approval');
    await run.deny('l1', 'not today');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Done.' });

    expect(ranIn(run)).toEqual([{ tool: 'echo', args: { text: 'hi' } }]);
    expect(existsSync(fileFor('allowed.txt'))).toBe(false);
    expect(toolResultSent('hook-allow', 1, 'w1')).toMatch(/denied \(permissions\): deny rule "write_file"/);
    expect(toolResultSent('hook-allow', 1, 'l1')).toMatch(/denied \(approval\): not today/);
    expect(toolResultSent('hook-allow', 1, 'e1')).toBe('hi');

    const decided = ofType(await run.events(), 'tool.decided').map((e) => [e.callId, e.stage, e.decision]);
    expect(decided).toEqual(
      expect.arrayContaining([
        ['w1', 'hook', 'allow'],
        ['w1', 'permissions', 'deny'],
        ['e1', 'hook', 'allow'],
        ['l1', 'hook', 'allow'],
        ['l1', 'permissions', 'ask'],
      ]),
    );
    // Every call was shown to the hook.
    expect(hookCalls(run.workflowId).map((c) => c.tool_use_id).sort()).toEqual(['e1', 'l1', 'w1']);
  });

  it('a hook that times out is reported (hook.failed) and the call proceeds, long before the hook would end', async () => {
    t.server.script('hook-timeout', [{ toolCalls: [{ id: 'e1', name: 'echo', arguments: { text: 'still here' } }] }, { text: 'Done.' }]);
    const run = await t.keel.client.start('hook-timeout', 'Echo.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Done.' });

    expect(ranIn(run)).toEqual([{ tool: 'echo', args: { text: 'still here' } }]);
    expect(toolResultSent('hook-timeout', 1, 'e1')).toBe('still here');
    const failed = ofType(await run.events(), 'hook.failed');
    expect(failed).toEqual([expect.objectContaining({ event: 'PreToolUse', callId: 'e1', error: expect.stringMatching(/timed out after 1 s/) })]);
  });

  it('with hooksFailClosed a hook that times out denies the call', async () => {
    t.server.script('hook-timeout-closed', [{ toolCalls: [{ id: 'e1', name: 'echo', arguments: { text: 'blocked?' } }] }, { text: 'Denied.' }]);
    const run = await t.keel.client.start('hook-timeout-closed', 'Echo.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Denied.' });

    expect(ranIn(run)).toEqual([]);
    expect(toolResultSent('hook-timeout-closed', 1, 'e1')).toMatch(/denied \(hook\): .*timed out after 1 s.*fail-closed/);
    const events = await run.events();
    expect(ofType(events, 'hook.failed')).toEqual([expect.objectContaining({ event: 'PreToolUse', callId: 'e1' })]);
    expect(ofType(events, 'tool.decided')).toEqual([expect.objectContaining({ callId: 'e1', stage: 'hook', decision: 'deny' })]);
  });

  it('an http hook that answers deny denies; it got the input fields Claude Code sends', async () => {
    t.server.script('hook-http', [
      { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'remote.txt', content: 'hello' } }] },
      { text: 'The server refused.' },
    ]);
    const run = await t.keel.client.start('hook-http', 'Write remote.txt.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'The server refused.' });

    expect(ranIn(run)).toEqual([]);
    expect(existsSync(fileFor('remote.txt'))).toBe(false);
    expect(toolResultSent('hook-http', 1, 'w1')).toMatch(/denied \(hook\): the policy server says no/);

    const body = httpHookBodies.find((b) => b.session_id === run.workflowId);
    expect(body).toEqual({
      session_id: run.workflowId,
      cwd: dir,
      permission_mode: 'default',
      hook_event_name: 'PreToolUse',
      tool_name: 'write_file',
      tool_input: { path: 'remote.txt', content: 'hello' },
      tool_use_id: 'w1',
      contentType: 'application/json',
    });
    expect(ofType(await run.events(), 'tool.decided')).toEqual([
      expect.objectContaining({ callId: 'w1', stage: 'hook', decision: 'deny', reason: 'the policy server says no' }),
    ]);
  });
});

describe('PostToolUse and PostToolUseFailure hooks', () => {
  it('PostToolUse context reaches the model with the result; a throwing tool fires PostToolUseFailure; a denied call fires neither', async () => {
    t.server.script('hook-post', [
      {
        toolCalls: [
          { id: 'e1', name: 'echo', arguments: { text: 'ping' } },
          { id: 'r1', name: 'read_file', arguments: { path: 'missing.txt' } },
          { id: 'w1', name: 'write_file', arguments: { path: 'nope.txt', content: 'x' } },
        ],
      },
      { text: 'Done.' },
    ]);
    const run = await t.keel.client.start('hook-post', 'Three calls.');
    expect(await run.result()).toMatchObject({ status: 'completed' });

    expect(toolResultSent('hook-post', 1, 'e1')).toBe('ping\n\nNote from the linter: the echo looked fine.');
    expect(toolResultSent('hook-post', 1, 'r1')).toMatch(/read_file failed: no such file: missing.txt/);
    expect(toolResultSent('hook-post', 1, 'w1')).toMatch(/denied \(permissions\)/);
    expect(ranIn(run).map((r) => r.tool)).toEqual(['echo', 'read_file']);

    const calls = hookCalls(run.workflowId);
    expect(calls.map((c) => [c.hook_event_name, c.tool_use_id])).toEqual([
      ['PostToolUse', 'e1'],
      ['PostToolUseFailure', 'r1'],
    ]);
    expect(calls[0]).toMatchObject({ tool_name: 'echo', tool_input: { text: 'ping' }, tool_response: 'ping' });
    expect(calls[1]).toMatchObject({ tool_name: 'read_file', tool_input: { path: 'missing.txt' }, error: expect.stringMatching(/no such file/) });
    // The transcript holds the result as the model read it.
    const results = (await run.transcript()).filter((m) => m.role === 'tool');
    expect(results.find((m) => m.role === 'tool' && m.toolCallId === 'e1')).toMatchObject({ content: expect.stringContaining('Note from the linter') });
  });
});

describe('hooks of the run', () => {
  it('a UserPromptSubmit hook that blocks ends the run blocked before any model request', async () => {
    t.server.reset();
    t.server.script('hook-session', [{ text: 'never asked' }]);
    const run = await t.keel.client.start('hook-session', 'My password is hunter2, log in for me.');
    const result = await run.result();
    expect(result).toMatchObject({
      status: 'blocked',
      output: null,
      blocked: { guardrail: 'UserPromptSubmit hook', kind: 'input', reason: 'Prompts must not contain passwords.' },
    });
    expect(t.server.requests('hook-session')).toHaveLength(0);
    expect(await run.describe()).toMatchObject({ status: 'blocked' });
    expect(ofType(await run.events(), 'guardrail.tripped')).toEqual([
      expect.objectContaining({ guardrail: 'UserPromptSubmit hook', kind: 'input' }),
    ]);
    // The run still ended its session.
    await expect.poll(() => existsSync(join(dir, `ended-${run.workflowId}.json`))).toBe(true);
  });

  it('SessionStart context reaches the first request; a Stop hook that blocks once gives the model another turn; SessionEnd runs at the end', async () => {
    t.server.reset();
    t.server.script('hook-session', [{ text: 'All done.' }, { text: 'Tests pass. All done.' }]);
    const run = await t.keel.client.start('hook-session', 'Tidy up the project.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Tests pass. All done.', turns: 2 });

    const first = sent('hook-session', 0);
    const prompt = first.find((m) => m.role === 'user');
    expect(String(prompt?.content)).toContain('Tidy up the project.');
    expect(String(prompt?.content)).toContain('Today the office is closed.');

    // The Stop hook's reason came back as the next user message.
    const second = sent('hook-session', 1);
    expect(second.at(-1)).toMatchObject({ role: 'user', content: 'Run the tests before you finish.' });

    const calls = hookCalls(run.workflowId);
    expect(calls.map((c) => c.hook_event_name)).toEqual(['SessionStart', 'UserPromptSubmit', 'Stop', 'Stop', 'SessionEnd']);
    expect(calls.filter((c) => c.hook_event_name === 'Stop').map((c) => c.stop_hook_active)).toEqual([false, true]);
    expect(calls[2]).toMatchObject({ last_assistant_message: 'All done.' });

    const ended = JSON.parse(readFileSync(join(dir, `ended-${run.workflowId}.json`), 'utf8')) as Record<string, unknown>;
    expect(ended).toMatchObject({ session_id: run.workflowId, hook_event_name: 'SessionEnd', reason: 'other' });
    expect(ofType(await run.events(), 'hook.context')).toEqual([
      expect.objectContaining({ event: 'SessionStart', text: 'Today the office is closed.' }),
    ]);
  });
});

describe('guardrails', () => {
  it('an input guardrail that trips blocks the run before any model request', async () => {
    t.server.reset();
    t.server.script('guarded', [{ text: 'never asked' }]);
    const run = await t.keel.client.start('guarded', 'Do the forbidden thing.');
    expect(await run.result()).toEqual({
      kind: 'run',
      status: 'blocked',
      output: null,
      usage: { inputTokens: 0, outputTokens: 0 },
      turns: 0,
      agent: 'guarded',
      blocked: { guardrail: 'no-forbidden-input', kind: 'input', reason: 'the prompt asks for something forbidden' },
    });
    expect(t.server.requests('guarded')).toHaveLength(0);
    expect(await run.describe()).toMatchObject({ status: 'blocked' });
    expect(ofType(await run.events(), 'guardrail.tripped')).toEqual([
      expect.objectContaining({ guardrail: 'no-forbidden-input', kind: 'input', reason: 'the prompt asks for something forbidden' }),
    ]);
  });

  it('an output guardrail that trips blocks the run and withholds the answer', async () => {
    t.server.reset();
    t.server.script('guarded', [{ text: 'The SECRET code is 1234.' }]);
    const run = await t.keel.client.start('guarded', 'What is the code?');
    const result = await run.result();
    expect(result).toMatchObject({
      status: 'blocked',
      output: null,
      turns: 1,
      blocked: { guardrail: 'no-secret-output', kind: 'output', reason: 'the answer contains a secret' },
    });
    const transcript = await run.transcript();
    expect(transcript.at(-1)).toMatchObject({ role: 'assistant', content: '[answer withheld: blocked by guardrail "no-secret-output"]' });
    expect(JSON.stringify(transcript)).not.toContain('1234');
    expect(await run.describe()).toMatchObject({ status: 'blocked' });
    const finishedEvent = ofType(await run.events(), 'run.finished')[0];
    expect(finishedEvent).toMatchObject({ status: 'blocked', output: null });
  });

  it('a tool input guardrail that trips blocks the run; the tool never runs', async () => {
    t.server.reset();
    t.server.script('guarded', [
      { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: '/etc/motd', content: 'hi' } }] },
      { text: 'never asked' },
    ]);
    const run = await t.keel.client.start('guarded', 'Write the motd.');
    expect(await run.result()).toMatchObject({
      status: 'blocked',
      output: null,
      blocked: { guardrail: 'no-etc-writes', kind: 'toolInput', reason: 'write_file must not touch /etc', callId: 'w1', tool: 'write_file' },
    });
    expect(ranIn(run)).toEqual([]);
    expect(existsSync(fileFor('/etc/motd'))).toBe(false);
    expect(t.server.requests('guarded')).toHaveLength(1);
    expect(activityTypes(await historyOf(run))).not.toContain('toolCall');
    expect(ofType(await run.events(), 'guardrail.tripped')).toEqual([expect.objectContaining({ guardrail: 'no-etc-writes', callId: 'w1' })]);
  });

  it("a tool's own input guardrail trips too", async () => {
    t.server.reset();
    t.server.script('guarded', [{ toolCalls: [{ id: 'e1', name: 'echo', arguments: { text: 'HELLO THERE!' } }] }, { text: 'never asked' }]);
    const run = await t.keel.client.start('guarded', 'Shout.');
    expect(await run.result()).toMatchObject({ status: 'blocked', blocked: { guardrail: 'no-shouting', kind: 'toolInput', callId: 'e1' } });
    expect(ranIn(run)).toEqual([]);
  });

  it('a tool output guardrail that trips blocks the run after the tool ran', async () => {
    t.server.reset();
    t.server.script('guarded', [{ toolCalls: [{ id: 'r1', name: 'read_file', arguments: { path: 'creds.txt' } }] }, { text: 'never asked' }]);
    const run = await t.keel.client.start('guarded', 'Read the credentials.');
    expect(await run.result()).toMatchObject({
      status: 'blocked',
      output: null,
      blocked: { guardrail: 'no-passwords-out', kind: 'toolOutput', reason: 'read_file returned a password', callId: 'r1' },
    });
    expect(ranIn(run)).toEqual([{ tool: 'read_file', args: { path: 'creds.txt' } }]);
    expect(t.server.requests('guarded')).toHaveLength(1);
    // The result that tripped it reached neither the model nor the transcript.
    expect(JSON.stringify(await run.transcript())).not.toContain('hunter2');
  });

  it('guardrails that do not trip let the run complete, and each looked at what it guards', async () => {
    t.server.reset();
    t.server.script('guarded', [
      {
        toolCalls: [
          { id: 'w1', name: 'write_file', arguments: { path: 'todo.txt', content: 'water the plants' } },
          { id: 'r1', name: 'read_file', arguments: { path: 'notes.txt' } },
          { id: 'e1', name: 'echo', arguments: { text: 'quietly' } },
        ],
      },
      { text: 'Noted: buy milk.' },
    ]);
    const run = await t.keel.client.start('guarded', 'Make a todo list.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Noted: buy milk.' });
    expect(readFileSync(fileFor('todo.txt'), 'utf8')).toBe('water the plants');
    expect(toolResultSent('guarded', 1, 'r1')).toBe('buy milk');
    expect(toolResultSent('guarded', 1, 'e1')).toBe('quietly');
    const kinds = checked.get(run.workflowId) ?? [];
    expect(new Set(kinds)).toEqual(new Set(['input', 'output', 'toolInput', 'toolOutput']));
    // Each call's arguments and result were checked by every guardrail of its kind.
    // The agent's tool guardrails see every call; echo's own guardrail sees echo's.
    expect(kinds.filter((k) => k === 'toolInput')).toHaveLength(4);
    expect(kinds.filter((k) => k === 'toolOutput')).toHaveLength(3);
    expect(ofType(await run.events(), 'guardrail.tripped')).toEqual([]);
  });
});

describe('middleware', () => {
  it('beforeCall denies with a reason the model reads', async () => {
    t.server.script('mw-policy', [
      { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: '../outside.txt', content: 'x' } }] },
      { text: 'I stayed inside.' },
    ]);
    const run = await t.keel.client.start('mw-policy', 'Write outside.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'I stayed inside.' });
    expect(ranIn(run)).toEqual([]);
    expect(toolResultSent('mw-policy', 1, 'w1')).toMatch(/denied \(no-parent-dirs\): paths must stay inside the project \(no "\.\."\)/);
    expect(ofType(await run.events(), 'tool.decided')).toEqual([
      expect.objectContaining({ callId: 'w1', stage: 'no-parent-dirs', decision: 'deny', reason: 'paths must stay inside the project (no "..")' }),
    ]);
  });

  it('beforeCall rewrites: the tool gets the rewritten arguments, and the permission policy judges them', async () => {
    t.server.reset();
    t.server.script('mw-policy', [
      {
        toolCalls: [
          { id: 'l1', name: 'lookup', arguments: { name: '  SECRET-keys ' } },
          { id: 'l2', name: 'lookup', arguments: { name: 'Docs' } },
        ],
      },
      { text: 'Found the docs.' },
    ]);
    const run = await t.keel.client.start('mw-policy', 'Look things up.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Found the docs.' });

    expect(ranIn(run)).toEqual([{ tool: 'lookup', args: { name: 'docs' } }]);
    expect(toolResultSent('mw-policy', 1, 'l1')).toMatch(/denied \(permissions\): deny rule "lookup\(secret\*\)"/);
    expect(toolResultSent('mw-policy', 1, 'l2')).toBe('the document docs');
    // The calls of a turn are decided together, so only each call's own steps are in order.
    const decided = ofType(await run.events(), 'tool.decided');
    const steps = (callId: string) => decided.filter((e) => e.callId === callId).map((e) => [e.stage, e.decision]);
    expect(steps('l1')).toEqual([
      ['normalize', 'rewrite'],
      ['permissions', 'deny'],
    ]);
    expect(steps('l2')).toEqual([['normalize', 'rewrite']]);
  });

  it('wrapCall wraps the execution (first outermost); afterCall rewrites the result, last first', async () => {
    t.server.script('mw-wrap', [{ toolCalls: [{ id: 'e1', name: 'echo', arguments: { text: 'hello' } }] }, { text: 'Done.' }]);
    const run = await t.keel.client.start('mw-wrap', 'Echo.');
    expect(await run.result()).toMatchObject({ status: 'completed' });
    expect(traces.get(run.workflowId)).toEqual(['outer>', 'inner>', '<inner', '<outer', 'after inner', 'after outer']);
    const expected = `${JSON.stringify({ value: 'hello', ms: true })} [inner] [outer]`;
    expect(toolResultSent('mw-wrap', 1, 'e1')).toBe(expected);
    expect((await run.transcript()).find((m) => m.role === 'tool')).toMatchObject({ content: expected });
  });
});

describe('a feature that is not configured costs nothing', () => {
  it('a run without hooks, guardrails or middleware has only model and tool activities', async () => {
    t.server.script('plain', [{ toolCalls: [{ id: 'e1', name: 'echo', arguments: { text: 'x' } }] }, { text: 'Done.' }]);
    const run = await t.keel.client.start('plain', 'Echo.');
    expect(await run.result()).toMatchObject({ status: 'completed' });
    expect(activityTypes(await historyOf(run))).toEqual(['modelTurn', 'toolCall', 'modelTurn']);
    const types = new Set((await run.events()).map((e) => e.type));
    for (const type of ['tool.decided', 'hook.failed', 'hook.context', 'guardrail.tripped'] as const) expect(types.has(type)).toBe(false);
  });

  it('middleware that only wraps calls needs no activity before the call', async () => {
    t.server.script('after-only', [{ toolCalls: [{ id: 'e1', name: 'echo', arguments: { text: 'x' } }] }, { text: 'Done.' }]);
    const run = await t.keel.client.start('after-only', 'Echo.');
    expect(await run.result()).toMatchObject({ status: 'completed' });
    expect(activityTypes(await historyOf(run))).toEqual(['modelTurn', 'toolCall', 'modelTurn']);
    expect(toolResultSent('after-only', 1, 'e1')).toBe(`${JSON.stringify({ value: 'x', ms: true })} [outer]`);
  });
});

describe('more of the pipeline', () => {
  it('a failing PostToolUseFailure hook is reported under its own event name', async () => {
    t.server.script('hook-post-crash', [{ toolCalls: [{ id: 'r1', name: 'read_file', arguments: { path: 'missing.txt' } }] }, { text: 'Done.' }]);
    const run = await t.keel.client.start('hook-post-crash', 'Read.');
    expect(await run.result()).toMatchObject({ status: 'completed' });
    expect(hookCalls(run.workflowId).map((c) => c.hook_event_name)).toEqual(['PostToolUseFailure']);
    expect(ofType(await run.events(), 'hook.failed')).toEqual([
      expect.objectContaining({ event: 'PostToolUseFailure', callId: 'r1', error: expect.stringMatching(/exited with status 1: linter not installed/) }),
    ]);
  });

  it('a PreToolUse hook that says "continue": false stops the run: the tool does not run, the model is not asked again', async () => {
    t.server.script('hook-continue', [{ toolCalls: [{ id: 'e1', name: 'echo', arguments: { text: 'go on' } }] }, { text: 'I went on.' }]);
    const run = await t.keel.client.start('hook-continue', 'Echo.');
    const result = await run.result();
    expect(hookCalls(run.workflowId).map((c) => c.hook_event_name)).toEqual(['PreToolUse']);
    expect(ranIn(run)).toEqual([]);
    expect(t.server.requests('hook-continue')).toHaveLength(1);
    expect(result.output).not.toBe('I went on.');
  });

  it('an output guardrail checks the whole answer when it came in pieces (cut off at the token limit), and withholds every piece', async () => {
    t.server.reset();
    t.server.script('guarded', [{ text: 'The SECRET', stopReason: 'max_tokens' }, { text: ' code is 1234.' }]);
    const run = await t.keel.client.start('guarded', 'What is the code?');
    const result = await run.result();
    expect(result).toMatchObject({ status: 'blocked', output: null, blocked: { guardrail: 'no-secret-output', kind: 'output' } });
    const answers = (await run.transcript()).filter((m) => m.role === 'assistant').map((m) => m.content);
    expect(answers.join(' ')).not.toContain('SECRET');
  });

  it('an output guardrail on a stopAtTools result withholds that result', async () => {
    t.server.script('guarded-stop', [{ text: 'Submitting.', toolCalls: [{ id: 's1', name: 'submit', arguments: { report: 'all fine' } }] }]);
    const clean = await t.keel.client.start('guarded-stop', 'Report.');
    expect(await clean.result()).toMatchObject({ status: 'completed', output: 'Report: all fine' });

    t.server.script('guarded-stop', [{ text: 'Submitting.', toolCalls: [{ id: 's1', name: 'submit', arguments: { report: 'the SECRET is 1234' } }] }]);
    const run = await t.keel.client.start('guarded-stop', 'Report.');
    expect(await run.result()).toMatchObject({ status: 'blocked', output: null, blocked: { guardrail: 'no-secret-output', kind: 'output' } });
    const transcript = await run.transcript();
    const submitted = transcript.find((m) => m.role === 'tool' && m.toolCallId === 's1');
    expect(submitted?.content).toBe('[answer withheld: blocked by guardrail "no-secret-output"]');
    expect(transcript.find((m) => m.role === 'assistant')).toMatchObject({ content: 'Submitting.' });
  });

  it('arguments edited by an approval are checked again by the tool input guardrails', async () => {
    t.server.script('guarded-ask', [
      { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'ok.txt', content: 'fine' } }] },
      { text: 'never asked' },
    ]);
    const run = await t.keel.client.start('guarded-ask', 'Write ok.txt.');
    await expect.poll(() => run.pending(), { timeout: 20_000 }).toEqual([expect.objectContaining({ callId: 'w1', stage: 'permissions' })]);
    await run.approve('w1', { arguments: { path: '/etc/shadow', content: 'x' } });
    expect(await run.result()).toMatchObject({ status: 'blocked', blocked: { guardrail: 'no-etc-writes', kind: 'toolInput', callId: 'w1' } });
    expect(ranIn(run)).toEqual([]);
    expect(existsSync(fileFor('/etc/shadow'))).toBe(false);
    expect(existsSync(fileFor('ok.txt'))).toBe(false);
  });

  it('a hook runs once per decision, even when another worker takes the run over', async () => {
    const taskQueue = `pipeline-restart-${Date.now()}`;
    const first = await startKeel({ agents, providers: providersFor(t.server), taskQueue });
    t.server.script('hook-allow', [{ toolCalls: [{ id: 'l1', name: 'lookup', arguments: { name: 'ask-once' } }] }, { text: 'Looked it up.' }]);
    const run = await first.client.start('hook-allow', 'Look it up.');
    await expect.poll(() => run.pending(), { timeout: 20_000 }).toEqual([expect.objectContaining({ callId: 'l1' })]);
    await first.stop();

    const second = await startKeel({ agents, providers: providersFor(t.server), taskQueue });
    try {
      const handle = second.client.getHandle(run.workflowId);
      await handle.approve('l1');
      expect(await handle.result()).toMatchObject({ status: 'completed', output: 'Looked it up.' });
    } finally {
      await second.stop();
    }
    expect(hookCalls(run.workflowId).map((c) => [c.hook_event_name, c.tool_use_id])).toEqual([['PreToolUse', 'l1']]);
    expect(ranIn(run)).toEqual([{ tool: 'lookup', args: { name: 'ask-once' } }]);
  });
});
