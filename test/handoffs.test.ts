/** Handoffs: the model hands the run to another agent, in the same workflow, on the scripted model. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/core/define.js';
import { handoff, ref } from '../src/core/handoff.js';
import type { RunEvent } from '../src/core/run.js';
import { useKeel } from './support/keel.js';

const lookup = defineTool({
  name: 'lookup_invoice',
  description: 'Find an invoice.',
  input: z.object({ id: z.string() }),
  readOnly: true,
  execute: ({ id }) => `invoice ${id}: 42 EUR, paid`,
});

const retry = { retry: { initialInterval: '50ms', maximumInterval: '200ms' } };

const billing = defineAgent({
  name: 'billing',
  description: 'Answers questions about invoices.',
  instructions: 'You are billing. Answer invoice questions.',
  model: 'openai:billing-model',
  tools: [lookup],
  modelSettings: retry,
  handoffs: [ref('triage')],
});

const refunds = defineAgent({
  name: 'refunds',
  description: 'Handles refunds.',
  instructions: 'You are refunds.',
  model: 'openai:refunds-model',
  modelSettings: retry,
});

const triage = defineAgent({
  name: 'triage',
  instructions: 'You are triage. Route the customer.',
  model: 'openai:triage-model',
  modelSettings: retry,
  maxHandoffs: 2,
  handoffs: [
    handoff({ agent: billing, inputFilter: 'no-tools' }),
    handoff({
      agent: refunds,
      input: z.object({ reason: z.string(), priority: z.enum(['low', 'high']) }),
      onHandoff: ({ priority }) => (priority === 'low' ? 'Refunds only takes high-priority cases; answer the customer yourself.' : undefined),
      inputFilter: 'transcript',
    }),
  ],
  tools: [lookup],
});

const t = useKeel([triage, billing, refunds]);

const ofType = <T extends RunEvent['type']>(events: RunEvent[], type: T) => events.filter((e) => e.type === type) as Extract<RunEvent, { type: T }>[];
const system = (body: { messages: { role: string; content: unknown }[] }) => JSON.stringify(body.messages[0]);

describe('handoffs', () => {
  it('A hands to B and B back to A (a ref allows the cycle); the result names the agent that answered last', async () => {
    t.server.reset();
    t.server.script('triage-model', [
      { toolCalls: [{ id: 'h1', name: 'transfer_to_billing', arguments: {} }] },
      { text: 'Anything else? Triage here again.' },
    ]);
    t.server.script('billing-model', [
      { toolCalls: [{ id: 'l1', name: 'lookup_invoice', arguments: { id: 'A7' } }] },
      { toolCalls: [{ id: 'h2', name: 'transfer_to_triage', arguments: {} }] },
    ]);
    const run = await t.keel.client.start('triage', 'Was invoice A7 paid?');
    const result = await run.result();
    expect(result).toMatchObject({ status: 'completed', output: 'Anything else? Triage here again.', agent: 'triage', turns: 4 });
    const handoffs = ofType(await run.events(), 'handoff');
    expect(handoffs.map((h) => [h.from, h.to])).toEqual([
      ['triage', 'billing'],
      ['billing', 'triage'],
    ]);
    // Billing answered with its own instructions and tools.
    const [billingFirst] = t.server.requests('billing-model');
    expect(system(billingFirst!.body)).toContain('You are billing');
    expect(JSON.stringify(billingFirst!.body.tools)).toContain('transfer_to_triage');
    // Its filter (no-tools) hid triage's handoff call and its result from billing's requests...
    expect(JSON.stringify(billingFirst!.body.messages)).not.toContain('transfer_to_billing');
    expect(JSON.stringify(billingFirst!.body.messages)).toContain('Was invoice A7 paid?');
    // ...but the conversation kept is whole.
    expect(JSON.stringify(await run.transcript())).toContain('transfer_to_billing');
    // Back in triage, the model saw billing's work.
    expect(JSON.stringify(t.server.requests('triage-model')[1]!.body.messages)).toContain('invoice A7: 42 EUR, paid');
  });

  it('a handoff input is checked against its schema, and onHandoff can refuse with a message to the model', async () => {
    t.server.reset();
    t.server.script('triage-model', [
      { toolCalls: [{ id: 'h1', name: 'transfer_to_refunds', arguments: { reason: 'broken' } }] },
      { toolCalls: [{ id: 'h2', name: 'transfer_to_refunds', arguments: { reason: 'broken', priority: 'low' } }] },
      { toolCalls: [{ id: 'h3', name: 'transfer_to_refunds', arguments: { reason: 'broken twice', priority: 'high' } }] },
    ]);
    t.server.script('refunds-model', [{ text: 'Refund issued.' }]);
    const run = await t.keel.client.start('triage', 'My kettle broke.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'Refund issued.', agent: 'refunds' });
    const requests = t.server.requests('triage-model');
    expect(JSON.stringify(requests[1]!.body.messages)).toMatch(/refused: its input does not match the schema: priority/);
    expect(JSON.stringify(requests[2]!.body.messages)).toContain('Refunds only takes high-priority cases');
    // The transcript filter: refunds saw the earlier conversation as one user message.
    const [first] = t.server.requests('refunds-model');
    const messages = first!.body.messages.filter((m: { role: string }) => m.role !== 'system');
    expect(messages).toHaveLength(1);
    expect(messages[0].content).toMatch(/\[The conversation so far, handed to you\]\nuser: My kettle broke\./);
    expect(ofType(await run.events(), 'handoff')).toEqual([expect.objectContaining({ from: 'triage', to: 'refunds', input: expect.stringContaining('high') })]);
  });

  it('only the first handoff call of a turn hands off; maxHandoffs refuses more', async () => {
    t.server.reset();
    t.server.script('triage-model', [
      {
        toolCalls: [
          { id: 'h1', name: 'transfer_to_billing', arguments: {} },
          { id: 'h2', name: 'transfer_to_refunds', arguments: { reason: 'x', priority: 'high' } },
        ],
      },
      { toolCalls: [{ id: 'h4', name: 'transfer_to_billing', arguments: {} }] },
      { text: 'I will answer myself.' },
    ]);
    t.server.script('billing-model', [{ toolCalls: [{ id: 'h3', name: 'transfer_to_triage', arguments: {} }] }]);
    const run = await t.keel.client.start('triage', 'Help.');
    const result = await run.result();
    expect(result).toMatchObject({ status: 'completed', agent: 'triage', output: 'I will answer myself.' });
    const transcript = JSON.stringify(await run.transcript());
    expect(transcript).toContain('only the first handoff of a turn hands off');
    // triage → billing → triage, then triage's third is past its limit of 2.
    const handoffs = ofType(await run.events(), 'handoff');
    expect(handoffs.map((h) => h.to)).toEqual(['billing', 'triage']);
    expect(transcript).toContain('the run has handed off 2 times, its limit (maxHandoffs 2)');
  });
});
