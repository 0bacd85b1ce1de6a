import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RunFailedError } from '../src/client/agent-client.js';
import { defineAgent, defineTool } from '../src/core/define.js';
import type { Message } from '../src/core/messages.js';
import { useKeel } from './support/keel.js';
import { activityEvents, eventTypes, historyOf } from './support/history.js';
import { until } from './support/until.js';

const FILES: Record<string, string> = {
  'README.md': '# Hello\nThis project says hello.',
  'src/main.ts': 'console.log("hello");',
};

/** When each tool call ran, as the tool itself saw it, by workflow ID. */
const windows = new Map<string, { callId: string; start: number; end: number }[]>();

/**
 * The two calls of the parallel turn (c1 and c2) each wait until the other has started: run one
 * after the other, the first would wait in vain and fail, and its error would be its result.
 */
const partners: Record<string, string> = { c1: 'c2', c2: 'c1' };

async function timed<T>(ctx: { workflowId: string; callId: string }, fn: () => T): Promise<T> {
  const window = { callId: ctx.callId, start: performance.now(), end: Infinity };
  windows.set(ctx.workflowId, [...(windows.get(ctx.workflowId) ?? []), window]);
  try {
    const partner = partners[ctx.callId];
    if (partner) await until(() => windows.get(ctx.workflowId)!.some((w) => w.callId === partner), Boolean, { timeoutMs: 20_000, intervalMs: 10 });
    return fn();
  } finally {
    window.end = performance.now();
  }
}

const readFile = defineTool({
  name: 'read_file',
  description: 'Read a file of the project.',
  input: z.object({ path: z.string() }),
  readOnly: true,
  execute: ({ path }, ctx) => timed(ctx, () => {
    const text = FILES[path];
    if (text === undefined) throw new Error(`no such file: ${path}`);
    return text;
  }),
});

const listDir = defineTool({
  name: 'list_dir',
  description: 'List the files of the project.',
  input: z.object({}),
  readOnly: true,
  execute: (_args, ctx) => timed(ctx, () => Object.keys(FILES)),
});

/** A read-only tool that fails for good: its attempt times out, and it has no retries left. */
const flaky = defineTool({
  name: 'flaky',
  description: 'Fails.',
  input: z.object({}),
  readOnly: true,
  timeout: '1s',
  retry: { maximumAttempts: 1 },
  execute: () => new Promise(() => undefined),
});

/** A read-only sibling that ends only after the flaky call has failed for good, and says when it is done. */
const finished = new Set<string>();
const slowSibling = defineTool({
  name: 'slow_sibling',
  description: 'Takes a while.',
  input: z.object({}),
  readOnly: true,
  execute: async (_args, ctx) => {
    const history = () => t.keel.env.client.workflow.getHandle(ctx.workflowId).fetchHistory();
    await until(async () => eventTypes(await history()), (types) => types.includes('ACTIVITY_TASK_TIMED_OUT'), { timeoutMs: 30_000 });
    finished.add(ctx.workflowId);
    return 'sibling done';
  },
});

const submit = defineTool({
  name: 'submit',
  description: 'Submit the final report.',
  input: z.object({ report: z.string() }),
  execute: ({ report }) => ({ accepted: true, report }),
});

function coder(name: string, model: string, extra: Partial<Parameters<typeof defineAgent>[0]> = {}) {
  return defineAgent({
    name,
    instructions: 'You read code and report.',
    model,
    tools: [readFile, listDir, submit, flaky, slowSibling],
    maxTurns: 8,
    modelSettings: { retry: { initialInterval: '50ms', maximumInterval: '200ms' } },
    ...extra,
  });
}

const Report = z.object({ files: z.number().int(), summary: z.string() });

const agents = [
  coder('coder-openai', 'openai:loop-openai'),
  coder('coder-anthropic', 'anthropic:loop-anthropic'),
  coder('coder-stream', 'openai:loop-stream', { modelSettings: { stream: true } }),
  coder('reporter', 'openai:loop-output', { output: Report, outputRetries: 2 }),
  coder('reporter-valid', 'openai:loop-output-valid', { output: Report }),
  coder('reporter-fixed', 'openai:loop-output-fixed', { output: Report }),
  coder('tool-errors', 'anthropic:loop-tool-errors'),
  coder('short', 'openai:loop-short', { maxTurns: 2 }),
  coder('submitter', 'openai:loop-stop', { stopAtTools: ['submit'] }),
  coder('batch', 'openai:loop-batch'),
];

const t = useKeel(agents);

const threeTurns = [
  {
    text: 'Let me look around.',
    toolCalls: [
      { id: 'c1', name: 'list_dir', arguments: {} },
      { id: 'c2', name: 'read_file', arguments: { path: 'README.md' } },
    ],
    usage: { inputTokens: 100, outputTokens: 10 },
  },
  {
    toolCalls: [{ id: 'c3', name: 'read_file', arguments: { path: 'src/main.ts' } }],
    usage: { inputTokens: 200, outputTokens: 20 },
  },
  { text: 'The project prints hello.', usage: { inputTokens: 300, outputTokens: 30 } },
];

