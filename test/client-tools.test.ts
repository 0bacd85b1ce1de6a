/**
 * Client tools: a tool that runs on the client attached to the run. The run publishes the call,
 * a client (RunHandle.serveClientTools, or `keel run --tools`) runs it and sends its result by
 * the clientToolResult Update; the model sees it. A timeout, a permission rule, an approval, an
 * output schema, a second answer, a cancel; a monitor and a handoff target serve them too.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ClientToolRejectedError } from '../src/client/client-tools.js';
import { ClientToolsLoadError, loadClientTools } from '../src/client/client-tools-loader.js';
import { RunFailedError } from '../src/client/run-handle.js';
import { defineAgent, defineTool } from '../src/core/define.js';
import { ref } from '../src/core/handoff.js';
import { defineGuardrail } from '../src/core/guardrails.js';
import { defineMiddleware } from '../src/core/middleware.js';
import type { ClientToolResult } from '../src/core/client-tools.js';
import type { RunEvent } from '../src/core/run.js';
import type { RecordedRequest, Responder } from './support/model-server.js';
import { keel as keelCli } from './support/cli.js';
import { useKeel } from './support/keel.js';
import { until } from './support/until.js';

const retry = { retry: { initialInterval: '50ms', maximumInterval: '200ms' } };
const ofType = <T extends RunEvent['type']>(events: RunEvent[], type: T) => events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
const messagesOf = (r: RecordedRequest) => r.body.messages as { role: string; content: unknown; tool_call_id?: string }[];
const toolMessage = (r: RecordedRequest, id?: string) => messagesOf(r).find((m) => m.role === 'tool' && (id === undefined || m.tool_call_id === id));

const readNote = defineTool({
  name: 'read_note',
  description: "Read one of the user's notes, on their machine.",
  input: z.object({ name: z.string() }),
  output: z.object({ text: z.string() }),
  runsOn: 'client',
});
const askUser = defineTool({
  name: 'ask_user',
  description: 'Ask the user a question.',
  input: z.object({ question: z.string() }),
  runsOn: 'client',
  timeout: '1s',
});
const sensitive = defineTool({
  name: 'read_secret',
  description: 'Read a secret file on the user machine.',
  input: z.object({ path: z.string() }),
  runsOn: 'client',
  requiresApproval: true,
});

/** Calls `tool` with `args` first; then answers with what the tool returned. */
const callThenQuote = (tool: string, args: Record<string, unknown>, id = 'c1'): Responder => (request) => {
  const result = toolMessage(request, id);
  if (result) return { text: `The tool said: ${String(result.content)}` };
  return { toolCalls: [{ id, name: tool, arguments: args }] };
};

const notes = defineAgent({ name: 'notes', instructions: 'You read notes.', model: 'openai:notes-model', modelSettings: retry, tools: [readNote] });
const asker = defineAgent({ name: 'asker', instructions: 'You ask.', model: 'openai:asker-model', modelSettings: retry, tools: [askUser, readNote] });
const denied = defineAgent({
  name: 'denied',
  instructions: 'You read notes.',
  model: 'openai:denied-model',
  modelSettings: retry,
  tools: [readNote],
  permissions: { deny: ['read_note'] },
});
const careful = defineAgent({ name: 'careful', instructions: 'You read secrets.', model: 'openai:careful-model', modelSettings: retry, tools: [sensitive] });
const strict = defineAgent({ name: 'strict', instructions: 'You read notes.', model: 'openai:strict-model', modelSettings: retry, tools: [readNote] });
const waiter = defineAgent({ name: 'waiter', instructions: 'You read notes.', model: 'openai:waiter-model', modelSettings: retry, tools: [readNote] });
const watcher = defineAgent({ name: 'watcher', instructions: 'You watch notes.', model: 'openai:watcher-model', modelSettings: retry, tools: [readNote] });
const front = defineAgent({ name: 'front', instructions: 'You route.', model: 'openai:front-model', modelSettings: retry, handoffs: [ref('notes-desk')] });
const notesDesk = defineAgent({ name: 'notes-desk', instructions: 'You read notes.', model: 'openai:notes-desk-model', modelSettings: retry, tools: [readNote] });
const cliNotes = defineAgent({ name: 'cli-notes', instructions: 'You read notes.', model: 'openai:cli-notes-model', modelSettings: retry, tools: [readNote] });

