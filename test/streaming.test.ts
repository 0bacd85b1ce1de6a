/**
 * Live streaming: a run started with streaming on publishes the model's deltas and its events to
 * its stream (Temporal's workflow-streams), and a client reads them as they come, late, after a
 * reconnect, across continue-as-new, and through a worker killed mid-stream.
 */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentClient } from '../src/client/agent-client.js';
import type { RunHandle } from '../src/client/run-handle.js';
import { RunNotStreamingError } from '../src/client/run-stream.js';
import { defineAgent, defineTool } from '../src/core/define.js';
import { ref } from '../src/core/handoff.js';
import { StreamText, type StreamItem } from '../src/core/stream.js';
import { activityEvents, historyOf, decode } from './support/history.js';
import { TEMPORAL_ADDRESS, providersFor, startKeel, useKeel } from './support/keel.js';
import { STREAM_CRASH_MODEL, streamCrashAgent } from './support/model-crash-agent.js';
import { spawnWorker } from './support/spawn-worker.js';
import { until } from './support/until.js';

const retry = { retry: { initialInterval: '50ms', maximumInterval: '200ms' } };
const teller = defineAgent({ name: 'teller', instructions: 'Tell.', model: 'openai:teller-model', modelSettings: retry });
const plainTeller = defineAgent({ name: 'plain-teller', instructions: 'Tell.', model: 'openai:teller-model', modelSettings: retry });
const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a word up.',
  input: z.object({ word: z.string() }),
  readOnly: true,
  execute: async ({ word }) => `${word}: a word`,
});
const claude = defineAgent({ name: 'claude-teller', instructions: 'Tell.', model: 'anthropic:claude-teller', modelSettings: retry, tools: [lookup] });
const gpt = defineAgent({ name: 'gpt-teller', instructions: 'Tell.', model: 'openai:gpt-teller', modelSettings: retry, tools: [lookup] });
const desk = defineAgent({ name: 'stream-desk', instructions: 'Route.', model: 'openai:stream-desk', modelSettings: retry, handoffs: [ref('stream-ops')] });
const ops = defineAgent({ name: 'stream-ops', instructions: 'Operate.', model: 'openai:stream-ops', modelSettings: retry });

const t = useKeel([teller, plainTeller, claude, gpt, desk, ops]);
const cleanup: (() => unknown)[] = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn();
});

const words = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ') + '.';

/** Reads a stream to its end in the background; `items` fills as chunks arrive. */
function reader(stream: AsyncGenerator<StreamItem>, onItem?: (item: StreamItem) => Promise<void> | void) {
  const items: StreamItem[] = [];
  const done = (async () => {
    for await (const item of stream) {
      items.push(item);
      await onItem?.(item);
    }
    return items;
  })();
  return { items, done };
}

const textOf = (items: StreamItem[], turn = 1) => {
  const text = new StreamText();
  for (const item of items) text.apply(item);
  return text.text(turn);
};