describe.each([
  { agent: 'coder-openai', model: 'loop-openai', api: 'openai' },
  { agent: 'coder-anthropic', model: 'loop-anthropic', api: 'anthropic' },
  { agent: 'coder-stream', model: 'loop-stream', api: 'openai' },
])('a three-turn run on $agent', ({ agent, model, api }) => {
  it('runs read-only tools in parallel, feeds results back and answers', async () => {
    t.server.script(model, threeTurns);
    const run = await t.keel.client.start(agent, 'What does this project do?');
    const result = await run.result();

    expect(result).toEqual({
      kind: 'run',
      status: 'completed',
      output: 'The project prints hello.',
      usage: { inputTokens: 600, outputTokens: 60 },
      turns: 3,
      agent,
    });

    const transcript = await run.transcript();
    expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant', 'tool', 'assistant']);
    expect(transcript[2]).toMatchObject({ role: 'tool', toolCallId: 'c1', content: JSON.stringify(Object.keys(FILES)) });
    expect(transcript[3]).toMatchObject({ role: 'tool', toolCallId: 'c2', content: FILES['README.md'] });

    // The model saw the tool results in its own wire format.
    const requests = t.server.requests(model);
    expect(requests).toHaveLength(3);
    const third = JSON.stringify(requests[2]!.body);
    expect(third).toContain(api === 'openai' ? '"tool_call_id":"c3"' : '"tool_use_id":"c3"');
    expect(third).toContain('console.log(\\"hello\\")');

    // The two tools of turn 1 ran at the same time: each started before the other ended.
    const [first, second] = windows.get(run.workflowId)!;
    expect(Math.max(first!.start, second!.start)).toBeLessThan(Math.min(first!.end, second!.end));
    const events = await run.events();
    expect(events.map((e) => e.type)).toEqual([
      'run.started',
      'turn.started', 'turn.finished', 'tool.requested', 'tool.requested',
      'tool.started', 'tool.started', 'tool.finished', 'tool.finished',
      'turn.started', 'turn.finished', 'tool.requested', 'tool.started', 'tool.finished',
      'turn.started', 'turn.finished',
      'run.finished',
    ]);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect((await run.events({ after: 15 })).map((e) => e.seq)).toEqual([16, 17]);

    // The run reads as a story in the Temporal UI: summaries and search attributes.
    const history = await historyOf(run);
    const summaries = activityEvents(history).map((a) => a.summary);
    expect(summaries).toEqual([
      `turn 1 · ${api}:${model}`, 'tool list_dir {}', 'tool read_file {"path":"README.md"}',
      `turn 2 · ${api}:${model}`, 'tool read_file {"path":"src/main.ts"}',
      `turn 3 · ${api}:${model}`,
    ]);
    const description = await run.workflow.describe();
    expect(description.memo).toMatchObject({ prompt: 'What does this project do?' });
    expect(await run.describe()).toMatchObject({ agent, status: 'completed' });
    expect(await run.status()).toMatchObject({ agent, status: 'completed', turns: 3, messages: 7, lastSeq: 17 });
    const metadata = await run.workflow.query<{ currentDetails: string }>('__temporal_workflow_metadata');
    expect(metadata.currentDetails).toBe('completed after 3 turns');
  });
});

describe('structured output', () => {
  it('returns a valid answer parsed', async () => {
    t.server.script('loop-output-valid', [{ text: '```json\n{"files": 2, "summary": "two files"}\n```' }]);
    const result = await (await t.keel.client.start('reporter-valid', 'Report.')).result();
    expect(result.output).toEqual({ files: 2, summary: 'two files' });
  });

  it('sends an invalid answer back with the error, and takes the corrected one', async () => {
    t.server.script('loop-output-fixed', [{ text: '{"files": "two"}' }, { text: '{"files": 2, "summary": "ok"}' }]);
    const run = await t.keel.client.start('reporter-fixed', 'Report.');
    expect((await run.result()).output).toEqual({ files: 2, summary: 'ok' });
    const retry = t.server.requests('loop-output-fixed')[1]!.body.messages.at(-1);
    expect(retry.role).toBe('user');
    expect(retry.content).toMatch(/files: .*number/);
    expect(retry.content).toMatch(/summary/);
    // The schema went to OpenAI as response_format.
    expect(t.server.requests('loop-output-fixed')[0]!.body.response_format.json_schema.schema.required).toEqual(['files', 'summary']);
    const invalid = (await run.events()).filter((e) => e.type === 'output.invalid');
    expect(invalid).toHaveLength(1);
  });

  it('fails clearly after outputRetries invalid answers', async () => {
    t.server.script('loop-output', [{ text: 'not json' }, { text: '{}' }, { text: '[1]' }, { text: 'never asked' }]);
    const run = await t.keel.client.start('reporter', 'Report.');
    const failure = await run.result().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RunFailedError);
    expect((failure as RunFailedError).type).toBe('KeelInvalidOutput');
    expect((failure as Error).message).toMatch(/no valid structured output after 3 attempts/);
    expect(t.server.requests('loop-output')).toHaveLength(3);
    expect(await run.describe()).toMatchObject({ status: 'failed' });
  });
});