const stamped = defineMiddleware({ name: 'stamp', afterCall: (call, result) => ({ content: `${result.content} [checked by ${call.tool}'s middleware]` }) });
const audited = defineAgent({ name: 'audited', instructions: 'You read notes.', model: 'openai:audited-model', modelSettings: retry, tools: [readNote], middleware: [stamped] });
const researcher = defineAgent({ name: 'researcher', instructions: 'You read notes for others.', model: 'openai:researcher-model', modelSettings: retry, tools: [readNote] });
const lead = defineAgent({ name: 'lead', instructions: 'You delegate.', model: 'openai:lead-model', modelSettings: retry, subAgents: [researcher] });

const noDrops = defineGuardrail({ name: 'no-drops', check: () => ({ tripped: true, reason: 'tables are never dropped' }) });
const dropTable = defineTool({ name: 'drop_table', description: 'Drop a table.', input: z.object({}), readOnly: true, guardrails: { toolInput: [noDrops] }, execute: () => 'dropped' });
const glance = defineTool({ name: 'glance', description: "Glance at the user's screen.", input: z.object({}), readOnly: true, runsOn: 'client' });
const reckless = defineAgent({ name: 'reckless', instructions: 'You act.', model: 'openai:reckless-model', modelSettings: retry, tools: [glance, dropTable] });

const scout = defineAgent({ name: 'scout', instructions: 'You read field notes.', model: 'openai:scout-model', modelSettings: retry, tools: [readNote] });
const scoutLead = defineAgent({ name: 'scout-lead', instructions: 'You send scouts.', model: 'openai:scout-lead-model', modelSettings: retry, background: { agent: scout, onParentEnd: 'continue' } });

const t = useKeel([reckless, scout, scoutLead, notes, asker, denied, careful, strict, waiter, watcher, front, notesDesk, cliNotes, audited, lead, researcher]);

describe('defineTool with runsOn', () => {
  const input = z.object({ path: z.string() });
  it('a client tool has no execute, a worker tool has one: each is said at definition', () => {
    expect(() => defineTool({ name: 'a', description: 'a', input, runsOn: 'client', execute: () => 'x' })).toThrow(/runs on the client \(runsOn: 'client'\), so it has no execute function on the worker/);
    expect(() => defineTool({ name: 'b', description: 'b', input })).toThrow(/Tool "b" has no execute function: give it one, or runsOn: 'client'/);
    expect(() => defineTool({ name: 'c', description: 'c', input, runsOn: 'client', retry: { maximumAttempts: 2 } })).toThrow(/retry applies to tools that run on a worker/);
    expect(() => defineTool({ name: 'd', description: 'd', input, output: z.string(), execute: () => 'x' })).toThrow(/output .* is for client tools only/);
    expect(() => defineTool({ name: 'e', description: 'e', input, runsOn: 'laptop' as 'client' })).toThrow(/runsOn must be "worker" or "client", got "laptop"/);
  });

  it('the spec records where it runs, its wait and its output schema', () => {
    expect(readNote.spec).toMatchObject({ runsOn: 'client', outputSchema: { type: 'object', properties: { text: { type: 'string' } } } });
    expect(askUser.spec).toMatchObject({ runsOn: 'client', timeoutMs: 1000 });
    expect(defineTool({ name: 'w', description: 'w', input, runsOn: 'worker', execute: () => 'x' }).spec).not.toHaveProperty('runsOn');
  });
});

