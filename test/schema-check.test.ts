/** The workflow's reader of recorded JSON Schemas (src/core/schema-check.ts), against what zod writes. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { schemaProblem } from '../src/core/schema-check.js';
import type { JsonSchema } from '../src/core/json-schema.js';

const json = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input' }) as JsonSchema;

describe('schemaProblem', () => {
  const deploy = json(
    z.object({
      env: z.enum(['prod', 'staging']),
      version: z.string().min(2).optional(),
      replicas: z.number().int().min(1).max(10).optional(),
      owner: z.email().optional(),
      tags: z.array(z.string()).max(2).optional(),
      when: z.union([z.literal('now'), z.iso.datetime()]).optional(),
      note: z.string().nullable().optional(),
    }),
  );

  it('passes what the zod schema accepts', () => {
    expect(schemaProblem(deploy, { env: 'prod' })).toBeUndefined();
    expect(schemaProblem(deploy, { env: 'staging', version: 'v2', replicas: 3, owner: 'a@b.io', tags: ['x'], when: 'now', note: null })).toBeUndefined();
    expect(schemaProblem(deploy, { env: 'prod', when: '2026-01-01T00:00:00Z' })).toBeUndefined();
  });

  it('names each field that is wrong, by its path', () => {
    const problem = schemaProblem(deploy, { env: 'moon', replicas: 1.5, owner: 'nobody', tags: ['a', 'b', 'c'], when: 'later' });
    expect(problem).toMatch(/^env: Invalid option/);
    for (const field of ['replicas', 'owner', 'tags', 'when']) expect(problem).toContain(`${field}: `);
    expect(schemaProblem(deploy, {})).toMatch(/^env: /);
    expect(schemaProblem(deploy, 'prod')).toMatch(/^\(root\): Invalid input: expected object/);
  });

  it('follows $ref into $defs and refuses keys a strict object does not take', () => {
    const node: z.ZodType = z.lazy(() => z.strictObject({ name: z.string(), children: z.array(node).optional() }));
    const tree = json(z.object({ root: node }));
    expect(schemaProblem(tree, { root: { name: 'a', children: [{ name: 'b' }] } })).toBeUndefined();
    expect(schemaProblem(tree, { root: { name: 'a', children: [{ name: 1 }] } })).toMatch(/root\.children\.0\.name: /);
    expect(schemaProblem(tree, { root: { name: 'a', extra: true } })).toMatch(/root\.extra: Unrecognized key/);
  });
});
