/**
 * A run's state: a JSON key-value map given at start, read and written by tools, hooks,
 * middleware and instruction functions, carried across continue-as-new, shared with handoff
 * targets and sub-agents. Pure: the workflow applies change sets with it, the activities give
 * their code a `StateView` over it, and static instructions are filled from it here.
 */
import type { JsonValue } from './json.js';
import { utf8Bytes } from './limits.js';

/** The values of a run's state, by key. Plain JSON. */
export type StateValues = Record<string, JsonValue>;

/** At most this much JSON in a run's state: it is carried across continue-as-new and handed to sub-agents. */
export const STATE_BYTES = 256 * 1024;

/**
 * What one activity wrote, collapsed per key (a key is in at most one of the two). Applied by the
 * workflow in the order the activities finished, as recorded in history.
 */
export interface StateChanges {
  set?: StateValues;
  delete?: string[];
}

/** The state as the `state` query answers it: its values and its version (one more with each change). */
export interface StateSnapshot {
  version: number;
  values: StateValues;
}

/**
 * Why `value` is not plain JSON (a Date, a Map, a class instance, a function, undefined, NaN,
 * a cycle), naming where; undefined when it is.
 */
export function jsonProblem(value: unknown, where: string, seen: unknown[] = []): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : `${where} is ${value}, which JSON cannot hold`;
  if (typeof value === 'undefined') return `${where} is undefined: delete the key instead, or store null`;
  if (typeof value === 'function') return `${where} is a function`;
  if (typeof value === 'bigint') return `${where} is a bigint: store it as a string`;
  if (typeof value === 'symbol') return `${where} is a symbol`;
  if (seen.includes(value)) return `${where} refers to itself (a cycle)`;
  if (value instanceof Date) return `${where} is a Date: store date.toISOString()`;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = jsonProblem(value[i], `${where}[${i}]`, [...seen, value]);
      if (problem) return problem;
    }
    return undefined;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) {
    const name = (value as { constructor?: { name?: string } }).constructor?.name ?? 'an object with a prototype';
    return `${where} is a ${name}, not a plain object: store its data as plain objects and arrays`;
  }
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    const problem = jsonProblem(v, `${where}.${key}`, [...seen, value]);
    if (problem) return problem;
  }
  return undefined;
}

/** The size of the values as JSON, in UTF-8 bytes. */
export function stateBytes(values: StateValues): number {
  return utf8Bytes(JSON.stringify(values));
}

/** The values after `changes`, and the keys they changed (a new object; `values` is left alone). */
export function applyChanges(values: StateValues, changes: StateChanges): { values: StateValues; keys: string[] } {
  const next = { ...values };
  const keys: string[] = [];
  for (const [key, value] of Object.entries(changes.set ?? {})) {
    next[key] = value;
    keys.push(key);
  }
  for (const key of changes.delete ?? []) {
    if (typeof key !== 'string' || !(key in next)) continue;
    delete next[key];
    keys.push(key);
  }
  return { values: next, keys };
}

/**
 * The changes that turn `before` into `after`: what a sub-agent's run did to the state it was
 * given, which its parent applies. Undefined when nothing changed.
 */
export function changesBetween(before: StateValues, after: StateValues): StateChanges | undefined {
  const set: StateValues = {};
  for (const [key, value] of Object.entries(after)) {
    if (!(key in before) || JSON.stringify(before[key]) !== JSON.stringify(value)) set[key] = value;
  }
  const deleted = Object.keys(before).filter((key) => !(key in after));
  if (Object.keys(set).length === 0 && deleted.length === 0) return undefined;
  return { ...(Object.keys(set).length > 0 && { set }), ...(deleted.length > 0 && { delete: deleted }) };
}

/** The run's state as a tool, hook, middleware or instruction function sees it. */
export interface StateAccess {
  /** The value of `key`, or undefined. */
  get<T extends JsonValue = JsonValue>(key: string): T | undefined;
  has(key: string): boolean;
  keys(): string[];
  /** All values, a copy. */
  all(): StateValues;
  /** Sets `key` to a plain JSON value (a copy is kept); anything else throws, saying what is wrong. */
  set(key: string, value: JsonValue): void;
  delete(key: string): void;
}

/**
 * A view of the state in one activity: reads see this activity's own writes; `changes()` is what
 * goes back to the workflow. `readOnly` views (instructions, evaluated when a run starts) refuse writes.
 */
export class StateView implements StateAccess {
  private readonly values: StateValues;
  private readonly written = new Map<string, JsonValue | undefined>();
  /** Whether anything read the state through this view (instructions that do are evaluated again when it changes). */
  read = false;