describe('client tools', () => {
  it('a client runs the call and the model sees its output; the events name the client', async () => {
    t.server.script('notes-model', callThenQuote('read_note', { name: 'groceries' }));
    const run = await t.keel.client.start('notes', 'What is on my groceries note?');
    const seen: string[] = [];
    const served = await run.serveClientTools({
      read_note: async (args, ctx) => {
        seen.push(`${ctx.tool} ${ctx.callId} ${JSON.stringify(args)}`);
        return { text: 'milk, eggs' };
      },
    });
    expect(seen).toEqual(['read_note c1 {"name":"groceries"}']);
    expect(served).toEqual([{ callId: 'c1', tool: 'read_note', outcome: 'output' }]);
    const result = await run.result();
    expect(result).toMatchObject({ status: 'completed', output: 'The tool said: {"text":"milk, eggs"}' });
    const requests = t.server.requests('notes-model');
    expect(toolMessage(requests.at(-1)!)).toMatchObject({ tool_call_id: 'c1', content: '{"text":"milk, eggs"}' });
    const events = await run.events();
    expect(ofType(events, 'client_tool.requested')).toEqual([expect.objectContaining({ callId: 'c1', tool: 'read_note', arguments: '{"name":"groceries"}' })]);
    expect(ofType(events, 'tool.finished')).toEqual([expect.objectContaining({ callId: 'c1', isError: false, stage: 'client', by: 'client' })]);
    // The worker ran no tool activity for it: a client answered.
    expect(ofType(events, 'tool.started')).toEqual([]);
  });

  it('no client answers within the timeout: the model gets an error result, named as the timeout', async () => {
    // The model asks (which times out), then reads a note (which waits until the test answers it).
    t.server.script('asker-model', (request) => {
      const results = messagesOf(request).filter((m) => m.role === 'tool');
      if (results.length === 0) return { toolCalls: [{ id: 'q1', name: 'ask_user', arguments: { question: 'Which city?' } }] };
      if (results.length === 1) return { toolCalls: [{ id: 'q2', name: 'read_note', arguments: { name: 'cities' } }] };
      return { text: results.map((r) => String(r.content)).join(' | ') };
    });
    const run = await t.keel.client.start('asker', 'Plan my trip.');
    await until(() => run.clientToolCalls(), (calls) => calls.some((c) => c.callId === 'q2'), { retryErrors: true, what: 'the note to be read' });
    // A late answer to the first is refused, saying why.
    await expect(run.sendClientToolResult({ callId: 'q1', output: 'Lisbon' })).rejects.toThrow(/Call "q1" was already timed out/);
    await run.sendClientToolResult({ callId: 'q2', output: { text: 'Lisbon' } });
    const result = await run.result();
    expect(result.output).toMatch(/^Error: no client answered ask_user within 1 s, so it did not run\..* \| {"text":"Lisbon"}$/);
    const finished = ofType(await run.events(), 'tool.finished');
    expect(finished).toEqual([
      expect.objectContaining({ callId: 'q1', isError: true, stage: 'client', by: 'timeout' }),
      expect.objectContaining({ callId: 'q2', isError: false, stage: 'client', by: 'client' }),
    ]);
  });

  it('a call a permission rule denies is never published to a client', async () => {
    t.server.script('denied-model', callThenQuote('read_note', { name: 'diary' }));
    const run = await t.keel.client.start('denied', 'Read my diary.');
    const result = await run.result();
    expect(result.output).toMatch(/The call to read_note was denied \(permissions\)/);
    const events = await run.events();
    // run.finished follows every event the call could have made: none was a publication.
    expect(events.at(-1)?.type).toBe('run.finished');
    expect(ofType(events, 'client_tool.requested')).toEqual([]);
    expect(ofType(events, 'tool.finished')).toEqual([expect.objectContaining({ callId: 'c1', isError: true, stage: 'permissions' })]);
  });

  it('a call that needs approval is published only once a person allows it', async () => {
    t.server.script('careful-model', callThenQuote('read_secret', { path: '~/.ssh/config' }));
    const run = await t.keel.client.start('careful', 'Show my ssh config.');
    await until(() => run.pending(), (p) => p.length === 1, { retryErrors: true, what: 'the call to wait for approval' });
    expect(await run.clientToolCalls()).toEqual([]);
    await run.approve('c1');
    const served = await run.serveClientTools({ read_secret: ({ path }) => `Host * in ${String(path)}` });
    expect(served).toEqual([{ callId: 'c1', tool: 'read_secret', outcome: 'output' }]);
    expect((await run.result()).output).toBe('The tool said: Host * in ~/.ssh/config');
    const types = (await run.events()).map((e) => e.type);
    expect(types.indexOf('approval.decided')).toBeLessThan(types.indexOf('client_tool.requested'));
  });

  it('an output that fails the output schema, an unknown call and a second answer are refused; the call waits on', async () => {
    t.server.script('strict-model', callThenQuote('read_note', { name: 'todo' }));
    const run = await t.keel.client.start('strict', 'Read my todo note.');
    const [call] = await until(() => run.clientToolCalls(), (calls) => calls.length === 1, { retryErrors: true, what: 'the call to be published' });
    expect(call).toMatchObject({ callId: 'c1', tool: 'read_note', arguments: { name: 'todo' }, turn: 1 });
    expect((await run.status()).clientCalls).toEqual([call]);
    const shown = await keelCli(['status', run.workflowId]);
    expect(shown.stdout).toMatch(/Waiting for a client \(1 call\)\n {2}read_note \(call c1\) until .*\n {4}\{"name":"todo"\}/);

    const wrong = run.sendClientToolResult({ callId: 'c1', output: { text: 5 } });
    await expect(wrong).rejects.toBeInstanceOf(ClientToolRejectedError);
    await expect(wrong).rejects.toThrow(/The output for read_note \(call "c1"\) does not match its output schema: text: .*Nothing was recorded/);
    await expect(run.sendClientToolResult({ callId: 'nope', output: { text: 'x' } })).rejects.toThrow(/Call "nope" is not waiting for a client in this run; waiting: c1/);
    const both = { callId: 'c1', output: { text: 'x' }, error: 'y' } as unknown as ClientToolResult;
    await expect(run.sendClientToolResult(both)).rejects.toThrow(/give either "output" or "error", not both/);
    // Nothing changed: the call still waits.
    expect(await run.clientToolCalls()).toEqual([call]);

    expect(await run.sendClientToolResult({ callId: 'c1', output: { text: 'buy stamps' } })).toEqual({ callId: 'c1', pending: 0 });
    // A retry of the answer (the same Update ID) applies once: it gets the first one's receipt.
    expect(await run.sendClientToolResult({ callId: 'c1', output: { text: 'buy stamps' } })).toEqual({ callId: 'c1', pending: 0 });
    // Another answer (another client, another Update ID) is refused.
    await expect(run.sendClientToolResult({ callId: 'c1', output: { text: 'again' } }, { updateId: 'second-client' })).rejects.toThrow(/Call "c1" was already answered/);
    expect((await run.result()).output).toBe('The tool said: {"text":"buy stamps"}');
    expect(ofType(await run.events(), 'tool.finished')).toEqual([expect.objectContaining({ result: '{"text":"buy stamps"}', by: 'client' })]);
  });

  it('arguments that do not fit the input schema get an error result and are never published', async () => {
    t.server.script('notes-model', callThenQuote('read_note', { name: 5 }, 'c3'));
    const run = await t.keel.client.start('notes', 'Read note five.');
    expect((await run.result()).output).toMatch(/^The tool said: Error: invalid arguments for read_note: name: /);
    const events = await run.events();
    expect(events.at(-1)?.type).toBe('run.finished');
    expect(ofType(events, 'client_tool.requested')).toEqual([]);
    expect(ofType(events, 'tool.finished')).toEqual([expect.objectContaining({ callId: 'c3', isError: true, stage: 'client' })]);
  });

  it('a handler that throws gives the model an error result', async () => {
    t.server.script('notes-model', callThenQuote('read_note', { name: 'missing' }, 'c2'));
    const run = await t.keel.client.start('notes', 'Read my missing note.');
    const served = await run.serveClientTools({
      read_note: () => {
        throw new Error('ENOENT: no note named missing');
      },
    });
    expect(served).toEqual([{ callId: 'c2', tool: 'read_note', outcome: 'error', detail: 'ENOENT: no note named missing' }]);
    expect((await run.result()).output).toBe('The tool said: Error: read_note failed on the client: ENOENT: no note named missing');
  });

  it("the stages after a call (here a middleware's afterCall) see the client's answer", async () => {
    t.server.script('audited-model', callThenQuote('read_note', { name: 'audit' }));
    const run = await t.keel.client.start('audited', 'Read the audit note.');
    await run.serveClientTools({ read_note: () => ({ text: 'ok' }) });
    expect((await run.result()).output).toBe('The tool said: {"text":"ok"} [checked by read_note\'s middleware]');
    expect(ofType(await run.events(), 'tool.finished')).toEqual([expect.objectContaining({ stage: 'client', by: 'client' })]);
  });

  it('a call of the same turn that blocks the run stops a client call from waiting', async () => {
    t.server.script('reckless-model', [{ toolCalls: [{ id: 'g1', name: 'glance', arguments: {} }, { id: 'x1', name: 'drop_table', arguments: {} }] }]);
    const run = await t.keel.client.start('reckless', 'Look, then drop the table.');
    // No client serves glance: the run ends at the guardrail, not after glance's 5-minute timeout.
    expect(await run.result()).toMatchObject({ status: 'blocked', blocked: { guardrail: 'no-drops' } });
    expect(await run.clientToolCalls().catch(() => [])).toEqual([]);
  });

  it('a run cancelled while a call waits for a client ends cancelled', async () => {
    t.server.script('waiter-model', callThenQuote('read_note', { name: 'never' }));
    const run = await t.keel.client.start('waiter', 'Read a note.');
    await until(() => run.clientToolCalls(), (calls) => calls.length === 1, { retryErrors: true, what: 'the call to be published' });
    await run.cancel();
    await expect(run.result()).rejects.toBeInstanceOf(RunFailedError);
    expect(await run.describe()).toMatchObject({ status: 'cancelled' });
    expect((await run.events()).at(-1)).toMatchObject({ type: 'run.finished', status: 'cancelled' });
  });
});

