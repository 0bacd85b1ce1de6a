/**
 * Checks arguments against a tool's recorded JSON Schema where the tool's zod schema is not at
 * hand: in the workflow, when a person edits a call's arguments or a model calls a handoff with an
 * input, so a bad value is refused before anything is written to history. The tool activity
 * checks the arguments again with the tool's own zod schema before the tool runs.
 *
 * A reader of its own, not zod's (`z.fromJSONSchema`): workflow code is loaded once per run in the
 * worker's reusable V8 context, and zod's modules cost every cached run about 0.5 MB of heap (11x
 * a bare workflow; bench/sleeping-monitors). Zod cannot be shared between runs either: the SDK
 * freezes shared modules, and zod writes to its own (the `lastIndex` of its format regexes, its
 * locale, installed on the first schema). Nothing in this module's graph imports zod.
 *
 * It reads what `z.toJSONSchema` writes (draft 2020-12): type, enum, const, properties,
 * required, additionalProperties, items, prefixItems, the bounds of strings, numbers and arrays,
 * pattern, common formats, anyOf, oneOf, allOf, not, and $ref into $defs or definitions. Other
 * keywords are not checked.
 */
import type { JsonSchema } from './json-schema.js';

type Path = (string | number)[];
export interface SchemaIssue {
  path: Path;
  message: string;
}
type Issue = SchemaIssue;

/**
 * What is wrong with `value` for `schema`, issue by issue. A schema's own `x-message` (keel's
 * boundary schemas write one, src/core/schemas.ts) replaces the generic messages of the issues
 * found at its node, `{got}` standing for the value; `x-unknown` does for a field an object does
 * not take.
 */
export function schemaIssues(schema: JsonSchema, value: unknown): SchemaIssue[] {
  const issues: Issue[] = [];
  check(schema, value, [], schema, issues);
  return issues;
}

/** What is wrong with `value` for `schema`, or undefined when nothing is. */
export function schemaProblem(schema: JsonSchema, value: unknown): string | undefined {
  const issues: Issue[] = [];
  check(schema, value, [], schema, issues);
  if (issues.length === 0) return undefined;
  return issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ');
}

const FORMATS: Record<string, RegExp> = {
  email: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
  uuid: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
  'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  time: /^\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/,
  uri: /^[a-zA-Z][a-zA-Z\d+.-]*:\S*$/,
  ipv4: /^(\d{1,3}\.){3}\d{1,3}$/,
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const show = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : String(JSON.stringify(v)));

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function hasType(v: unknown, type: string): boolean {
  const actual = typeOf(v);
  return actual === type || (type === 'number' && actual === 'integer');
}

