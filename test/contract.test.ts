/**
 * The contract files (contract/*.schema.json, docs/contract.md) are what `npm run contract`
 * makes from the zod schemas today: a schema changed without them, or they without it, fails here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contractFiles } from '../scripts/contract.js';
import { KEEL_STATUSES, RUN_EVENT_TYPES, runEventSchema } from '../src/core/contract.js';
import { ErrorTypes } from '../src/core/errors.js';

const ROOT = join(import.meta.dirname, '..');

describe('the contract files', () => {
  it('are what the schemas make (run `npm run contract` after changing them)', () => {
    for (const [path, text] of Object.entries(contractFiles())) {
      let committed = '';
      try {
        committed = readFileSync(join(ROOT, path), 'utf8');
      } catch {
        // reported by the comparison
      }
      expect(committed, `${path} differs from the schemas: run \`npm run contract\` and commit it`).toBe(text);
    }
  });

  it('list every status, event type and failure type', () => {
    const run = JSON.parse(readFileSync(join(ROOT, 'contract/agentRun.schema.json'), 'utf8'));
    expect(KEEL_STATUSES).toHaveLength(13);
    expect(run['x-keel'].searchAttributes.KeelStatus.values).toEqual(KEEL_STATUSES);
    expect(run['x-keel'].failures).toEqual(Object.values(ErrorTypes));
    expect(run['x-keel'].eventTypes).toEqual(RUN_EVENT_TYPES);
    expect(Object.keys(run['x-keel'].updates)).toEqual(['approve', 'clientToolResult']);
    const page = readFileSync(join(ROOT, 'docs/contract.md'), 'utf8');
    for (const type of [...RUN_EVENT_TYPES, ...Object.values(ErrorTypes)]) expect(page).toContain(`\`${type}\``);
  });

  it('describe the events a run logs, a forwarded sub-agent event included', () => {
    const started = { seq: 1, at: '2026-01-01T00:00:00Z', type: 'run.started', agent: 'a', model: 'openai:x', input: 'hi' };
    expect(runEventSchema.safeParse(started).success).toBe(true);
    expect(runEventSchema.safeParse({ seq: 2, at: started.at, type: 'subagent.event', callId: 'c', depth: 1, workflowId: 'w', event: started }).success).toBe(true);
    expect(runEventSchema.safeParse({ ...started, type: 'run.began' }).success).toBe(false);
  });
});

describe('the workflows', () => {
  it('check what clients send without loading zod (it costs every cached run ~0.5 MB)', () => {
    const seen = new Set<string>();
    const zod: string[] = [];
    const stack = [join(ROOT, 'src/workflows/index.ts')];
    while (stack.length > 0) {
      const file = stack.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      for (const m of readFileSync(file, 'utf8').matchAll(/^(?:import|export)\s+(?!type\b)([^;]*?)from\s+'([^']+)'/gms)) {
        if (/^\{?\s*type\s/.test(m[1]!) && !m[1]!.includes(',')) continue;
        const spec = m[2]!;
        if (spec === 'zod' || spec.startsWith('zod/')) zod.push(file);
        const target = join(dirname(file), spec).replace(/\.js$/, '.ts');
        if (spec.startsWith('.') && existsSync(target)) stack.push(target);
      }
    }
    expect(seen).toContain(join(ROOT, 'src/core/boundary.ts'));
    expect(zod).toEqual([]);
  });
});