describe('tool errors go back to the model and the run goes on', () => {
  it('handles malformed arguments, an unknown tool, invalid arguments and a throwing tool', async () => {
    t.server.script('loop-tool-errors', [
      {
        toolCalls: [
          { id: 'bad-json', name: 'read_file', arguments: '{"path": "README.md"' },
          { id: 'unknown', name: 'delete_everything', arguments: {} },
          { id: 'bad-args', name: 'read_file', arguments: { file: 'README.md' } },
          { id: 'throws', name: 'read_file', arguments: { path: 'missing.txt' } },
        ],
      },
      { text: 'I could not read those.' },
    ]);
    const run = await t.keel.client.start('tool-errors', 'Read things.');
    const result = await run.result();
    expect(result).toMatchObject({ status: 'completed', output: 'I could not read those.', turns: 2 });

    const results = (await run.transcript()).filter((m): m is Extract<Message, { role: 'tool' }> => m.role === 'tool');
    expect(results.every((r) => r.isError)).toBe(true);
    const byId = Object.fromEntries(results.map((r) => [r.toolCallId, r.content]));
    expect(byId['bad-json']).toMatch(/not valid JSON/);
    expect(byId.unknown).toMatch(/no tool named "delete_everything".*read_file, list_dir, submit, flaky, slow_sibling/);
    // Calls the recorded spec shows to be wrong are answered by the pipeline's validate stage, no activity.
    const finishedEvents = (await run.events()).filter((e) => e.type === 'tool.finished');
    expect(Object.fromEntries(finishedEvents.map((e) => [e.callId, 'stage' in e ? (e.stage ?? 'execute') : 'execute']))).toEqual({
      'bad-json': 'validate',
      unknown: 'validate',
      'bad-args': 'execute',
      throws: 'execute',
    });
    expect(byId['bad-args']).toMatch(/invalid arguments for read_file: path/);
    expect(byId.throws).toMatch(/read_file failed: no such file: missing.txt/);

    // The model got them as error results, and each tool ran once: no retry storm.
    const second = t.server.requests('loop-tool-errors')[1]!.body;
    const blocks = second.messages.at(-1).content;
    expect(blocks.filter((b: { is_error?: boolean }) => b.is_error)).toHaveLength(4);
    const history = await historyOf(run);
    const toolActivities = activityEvents(history).filter((a) => a.type === 'toolCall');
    expect(toolActivities).toHaveLength(2);
    expect(toolActivities.every((a) => a.attempt === 1)).toBe(true);
  });

  it('a failing call in a parallel batch does not abandon its siblings: the run waits for them', async () => {
    t.server.script('loop-batch', [
      { toolCalls: [{ id: 'f', name: 'flaky', arguments: {} }, { id: 's', name: 'slow_sibling', arguments: {} }] },
      { text: 'never asked' },
    ]);
    const run = await t.keel.client.start('batch', 'Do both.');
    const failure = await run.result().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RunFailedError);
    // The sibling ran to its end, and its completion is in history before the run's failure.
    expect(finished.has(run.workflowId)).toBe(true);
    const types = eventTypes(await historyOf(run));
    expect(types.lastIndexOf('ACTIVITY_TASK_COMPLETED')).toBeLessThan(types.indexOf('WORKFLOW_EXECUTION_FAILED'));
    expect(types.filter((type) => type === 'ACTIVITY_TASK_COMPLETED')).toHaveLength(2); // the model turn, the sibling
  });
});

describe('limits', () => {
  it('ends with max_turns when the model keeps calling tools', async () => {
    t.server.script('loop-short', () => ({ toolCalls: [{ name: 'list_dir', arguments: {} }], text: 'still looking' }));
    const result = await (await t.keel.client.start('short', 'Look forever.')).result();
    expect(result).toMatchObject({ status: 'max_turns', turns: 2, output: 'still looking' });
  });

  it('stops at a stopAtTools tool with its result as the output', async () => {
    t.server.script('loop-stop', [
      { toolCalls: [{ name: 'submit', arguments: { report: 'all good' } }] },
      { text: 'never asked' },
    ]);
    const run = await t.keel.client.start('submitter', 'Submit.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: { accepted: true, report: 'all good' }, turns: 1 });
    expect(t.server.requests('loop-stop')).toHaveLength(1);
  });

  it('fails at once for an unknown agent, naming the known ones', async () => {
    const run = await t.keel.client.start('no-such-agent', 'hi');
    const failure = (await run.result().catch((e: unknown) => e)) as RunFailedError;
    expect(failure).toBeInstanceOf(RunFailedError);
    expect(failure.type).toBe('KeelUnknownAgent');
    expect(failure.message).toMatch(/Unknown agent "no-such-agent"\. This worker knows: .*coder-openai/);
  });
});
