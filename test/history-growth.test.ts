/**
 * History must grow with the conversation, not with its square: each message is stored once.
 * Model activities get a message count, not the messages (they read them from the worker).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/core/define.js';
import { activityEvents, historyBytes, historyOf, type History } from './support/history.js';
import { useKeel } from './support/keel.js';

const TURNS = 60;
const PROMPT = 'Count to sixty, one tool call a turn. '.repeat(20);

const count = defineTool({
  name: 'count',
  description: 'Say a number.',
  input: z.object({ n: z.number() }),
  readOnly: true,
  execute: ({ n }) => `number ${n} `.repeat(10),
});

const counter = defineAgent({ name: 'counter', instructions: 'Count.', model: 'openai:growth', tools: [count], maxTurns: TURNS + 5 });

/** Encoded bytes of the events of each turn (from one model activity's scheduling to the next). */
function bytesPerTurn(history: History): number[] {
  const turns: number[] = [];
  for (const event of history.events ?? []) {
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'modelTurn') turns.push(0);
    if (turns.length > 0) turns[turns.length - 1]! += historyBytes({ events: [event] });
  }
  return turns;
}

const agents = [counter];

const t = useKeel(agents);

describe('history growth', () => {
  it(`a ${TURNS}-turn run stores each message once`, async () => {
    t.server.script('growth', (_request, index) =>
      index < TURNS - 1
        ? { text: `turn ${index + 1}`, toolCalls: [{ id: `n${index}`, name: 'count', arguments: { n: index + 1 } }] }
        : { text: 'Done counting.' },
    );
    const run = await t.keel.client.start('counter', PROMPT);
    expect(await run.result()).toMatchObject({ status: 'completed', turns: TURNS });

    const history = await historyOf(run);
    const models = activityEvents(history).filter((a) => a.type === 'modelTurn');
    expect(models).toHaveLength(TURNS);
    // Each model turn's input is a reference to the conversation, of constant size.
    for (const [i, m] of models.entries()) {
      expect(m.input).toEqual([{ agent: 'counter', turn: i + 1, messageCount: 1 + 2 * i, spec: expect.stringMatching(/^[0-9a-f]{16}$/) }]);
      expect(m.inputBytes).toBeLessThan(100);
    }
    // And the model still saw the whole conversation each turn.
    expect(t.server.requests('growth').at(-1)!.body.messages).toHaveLength(2 + 2 * (TURNS - 1));

    // The prompt is stored once (in the run's input), not once per turn.
    const raw = JSON.stringify(history);
    const prompts = raw.split('Count to sixty').length - 1;
    expect(prompts).toBeLessThanOrEqual(2);

    // Linear: the last ten turns cost what the first ten did, though the conversation is six times longer.
    const perTurn = bytesPerTurn(history);
    const early = perTurn.slice(0, 10).reduce((a, b) => a + b, 0);
    const late = perTurn.slice(TURNS - 10).reduce((a, b) => a + b, 0);
    expect(late / early).toBeLessThan(1.1);
  });
});
