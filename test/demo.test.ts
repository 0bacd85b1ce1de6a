import { describe, expect, it } from 'vitest';
import { DEMO_PROMPT, demo } from '../examples/demo.js';
import { useKeel } from './support/keel.js';

describe('the demo agent (npm start)', () => {
  const t = useKeel([demo]);

  it('calls both tools for both cities in parallel and answers', async () => {
    const run = await t.keel.client.start('demo', DEMO_PROMPT);
    const result = await run.result();
    expect(result.status).toBe('completed');
    expect(result.agent).toBe('demo');
    expect(result.turns).toBe(2);
    expect(String(result.output)).toMatch(/Lisbon/);
    expect(String(result.output)).toMatch(/Tokyo/);

    const events = await run.events();
    const started = events.filter((e) => e.type === 'tool.started').map((e) => e.seq);
    const finished = events.filter((e) => e.type === 'tool.finished').map((e) => e.seq);
    expect(started).toHaveLength(4);
    // All four were scheduled together, in one workflow task, before any finished. (That they
    // run at the same time is measured inside the tools, in agent-loop.test.ts.)
    expect(Math.max(...started)).toBeLessThan(Math.min(...finished));
    expect(events.at(-1)).toMatchObject({ type: 'run.finished', status: 'completed' });
  });
});
