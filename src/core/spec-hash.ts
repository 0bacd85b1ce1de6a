import type { AgentSpec } from './agent-spec.js';

/** JSON with object keys sorted, so equal specs give equal text whatever their key order. */
export function stableJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
}

/**
 * A short fingerprint of an agent spec (64-bit FNV-1a, 16 hex digits). The model activity gets
 * it instead of the spec: a worker whose agent has the same fingerprint builds the request from
 * its own code; any other fetches the spec the run recorded. Pure and deterministic: computed
 * in the workflow and in the worker alike.
 */
export function specHash(spec: AgentSpec): string {
  const text = stableJson(spec);
  // Two 32-bit halves, since 64-bit multiplication needs BigInt, which is slow for this.
  let h1 = 0x811c9dc5;
  let h2 = 0xcbf29ce4;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x0100019d) >>> 0;
  }
  return h1.toString(16).padStart(8, '0') + h2.toString(16).padStart(8, '0');
}
