/** No run fails because of a payload's size: results are bounded, with a marker the model reads. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/core/define.js';
import type { ToolResultMessage } from '../src/core/messages.js';
import { useKeel } from './support/keel.js';

const MB = 1024 * 1024;

const dump = defineTool({
  name: 'dump',
  description: 'Dump a big table.',
  input: z.object({}),
  execute: () => 'row;'.repeat((3 * MB) / 4),
});

const smallDump = defineTool({
  name: 'small_dump',
  description: 'Dump a table, at most 4 KB of it.',
  input: z.object({}),
  maxResultBytes: 4096,
  execute: () => ({ rows: Array.from({ length: 1000 }, (_, i) => `ré ${i}`) }),
});

const agents = [defineAgent({ name: 'dumper', instructions: 'Dump.', model: 'anthropic:limits', tools: [dump, smallDump] })];

const t = useKeel(agents);

describe('payload limits', () => {
  it('a 3 MB tool result reaches the model cut to 64 KB, with a marker; the event says its size', async () => {
    t.server.script('limits', [
      { toolCalls: [{ id: 'big', name: 'dump', arguments: {} }, { id: 'small', name: 'small_dump', arguments: {} }] },
      { text: 'The table is long.' },
    ]);
    const run = await t.keel.client.start('dumper', 'Dump it.');
    expect(await run.result()).toMatchObject({ status: 'completed', output: 'The table is long.' });

    const results = (await run.transcript()).filter((m): m is ToolResultMessage => m.role === 'tool');
    const [big, small] = results;
    expect(new TextEncoder().encode(big!.content).length).toBeLessThanOrEqual(64 * 1024);
    expect(big!.content).toMatch(/^(row;)+/);
    expect(big!.content).toMatch(/\[… dump result truncated by keel: 3,145,728 bytes, showing the first [\d,]+\]$/);
    expect(big!.truncatedFrom).toBe(3 * MB);
    expect(new TextEncoder().encode(small!.content).length).toBeLessThanOrEqual(4096);
    expect(small!.content).toMatch(/small_dump result truncated by keel/);

    // The model got the cut results, marker included.
    const seen = JSON.stringify(t.server.requests('limits')[1]!.body.messages);
    expect(seen).toContain('dump result truncated by keel: 3,145,728 bytes');

    const finished = (await run.events()).filter((e) => e.type === 'tool.finished');
    expect(finished.map((e) => 'truncatedFrom' in e && e.truncatedFrom)).toEqual([3 * MB, expect.any(Number)]);
    // Events hold previews: the transcript has the result.
    expect(finished.every((e) => 'result' in e && e.result.length <= 2_000)).toBe(true);
  });

  it('rejects a tool limit out of range at definition', () => {
    expect(() =>
      defineTool({ name: 'x', description: 'x', input: z.object({}), maxResultBytes: 10 * MB, execute: () => '' }),
    ).toThrow(/maxResultBytes must be a whole number from 1024 to 1048576/);
  });
});
