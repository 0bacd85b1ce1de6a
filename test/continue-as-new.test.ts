/**
 * A long run continues as new with a small state: its conversation and event log stay in the
 * executions that hold them and are read through the chain. Continuing is no failure.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/core/define.js';
import { decode, historyOf } from './support/history.js';
import { providersFor, startKeel, useKeel } from './support/keel.js';
import { until } from './support/until.js';

const BIG = 60 * 1024;

const fetchPage = defineTool({
  name: 'fetch_page',
  description: 'Fetch a page of a big document.',
  input: z.object({ n: z.number().int() }),
  readOnly: true,
  // Just under the default limit, so nothing is cut: the conversation itself is big.
  execute: ({ n }) => `page ${n} `.padEnd(BIG - 100, `${n % 10}`),
});

/** Call `held` waits for the test to let it go: the moment to swap workers. */
const gate = { held: '', started: false, release: () => undefined as void };
const step = defineTool({
  name: 'step',
  description: 'A step.',
  input: z.object({ n: z.number().int() }),
  execute: async ({ n }, ctx) => {
    if (ctx.callId === gate.held) {
      gate.started = true;
      await new Promise<void>((resolve) => (gate.release = resolve));
    }
    return `step ${n}`;
  },
});

const reader = defineAgent({ name: 'reader', instructions: 'Read every page.', model: 'openai:can-big', tools: [fetchPage], maxTurns: 80 });
const stepper = defineAgent({ name: 'stepper', instructions: 'Step.', model: 'anthropic:can-steps', tools: [step], maxTurns: 40 });

const t = useKeel([reader, stepper]);

describe('continue-as-new', () => {
  it('continues a run whose conversation is over 3 MB, carrying a small state, and reads it back whole', async () => {
    const PAGES = 56;
    t.server.script('can-big', (request) => {
      const done = request.body.messages.filter((m: { role: string }) => m.role === 'tool').length;
      return done < PAGES ? { toolCalls: [{ id: `p${done}`, name: 'fetch_page', arguments: { n: done } }] } : { text: `read ${done} pages` };
    });
    const run = await t.keel.client.start('reader', 'Read all pages.', { options: { continueAsNewAfterEvents: 60 } });
    expect(await run.result()).toMatchObject({ status: 'completed', output: `read ${PAGES} pages`, turns: PAGES + 1 });

    // The model saw the whole conversation on its last turn, across every execution.
    const last = t.server.requests('can-big').at(-1)!.body.messages;
    expect(last).toHaveLength(2 + 2 * PAGES);
    expect(JSON.stringify(last).length).toBeGreaterThan(3 * 1024 * 1024);

    // The client reads the whole transcript and every event through the chain.
    const transcript = await run.transcript();
    expect(transcript).toHaveLength(1 + 2 * PAGES + 1);
    expect(transcript.filter((m) => m.role === 'tool').map((m) => m.content.split(' ')[1])).toEqual(
      Array.from({ length: PAGES }, (_, n) => String(n)),
    );
    const events = await run.events();
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const continued = events.filter((e) => e.type === 'run.continued').length;
    expect(continued).toBeGreaterThanOrEqual(5);
    expect(events.filter((e) => e.type === 'run.finished')).toEqual([expect.objectContaining({ status: 'completed' })]);
    const tail = await run.events({ after: events.length - 3 });
    expect(tail.map((e) => e.seq)).toEqual([events.length - 2, events.length - 1, events.length]);

    // The latest execution started from a small state: no messages, no events.
    const history = await historyOf(run);
    const started = history.events![0]!.workflowExecutionStartedEventAttributes!;
    const input = started.input!.payloads![0]!;
    expect(input.data!.length).toBeLessThan(8 * 1024);
    expect(decode(input)).toMatchObject({ continued: { messages: expect.any(Number), lastSeq: expect.any(Number) } });
  });

  it('records no failure for the executions that continued', async () => {
    t.server.script('can-big', (request) => {
      const done = request.body.messages.filter((m: { role: string }) => m.role === 'tool').length;
      return done < 8 ? { toolCalls: [{ id: `q${done}`, name: 'fetch_page', arguments: { n: done } }] } : { text: 'done' };
    });
    const run = await t.keel.client.start('reader', 'Read eight pages.', { options: { continueAsNewAfterEvents: 30 } });
    await run.result();
    const client = t.keel.env.client;
    const query = `WorkflowId = '${run.workflowId}'`;
    // Visibility is eventually consistent: wait until every execution of the chain is listed.
    const listExecutions = async () => {
      const found: { status: string; keel: unknown }[] = [];
      for await (const info of client.workflow.list({ query })) {
        found.push({ status: info.status.name, keel: info.searchAttributes?.KeelStatus?.[0] });
      }
      return found;
    };
    const executions = await until(
      listExecutions,
      (found) => found.length >= 3 && found.some((e) => e.status === 'COMPLETED' && e.keel === 'completed'),
      { what: 'every execution of the chain listed', intervalMs: 100 },
    );
    const continuedAsNew = executions.filter((e) => e.status === 'CONTINUED_AS_NEW');
    expect(continuedAsNew.length).toBeGreaterThanOrEqual(2);
    expect(continuedAsNew.every((e) => e.keel === 'running')).toBe(true);
    expect(executions.filter((e) => e.keel === 'failed')).toEqual([]);
    // Nor does any execution's event log say it failed.
    expect((await run.events()).filter((e) => e.type === 'run.finished').map((e) => 'status' in e && e.status)).toEqual(['completed']);
  });

  it('a new worker, after several continues, reads the conversation through the chain of executions', async () => {
    t.server.script('can-steps', (request) => {
      const done = request.body.messages.flatMap((m: { content: unknown }) => (Array.isArray(m.content) ? m.content : [])).filter(
        (b: { type: string }) => b.type === 'tool_result',
      ).length;
      return done < 12 ? { toolCalls: [{ id: `s${done}`, name: 'step', arguments: { n: done } }] } : { text: 'twelve steps' };
    });
    gate.held = 's9';
    const taskQueue = `can-swap-${Date.now()}`;
    const first = await startKeel({ agents: [stepper], providers: providersFor(t.server), taskQueue, workerOptions: { stickyQueueScheduleToStartTimeout: '1s' } });
    const run = await first.client.start(stepper, 'Take twelve steps.', { options: { continueAsNewAfterEvents: 25 } });
    await until(() => gate.started, Boolean, { what: 'the held step to start', intervalMs: 25 });
    const stopping = first.stop();
    gate.release();
    await stopping;

    // A worker with an empty cache takes over, after the run has continued as new at least twice.
    const second = await startKeel({ agents: [stepper], providers: providersFor(t.server), taskQueue });
    try {
      const handle = second.client.getHandle(run.workflowId);
      expect(await handle.result()).toMatchObject({ status: 'completed', output: 'twelve steps', turns: 13 });
      expect((await handle.events()).filter((e) => e.type === 'run.continued').length).toBeGreaterThanOrEqual(2);
      // Its model saw the whole conversation, read back from the executions that hold it.
      const last = t.server.requests('can-steps').at(-1)!.body.messages;
      expect(last).toHaveLength(1 + 2 * 12);
      expect(JSON.stringify(last)).toContain('step 0');
      expect(await handle.transcript()).toHaveLength(1 + 2 * 12 + 1);
    } finally {
      await second.stop();
    }
  });
});
