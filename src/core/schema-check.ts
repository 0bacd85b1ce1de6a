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

/** Fields of a value that an object of the schema does not take, by the object that has them. */
export interface UnknownFields {
  /** The object's path in the value (`''` for the top). */
  at: string;
  fields: string[];
  /** The fields that object takes. */
  takes: string[];
}

/**
 * The fields of `value` that the schema's objects do not name, where the schema says nothing of
 * others (`additionalProperties` absent, as zod writes a `z.object`, which strips them, or
 * `false`). Objects that allow others (`z.looseObject`, `.catchall`, `z.record`: an
 * `additionalProperties` schema) and what unions, references and patterns describe are left alone.
 */
export function unknownFields(schema: JsonSchema, value: unknown, at = ''): UnknownFields[] {
  const found: UnknownFields[] = [];
  const path = (key: string | number) => (at ? `${at}.${key}` : String(key));
  if (Array.isArray(value)) {
    const items = schema.items;
    if (schema.type === 'array' && isSchema(items)) value.forEach((item, i) => found.push(...unknownFields(items, item, path(i))));
    return found;
  }
  if (schema.type !== 'object' || !isSchema(schema.properties) || !isPlainObject(value)) return found;
  const properties = schema.properties as Record<string, unknown>;
  const closed = (schema.additionalProperties === undefined || schema.additionalProperties === false) && schema.patternProperties === undefined;
  const takes = Object.keys(properties);
  const extra = closed ? Object.keys(value).filter((key) => !Object.hasOwn(properties, key)) : [];
  if (extra.length > 0) found.push({ at, fields: extra, takes });
  for (const key of takes) {
    const property = properties[key];
    if (isSchema(property) && Object.hasOwn(value, key)) found.push(...unknownFields(property, value[key], path(key)));
  }
  return found;
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
