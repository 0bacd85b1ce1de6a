/** The agent of the worker-crash test, shared by the worker process that is killed and the one that takes over. */
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { defineAgent, defineTool } from '../../src/core/define.js';
import type { ModelServer, Responder } from './model-server.js';

export const CRASH_MODEL = 'crash-model';

const slowStep = defineTool({
  name: 'slow_step',
  description: 'A step that takes a while.',
  input: z.object({ n: z.number().int() }),
  // Far longer than the test: the crashed attempt is noticed by its missed heartbeats, not by this.
  timeout: '10 minutes',
  heartbeatTimeout: '2s',
  execute: async ({ n }, ctx) => {
    process.stdout.write(`tool running ${ctx.callId}\n`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // The step's effect, where the test can count it; then a moment before the result is reported.
    if (process.env.KEEL_EFFECTS_FILE) appendFileSync(process.env.KEEL_EFFECTS_FILE, `${ctx.workflowId} ${ctx.callId}\n`);
    process.stdout.write(`tool effect done ${ctx.callId}\n`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    return `step ${n} done`;
  },
});

export const crashAgent = defineAgent({
  name: 'crash-test',
  instructions: 'Do two steps, then say so.',
  model: `openai:${CRASH_MODEL}`,
  tools: [slowStep],
  modelSettings: { retry: { initialInterval: '100ms' } },
});

/** Stateless, so a retried or replayed turn gets the same reply as the first time. */
export const crashResponder: Responder = (request) => {
  const steps = (request.body.messages as { role: string }[]).filter((m) => m.role === 'tool').length;
  if (steps < 2) return { toolCalls: [{ id: `step-${steps + 1}`, name: 'slow_step', arguments: { n: steps + 1 } }] };
  return { text: `done after ${steps} steps` };
};

export function scriptCrashModel(server: ModelServer): void {
  server.script(CRASH_MODEL, crashResponder);
}