describe('live streaming', () => {
  it('delivers the deltas in order while the model is still answering, then the events and the end', async () => {
    const answer = words(40, 'w');
    t.server.script('teller-model', [{ text: answer, chunkDelayMs: 25 }]);
    const run = await t.keel.client.start('teller', 'Tell me.', { stream: true });
    let openAtFirstDelta: boolean | undefined;
    const read = reader(run.stream(), async (item) => {
      if (item.type === 'text.delta' && openAtFirstDelta === undefined) openAtFirstDelta = await run.isOpen();
    });
    const items = await read.done;
    const result = await run.result();
    expect(result.output).toBe(answer);
    // The first text reached the client while the run was still running (the model was mid-answer).
    expect(openAtFirstDelta).toBe(true);
    const deltas = items.filter((i) => i.type === 'text.delta');
    // Batched: fewer chunks than words, more than one (it arrived as it was produced).
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.length).toBeLessThan(40);
    expect(deltas.every((d) => d.turn === 1 && d.attempt === 1)).toBe(true);
    expect(deltas.map((d) => d.text).join('')).toBe(answer);
    // Offsets only grow; the deltas come before the turn's end, the end is last.
    const offsets = items.map((i) => i.offset);
    expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
    const types = items.map((i) => i.type);
    expect(types.lastIndexOf('text.delta')).toBeLessThan(types.indexOf('turn.finished'));
    expect(types.slice(-2)).toEqual(['run.finished', 'stream.end']);
    expect(items.at(-1)).toMatchObject({ type: 'stream.end', status: 'completed' });
  });

  it('stores the same message with streaming on as without it', async () => {
    const steps = [{ toolCalls: [{ id: 'c1', name: 'lookup', arguments: { word: 'keel' } }] }, { text: 'A keel is the spine of a boat.' }];
    t.server.script('gpt-teller', steps);
    const plain = await t.keel.client.start('gpt-teller', 'What is a keel?');
    await plain.result();
    t.server.script('gpt-teller', steps);
    const streamed = await t.keel.client.start('gpt-teller', 'What is a keel?', { stream: true });
    const read = reader(streamed.stream());
    await streamed.result();
    await read.done;
    expect(await streamed.transcript()).toEqual(await plain.transcript());
    // The model activity's results in history are the same too.
    const results = async (run: RunHandle) =>
      ((await historyOf(run)).events ?? []).flatMap((e) => (e.activityTaskCompletedEventAttributes ? [decode(e.activityTaskCompletedEventAttributes.result?.payloads?.[0])] : []));
    expect(await results(streamed)).toEqual(await results(plain));
    // The streamed request was a streaming one, the plain one not.
    expect(t.server.requests('gpt-teller').map((r) => r.stream)).toEqual([false, false, true, true]);
    // The tool call's progress was streamed: its name, then its arguments, which add up.
    const calls = read.items.filter((i) => i.type === 'tool_call.delta' && i.turn === 1);
    expect(calls[0]).toMatchObject({ tool: 'lookup', callId: 'c1' });
    expect(JSON.parse(calls.map((c) => (c.type === 'tool_call.delta' ? c.arguments : '')).join(''))).toEqual({ word: 'keel' });
  });

  it('streams an Anthropic answer, text and tool call, the same way', async () => {
    t.server.script('claude-teller', [
      { text: 'Let me look. ', toolCalls: [{ id: 'toolu_1', name: 'lookup', arguments: { word: 'hull' } }] },
      { text: words(20, 'h'), chunkDelayMs: 10 },
    ]);
    const run = await t.keel.client.start('claude-teller', 'What is a hull?', { stream: true });
    const read = reader(run.stream());
    const result = await run.result();
    const items = await read.done;
    expect(textOf(items, 1)).toBe('Let me look. ');
    expect(textOf(items, 2)).toBe(result.output);
    const call = items.filter((i) => i.type === 'tool_call.delta');
    expect(call[0]).toMatchObject({ tool: 'lookup', callId: 'toolu_1', turn: 1 });
    expect(JSON.parse(call.map((c) => (c.type === 'tool_call.delta' ? c.arguments : '')).join(''))).toEqual({ word: 'hull' });
    expect(items.filter((i) => i.type === 'tool.finished')).toHaveLength(1);
    expect(t.server.requests('claude-teller').every((r) => r.stream)).toBe(true);
  });

  it('gives a late subscriber the turn so far, and a reconnecting one what it missed from its offset', async () => {
    const answer = words(60, 'l');
    t.server.script('teller-model', [{ text: answer, chunkDelayMs: 25 }]);
    const run = await t.keel.client.start('teller', 'Tell me at length.', { stream: true });
    // The first subscriber reads a few deltas, then goes away.
    const first: StreamItem[] = [];
    const abort = new AbortController();
    for await (const item of run.stream({ signal: abort.signal })) {
      first.push(item);
      if (first.filter((i) => i.type === 'text.delta').length === 2) abort.abort();
    }
    // It comes back from where it was, and a late subscriber arrives from the start.
    const resumed = reader(run.stream({ from: first.at(-1)!.offset + 1 }));
    const late = reader(run.stream());
    const [rest, all] = await Promise.all([resumed.done, late.done]);
    expect(textOf([...first, ...rest])).toBe(answer);
    expect([...first, ...rest].map((i) => i.offset)).toEqual(all.map((i) => i.offset));
    expect(textOf(all)).toBe(answer);
    expect((await run.result()).output).toBe(answer);
  });

  it('lets the readers of one client share one subscription: one poll per batch, not one per reader', async () => {
    const answer = words(40, 'r');
    t.server.script('teller-model', [{ text: answer, chunkDelayMs: 25 }]);
    const run = await t.keel.client.start('teller', 'Tell the room.', { stream: true });
    const readers = Array.from({ length: 5 }, () => reader(t.keel.client.getHandle(run.workflowId).stream()).done);
    const all = await Promise.all(readers);
    for (const items of all) expect(textOf(items)).toBe(answer);
    expect(new Set(all.map((items) => JSON.stringify(items))).size).toBe(1);
    const events = (await historyOf(run)).events ?? [];
    const batches = events.filter((e) => e.workflowExecutionSignaledEventAttributes).length;
    const polls = events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).length;
    // Five readers polling each would make about five polls a batch.
    expect(batches).toBeGreaterThan(1);
    expect(polls).toBeLessThanOrEqual(batches + 3);
  });

  it('follows the run across continue-as-new, to the end', async () => {
    t.server.script('gpt-teller', [
      { text: 'one ', toolCalls: [{ id: 'a', name: 'lookup', arguments: { word: 'a' } }] },
      { text: 'two ', toolCalls: [{ id: 'b', name: 'lookup', arguments: { word: 'b' } }] },
      { text: 'three ', toolCalls: [{ id: 'c', name: 'lookup', arguments: { word: 'c' } }] },
      { text: 'done' },
    ]);
    const run = await t.keel.client.start('gpt-teller', 'Count.', { stream: true, options: { continueAsNewAfterEvents: 20 } });
    const read = reader(run.stream());
    const followed: string[] = [];
    const following = (async () => {
      for await (const event of run.follow()) followed.push(event.type);
    })();
    expect((await run.result()).output).toBe('done');
    const items = await read.done;
    await following;
    expect((await run.events()).filter((e) => e.type === 'run.continued').length).toBeGreaterThan(0);
    expect([1, 2, 3, 4].map((turn) => textOf(items, turn))).toEqual(['one ', 'two ', 'three ', 'done']);
    expect(items.at(-1)).toMatchObject({ type: 'stream.end', status: 'completed' });
    // follow() read the stream: every event of the run, once, in order, though executions changed.
    expect(followed).toEqual((await run.events()).map((e) => e.type));
  });

  it('streams the agent a run was handed off to on the same stream', async () => {
    t.server.script('stream-desk', [{ toolCalls: [{ id: 'h1', name: 'transfer_to_stream-ops', arguments: {} }] }]);
    t.server.script('stream-ops', [{ text: words(10, 'o'), chunkDelayMs: 10 }]);
    const run = await t.keel.client.start('stream-desk', 'Fix it.', { stream: true });
    const items = await reader(run.stream()).done;
    expect(items.some((i) => i.type === 'handoff')).toBe(true);
    expect(textOf(items, 2)).toBe(words(10, 'o'));
    expect(t.server.requests('stream-ops').every((r) => r.stream)).toBe(true);
  });

  it('ends the stream of a cancelled run with its status', async () => {
    t.server.script('teller-model', [{ text: words(400, 'c'), chunkDelayMs: 50 }]);
    const run = await t.keel.client.start('teller', 'Talk for long.', { stream: true });
    const read = reader(run.stream());
    await until(() => read.items.filter((i) => i.type === 'text.delta').length, (n) => n >= 1, { what: 'the first delta' });
    await run.cancel();
    const items = await read.done;
    expect(items.at(-2)).toMatchObject({ type: 'run.finished', status: 'cancelled' });
    expect(items.at(-1)).toMatchObject({ type: 'stream.end', status: 'cancelled' });
  });

  it('says so when a run does not stream, and a run without streaming makes no streaming request', async () => {
    t.server.script('teller-model', [{ text: 'plain' }]);
    const run = await t.keel.client.start('plain-teller', 'Plainly.');
    await run.result();
    await expect(reader(run.stream()).done).rejects.toThrow(RunNotStreamingError);
    expect(t.server.requests('teller-model').at(-1)!.stream).toBe(false);
  });

  it('refuses a bad stream setting at the start, naming it', async () => {
    const run = await t.keel.client.start('teller', 'Tell.', { options: { stream: 'yes' as never } });
    await expect(run.result()).rejects.toThrow(/options\.stream must be true, false or an object such as \{ "batchMs": 100 \}/);
  });
});