function equal(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function resolve(ref: string, root: JsonSchema): JsonSchema | undefined {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const part of ref.slice(1).split('/').filter(Boolean)) {
    if (!isObject(node)) return undefined;
    node = node[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return isObject(node) ? node : undefined;
}

function check(schema: unknown, value: unknown, path: Path, root: JsonSchema, issues: Issue[]): void {
  if (schema === true || schema === undefined) return;
  if (schema === false) {
    issues.push({ path, message: 'Invalid input: no value is allowed here' });
    return;
  }
  if (!isObject(schema)) return;
  const first = issues.length;
  checkNode(schema, value, path, root, issues);
  const own = schema['x-message'];
  if (typeof own !== 'string' || issues.length === first) return;
  // The node's own message says once what its generic ones would; deeper issues keep theirs.
  const added = issues.splice(first);
  const deeper = added.filter((i) => i.path.length > path.length);
  if (deeper.length < added.length) issues.push({ path, message: own.replace('{got}', show(value)) });
  issues.push(...deeper);
}

function checkNode(s: Record<string, unknown>, value: unknown, path: Path, root: JsonSchema, issues: Issue[]): void {
  const fail = (message: string) => issues.push({ path, message });

  if (typeof s.$ref === 'string') {
    const target = resolve(s.$ref, root);
    if (target) check(target, value, path, root, issues);
  }
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
    if (!types.some((t) => hasType(value, t))) {
      fail(`Invalid input: expected ${types.join(' | ')}, received ${typeOf(value)}`);
      return;
    }
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => equal(e, value))) {
    fail(`Invalid option: expected one of ${s.enum.map(show).join('|')}`);
  }
  if ('const' in s && !equal(s.const, value)) fail(`Invalid input: expected ${show(s.const)}`);

  if (typeof value === 'string') {
    if (typeof s.minLength === 'number' && [...value].length < s.minLength) fail(`Too small: expected string to have >=${s.minLength} characters`);
    if (typeof s.maxLength === 'number' && [...value].length > s.maxLength) fail(`Too big: expected string to have <=${s.maxLength} characters`);
    if (typeof s.pattern === 'string') {
      let re: RegExp | undefined;
      try {
        re = new RegExp(s.pattern, 'u');
      } catch {
        re = undefined;
      }
      if (re && !re.test(value)) fail(`Invalid string: must match pattern ${s.pattern}`);
    }
    const format = typeof s.format === 'string' ? FORMATS[s.format] : undefined;
    if (format && !format.test(value)) fail(`Invalid ${String(s.format)}`);
  }
  if (typeof value === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) fail(`Too small: expected number to be >=${s.minimum}`);
    if (typeof s.maximum === 'number' && value > s.maximum) fail(`Too big: expected number to be <=${s.maximum}`);
    if (typeof s.exclusiveMinimum === 'number' && value <= s.exclusiveMinimum) fail(`Too small: expected number to be >${s.exclusiveMinimum}`);
    if (typeof s.exclusiveMaximum === 'number' && value >= s.exclusiveMaximum) fail(`Too big: expected number to be <${s.exclusiveMaximum}`);
    if (typeof s.multipleOf === 'number' && s.multipleOf > 0) {
      const ratio = value / s.multipleOf;
      if (Math.abs(ratio - Math.round(ratio)) > 1e-9 * Math.max(1, Math.abs(ratio))) fail(`Invalid number: must be a multiple of ${s.multipleOf}`);
    }
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === 'number' && value.length < s.minItems) fail(`Too small: expected array to have >=${s.minItems} items`);
    if (typeof s.maxItems === 'number' && value.length > s.maxItems) fail(`Too big: expected array to have <=${s.maxItems} items`);
    const prefix = Array.isArray(s.prefixItems) ? (s.prefixItems as unknown[]) : [];
    value.forEach((item, i) => {
      if (i < prefix.length) check(prefix[i], item, [...path, i], root, issues);
      else if (s.items !== undefined) check(s.items, item, [...path, i], root, issues);
    });
  }
  if (isObject(value)) {
    const properties = isObject(s.properties) ? s.properties : {};
    for (const key of Array.isArray(s.required) ? (s.required as string[]) : []) {
      if (!(key in value) || value[key] === undefined) {
        const own = (properties[key] as Record<string, unknown> | undefined)?.['x-message'];
        issues.push({ path: [...path, key], message: typeof own === 'string' ? own.replace('{got}', 'nothing') : 'Invalid input: expected a value, received undefined' });
      }
    }
    for (const [key, v] of Object.entries(value)) {
      if (key in properties) check(properties[key], v, [...path, key], root, issues);
      else if (s.additionalProperties === false) {
        issues.push({ path: [...path, key], message: typeof s['x-unknown'] === 'string' ? s['x-unknown'] : `Unrecognized key: "${key}"` });
      }
      else if (s.additionalProperties !== undefined) check(s.additionalProperties, v, [...path, key], root, issues);
    }
  }
  if (Array.isArray(s.allOf)) for (const part of s.allOf) check(part, value, path, root, issues);
  const matches = (part: unknown) => {
    const found: Issue[] = [];
    check(part, value, path, root, found);
    return found;
  };
  for (const [key, exactlyOne] of [['anyOf', false], ['oneOf', true]] as const) {
    const parts = s[key];
    if (!Array.isArray(parts)) continue;
    const results = parts.map(matches);
    const passing = results.filter((r) => r.length === 0).length;
    if (passing === 0) {
      // One alternative alone: its own issues say more than "no alternative matched".
      if (results.length === 1) issues.push(...results[0]!);
      else fail('Invalid input: matches none of the allowed alternatives');
    } else if (exactlyOne && passing > 1) fail('Invalid input: matches more than one alternative');
  }
  if (s.not !== undefined && matches(s.not).length === 0) fail('Invalid input: matches a schema it must not');
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