describe('client tools in every kind of run', () => {
  it("a sub-agent's client calls are listed on the root run, and its client answers them in the sub-agent's run", async () => {
    t.server.script('lead-model', (request) => {
      const result = toolMessage(request, 'ask');
      if (result) return { text: `Lead: ${String(result.content)}` };
      return { toolCalls: [{ id: 'ask', name: 'researcher', arguments: { input: 'Read the budget note.' } }] };
    });
    t.server.script('researcher-model', callThenQuote('read_note', { name: 'budget' }, 'r1'));
    const run = await t.keel.client.start('lead', 'What does the budget note say?');
    const contexts: string[] = [];
    const served = await run.serveClientTools({
      read_note: ({ name }, ctx) => {
        contexts.push(ctx.workflowId);
        return { text: `${String(name)}: 40k` };
      },
    });
    expect(served).toEqual([{ callId: 'r1', tool: 'read_note', outcome: 'output' }]);
    const child = `${run.workflowId}/researcher-ask`;
    expect(contexts).toEqual([child]);
    expect((await run.result()).output).toBe('Lead: The tool said: {"text":"budget: 40k"}');
    expect(ofType(await run.events(), 'client_tool.requested')).toEqual([expect.objectContaining({ callId: 'r1', tool: 'read_note', run: child })]);
    const childEvents = await t.keel.client.getHandle(child).events();
    expect(ofType(childEvents, 'tool.finished')).toEqual([expect.objectContaining({ callId: 'r1', stage: 'client', by: 'client' })]);
  });

  it("a background agent's client calls are its own: a client serves them on its workflow ID", async () => {
    t.server.script('scout-lead-model', (request) =>
      toolMessage(request, 's1') ? { text: 'Scout sent.' } : { toolCalls: [{ id: 's1', name: 'spawn_agent', arguments: { name: 'field', goal: 'Read the field note.' } }] },
    );
    t.server.script('scout-model', (request) => {
      const result = toolMessage(request, 'f1');
      if (result) return { toolCalls: [{ id: 'd1', name: 'report_done', arguments: { detail: `field: ${String(result.content)}` } }] };
      return { toolCalls: [{ id: 'f1', name: 'read_note', arguments: { name: 'field' } }] };
    });
    const run = await t.keel.client.start('scout-lead', 'Send a scout.');
    expect((await run.result()).output).toBe('Scout sent.');
    const field = t.keel.client.getMonitor(`${run.workflowId}/field`);
    const served = await field.serveClientTools({ read_note: () => ({ text: 'tracks by the river' }) });
    expect(served).toEqual([{ callId: 'f1', tool: 'read_note', outcome: 'output' }]);
    expect(await field.result()).toMatchObject({ status: 'completed', output: 'field: {"text":"tracks by the river"}' });
  });

  it('a monitor publishes its client calls, and a client attached to it answers them', async () => {
    t.server.script('watcher-model', (request) => {
      const result = toolMessage(request);
      if (result) return { toolCalls: [{ id: 'd1', name: 'report_done', arguments: { detail: `saw ${String(result.content)}` } }] };
      return { toolCalls: [{ id: 'w1', name: 'read_note', arguments: { name: 'alerts' } }] };
    });
    const monitor = await t.keel.client.startMonitor('watcher', 'Watch the alerts note.');
    const waiting = await until(() => monitor.status(), (s) => (s.clientCalls?.length ?? 0) > 0, { retryErrors: true, what: "the monitor's call to be published" });
    expect(waiting.clientCalls).toEqual([expect.objectContaining({ callId: 'w1', tool: 'read_note', arguments: { name: 'alerts' } })]);
    const served = await monitor.serveClientTools({ read_note: () => ({ text: 'all quiet' }) });
    expect(served).toEqual([{ callId: 'w1', tool: 'read_note', outcome: 'output' }]);
    expect(await monitor.result()).toMatchObject({ status: 'completed', output: 'saw {"text":"all quiet"}' });
    expect(ofType(await monitor.events(), 'tool.finished').find((e) => e.callId === 'w1')).toMatchObject({ stage: 'client', by: 'client' });
  });

  it('the agent a run was handed off to has its client tools served by the client attached to the run', async () => {
    t.server.script('front-model', [{ toolCalls: [{ id: 'h1', name: 'transfer_to_notes-desk', arguments: {} }] }]);
    t.server.script('notes-desk-model', callThenQuote('read_note', { name: 'handover' }, 'n1'));
    const run = await t.keel.client.start('front', 'Read my handover note.');
    const served = await run.serveClientTools({ read_note: ({ name }) => ({ text: `the ${String(name)} note` }) });
    expect(served).toEqual([{ callId: 'n1', tool: 'read_note', outcome: 'output' }]);
    expect(await run.result()).toMatchObject({ agent: 'notes-desk', output: 'The tool said: {"text":"the handover note"}' });
  });
});