describe('a worker killed mid-stream', () => {
  it("publishes the retried attempt's reset, and the client shows only the retried attempt's text", async () => {
    const taskQueue = `stream-crash-${randomUUID().slice(0, 8)}`;
    const env = await TestWorkflowEnvironment.createFromExistingServer({ address: TEMPORAL_ADDRESS });
    cleanup.push(() => env.teardown());
    const client = new AgentClient({ client: env.client, taskQueue });
    const second = words(15, 's');
    t.server.script(STREAM_CRASH_MODEL, [{ text: words(200, 'f'), chunkDelayMs: 50 }, { text: second, chunkDelayMs: 5 }]);
    const doomed = spawnWorker(taskQueue, t.server.url, cleanup);
    await doomed.waitFor(/worker ready/);
    const run = await client.start('stream-crash-test', 'Tell me everything.', { stream: true });
    const read = reader(run.stream());
    // Some of the first attempt's text reached the client: then its worker dies.
    await until(() => read.items.filter((i) => i.type === 'text.delta').length, (n) => n >= 2, { what: 'the first deltas' });
    const rescuer = await startKeel({ agents: [streamCrashAgent], providers: providersFor(t.server), taskQueue });
    cleanup.push(() => rescuer.stop());
    doomed.child.kill('SIGKILL');

    const result = await run.result();
    const items = await read.done;
    expect(result.output).toBe(second);
    const resetAt = items.findIndex((i) => i.type === 'turn.reset');
    expect(items[resetAt]).toMatchObject({ type: 'turn.reset', turn: 1, attempt: 2 });
    // Before the reset only the first attempt spoke; after it only the second.
    expect(items.slice(0, resetAt).filter((i) => i.type === 'text.delta').every((i) => i.type === 'text.delta' && i.attempt === 1)).toBe(true);
    expect(items.slice(resetAt).filter((i) => i.type === 'text.delta').every((i) => i.type === 'text.delta' && i.attempt === 2)).toBe(true);
    expect(textOf(items)).toBe(second);
    expect(activityEvents(await historyOf(run)).filter((a) => a.type === 'modelTurn').map((a) => a.attempt)).toEqual([2]);
  }, 120_000);
});
