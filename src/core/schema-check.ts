/**
 * Checks arguments against a tool's recorded JSON Schema, with zod's own reader of JSON Schema,
 * where the tool's zod schema is not at hand: in the workflow, when a person edits a call's
 * arguments, so a bad edit is refused before anything is written to history.
 */
import { z } from 'zod';
import type { JsonSchema } from './json-schema.js';

const readers = new Map<string, z.ZodType>();

/** What is wrong with `value` for `schema`, or undefined when nothing is. */
export function schemaProblem(schema: JsonSchema, value: unknown): string | undefined {
  const key = JSON.stringify(schema);
  let reader = readers.get(key);
  if (!reader) {
    reader = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    readers.set(key, reader);
  }
  const parsed = reader.safeParse(value);
  if (parsed.success) return undefined;
  return parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ');
}