describe('loadClientTools', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-client-tools-'));
  const module = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  it('takes an object of handlers (clientTools or the default export), or named functions', async () => {
    expect(Object.keys(await loadClientTools(module('a.mjs', 'export const clientTools = { read_note: () => 1, ask_user: () => 2 };')))).toEqual(['read_note', 'ask_user']);
    expect(Object.keys(await loadClientTools(module('b.mjs', 'export default { read_note: () => 1 };')))).toEqual(['read_note']);
    expect(Object.keys(await loadClientTools(module('c.mjs', 'export function read_note() {} export const limit = 3;')))).toEqual(['read_note']);
  });
  it('says what is wrong with a module that cannot serve', async () => {
    await expect(loadClientTools(module('d.mjs', 'export const limit = 3;'))).rejects.toThrow(/d\.mjs exports no client tool handlers: export an object of functions/);
    await expect(loadClientTools(module('e.mjs', 'export default { read_note: "cat notes" };'))).rejects.toThrow(/the handler for read_note must be a function/);
    await expect(loadClientTools(join(dir, 'missing.mjs'))).rejects.toThrow(ClientToolsLoadError);
  });
});

describe('keel run --tools', () => {
  it('runs the client tools the module exports and prints the answer', async () => {
    t.server.script('cli-notes-model', callThenQuote('read_note', { name: 'plans' }));
    const module = fileURLToPath(new URL('./fixtures/client-tools/handlers.mjs', import.meta.url));
    const { code, stdout, stderr } = await keelCli(['run', 'cli-notes', 'Read my plans note.', '--tools', module, '--task-queue', t.keel.taskQueue]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/read_note waits for a client \(call c1/);
    expect(stdout).toContain('The tool said: {"text":"note plans from the client (call c1)"}');
  });

  it('refuses a module that exports no handlers, before any run starts', async () => {
    const module = fileURLToPath(new URL('./fixtures/client-tools/does-not-exist.mjs', import.meta.url));
    const { code, stderr } = await keelCli(['run', 'cli-notes', 'Hello.', '--tools', module, '--task-queue', t.keel.taskQueue]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/Cannot load client tools from .*does-not-exist\.mjs/);
  });
});
