/**
 * No payload a client sends can wedge a run (src/workflows/payloads.ts): a signal whose payload
 * is not JSON becomes a recorded rejection and the run goes on; a query with one fails alone; an
 * Update with one is rejected before it is accepted.
 */
import { Client, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { encode } from '@temporalio/common/lib/encoding.js';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/core/define.js';
import type { RunEvent } from '../src/core/run.js';
import { useKeel } from './support/keel.js';
import { until as waitUntil } from './support/until.js';

const until = <T>(read: () => Promise<T>, ok: (v: T) => boolean) => waitUntil(read, ok, { timeoutMs: 30_000, retryErrors: true });

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploy the service.',
  input: z.object({ env: z.string() }),
  requiresApproval: true,
  execute: ({ env }) => `deployed to ${env}`,
});

const ops = defineAgent({ name: 'payload-ops', instructions: 'You operate the service.', model: 'openai:payloads', tools: [deploy] });
const watcher = defineAgent({
  name: 'payload-watch',
  instructions: 'Watch the disk.',
  model: 'openai:payload-watch',
  modelSettings: { retry: { initialInterval: '100ms', maximumInterval: '200ms' } },
});

const t = useKeel([ops, watcher]);

const ofType = <T extends RunEvent['type']>(events: RunEvent[], type: T) => events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);

const json = (data: string): Payload => ({ metadata: { encoding: encode('json/plain') }, data: encode(data) });
/** Payloads no JSON converter reads: invalid JSON, an encoding the default converter lacks, no encoding, binary. */
const BAD: Payload[] = [
  json('{"callId": "d1", "decision": '),
  { metadata: { encoding: encode('application/x-protobuf') }, data: encode('\u0001\u0002') },
  { metadata: {}, data: encode('{}') },
  { metadata: { encoding: encode('binary/plain') }, data: encode('allow') },
];

/** Sends a signal with a raw payload, as any client can (the Go SDK, `temporal workflow signal --input-meta`...). */
async function rawSignal(workflowId: string, signalName: string, payload: Payload): Promise<void> {
  await t.keel.env.client.workflowService.signalWorkflowExecution({
    namespace: 'default',
    workflowExecution: { workflowId },
    signalName,
    input: { payloads: [payload] },
    identity: 'a client that does not send JSON',
  });
}

/** A second client whose codec turns every payload it sends into bytes that are not JSON. */
function corruptingClient(): Client {
  const corrupt: PayloadCodec = {
    encode: async (payloads) => payloads.map(() => json('{not json')),
    decode: async (payloads) => payloads,
  };
  return new Client({ connection: t.keel.env.connection, namespace: 'default', dataConverter: { payloadCodecs: [corrupt] } });
}

describe('a payload that is not JSON', () => {
  it("sent to a waiting run's approve signal is recorded as a rejection; the run answers queries and a later decision completes it", async () => {
    const model = `payloads-${randomUUID().slice(0, 8)}`;
    t.server.script(model, [{ toolCalls: [{ id: 'd1', name: 'deploy', arguments: { env: 'prod' } }] }, { text: 'Done.' }]);
    const run = await t.keel.client.start('payload-ops', 'Ship it.', { model: `openai:${model}` });
    await until(() => run.pending(), (p) => p.length === 1);

    for (const payload of BAD) await rawSignal(run.workflowId, 'approve', payload);
    const rejected = await until(
      async () => ofType(await run.events(), 'approval.rejected'),
      (r) => r.length === BAD.length,
    );
    expect(rejected[0]!.error).toMatch(/approve signal's payload could not be decoded \(encoding json\/plain: .*\); send plain JSON/);
    expect(rejected[1]!.error).toMatch(/encoding application\/x-protobuf/);
    expect(rejected[2]!.error).toMatch(/encoding \(none\)/);
    // binary/plain decodes (to bytes), and the decision's own check refuses what it got.
    expect(rejected[3]!.error).not.toMatch(/could not be decoded/);
    expect((await run.status()).status).toBe('awaiting_approval');

    // An Update and a query whose payloads are not JSON fail alone.
    const corrupt = corruptingClient().workflow.getHandle(run.workflowId);
    await expect(corrupt.executeUpdate('approve', { args: [{ callId: 'd1', decision: 'allow' }] })).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
    await expect(corrupt.query('events', 0)).rejects.toThrow(/events query's payload could not be decoded/);
    expect(await run.pending()).toHaveLength(1);

    await run.signalDecision({ callId: 'd1', decision: 'allow' });
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Done.' });
  });

  it("sent to a monitor's inject signal is recorded as a warning; a later message wakes it", async () => {
    t.server.script('payload-watch', (request) => {
      const messages = request.body.messages as { role: string; content: unknown }[];
      const last = messages.at(-1)!;
      if (last.role !== 'user') return { text: 'Noted.' };
      if (JSON.stringify(last.content).includes('[Inbox]')) return { toolCalls: [{ name: 'report_done', arguments: { detail: 'read the message' } }] };
      return { toolCalls: [{ name: 'schedule_next_turn', arguments: { delay_seconds: 3600, next_prompt: 'look again', reason: 'nothing to do' } }] };
    });
    const monitor = await t.keel.client.startMonitor('payload-watch', 'Watch the disk.');
    await until(() => monitor.status(), (s) => s.phase === 'sleeping');

    await rawSignal(monitor.workflowId, 'inject', json('"the disk is'));
    const [rejected] = await until(async () => ofType(await monitor.events(), 'signal.rejected'), (r) => r.length === 1);
    expect(rejected).toMatchObject({ signal: 'inject', error: expect.stringMatching(/inject signal's payload could not be decoded/) });
    expect(ofType(await monitor.events(), 'monitor.injected')).toEqual([]);

    await monitor.inject('the disk is 95% full');
    expect(await monitor.result()).toMatchObject({ status: 'completed', detail: 'read the message' });
  });
});