  constructor(
    values: StateValues,
    private readonly readOnly?: string,
  ) {
    this.values = { ...values };
  }

  get<T extends JsonValue = JsonValue>(key: string): T | undefined {
    this.read = true;
    const value = this.values[key];
    return value === undefined ? undefined : (structuredCopy(value) as T);
  }

  has(key: string): boolean {
    this.read = true;
    return key in this.values;
  }

  keys(): string[] {
    this.read = true;
    return Object.keys(this.values);
  }

  all(): StateValues {
    this.read = true;
    return structuredCopy(this.values) as StateValues;
  }

  set(key: string, value: JsonValue): void {
    this.writable(key);
    const problem = jsonProblem(value, `state "${key}"`);
    if (problem) throw new TypeError(`Cannot set ${problem}. A run's state holds plain JSON only.`);
    const copy = structuredCopy(value);
    const next = { ...this.values, [key]: copy };
    const bytes = stateBytes(next);
    if (bytes > STATE_BYTES) {
      throw new RangeError(`Cannot set state "${key}": the state would be ${bytes} bytes of JSON, over its limit of ${STATE_BYTES / 1024} KB. Keep references (IDs, paths) in the state, not data.`);
    }
    this.values[key] = copy;
    this.written.set(key, copy);
  }

  delete(key: string): void {
    this.writable(key);
    delete this.values[key];
    this.written.set(key, undefined);
  }

  /** What this view's writes change, collapsed per key; undefined when it wrote nothing. */
  changes(): StateChanges | undefined {
    if (this.written.size === 0) return undefined;
    const set: StateValues = {};
    const deleted: string[] = [];
    for (const [key, value] of this.written) {
      if (value === undefined) deleted.push(key);
      else set[key] = value;
    }
    return { ...(Object.keys(set).length > 0 && { set }), ...(deleted.length > 0 && { delete: deleted }) };
  }

  toJSON(): StateValues {
    return this.all();
  }

  private writable(key: string): void {
    if (this.readOnly) throw new TypeError(`Cannot write state "${key}" here: ${this.readOnly}`);
    if (typeof key !== 'string' || key === '') throw new TypeError(`A state key must be a non-empty string, got ${JSON.stringify(key)}.`);
  }
}

/** Why guardrails see the state read-only: they check, they do not act. */
export const GUARDRAILS_READ_ONLY = 'guardrails read the state; write it from a tool, hook, middleware or onTurnEnd.';

/** The same state, read-only: a write throws, saying why. */
export function readOnly(state: StateAccess, why: string): StateAccess {
  const refuse = (key: string): never => {
    throw new TypeError(`Cannot write state "${key}" here: ${why}`);
  };
  return {
    get: (key) => state.get(key),
    has: (key) => state.has(key),
    keys: () => state.keys(),
    all: () => state.all(),
    set: (key) => refuse(key),
    delete: (key) => refuse(key),
  };
}

/** Writes a change set (a hook's) through a view; what the view refuses is returned as an error, not thrown. */
export function writeThrough(view: StateAccess, changes: StateChanges | undefined): string | undefined {
  try {
    for (const [key, value] of Object.entries(changes?.set ?? {})) view.set(key, value);
    for (const key of changes?.delete ?? []) view.delete(key);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

function structuredCopy(value: JsonValue | StateValues): JsonValue {
  return JSON.parse(JSON.stringify(value)) as JsonValue;
}

// ---------------------------------------------------------------------------------------------
// Templates

/** `{name}` or `{name?}`: a name starts with a letter or "_"; other text in braces is left as it is. */
const PLACEHOLDER = /\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_.-]*)(\?)?\}/g;

/** A required placeholder whose key the state lacks. */
export class MissingStateKey extends Error {
  constructor(readonly key: string) {
    super(`the state has no "${key}"`);
  }
}

/**
 * Static instructions filled from the state: `{key}` becomes the value (a string as it is, any
 * other value as JSON), `{key?}` the value or nothing, `{{` and `}}` literal braces. Other text in
 * braces (JSON examples) is left alone. A required key the state lacks throws `MissingStateKey`.
 */
export function fillTemplate(text: string, values: StateValues): string {
  return text.replace(PLACEHOLDER, (match, key: string | undefined, optional: string | undefined) => {
    if (match === '{{') return '{';
    if (match === '}}') return '}';
    const value = values[key!];
    if (value === undefined) {
      if (optional) return '';
      throw new MissingStateKey(key!);
    }
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}
