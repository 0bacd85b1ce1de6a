/** Retry-After: when a provider asked keel to come back, from its response headers. */

/** What a provider said about when to come back. */
export interface RetryAfter {
  /** The wait it asked for, in milliseconds: always positive (never 0), not yet capped. */
  ms?: number;
  /** The headers it sent that keel could not use (zero, negative, unreadable, a past date). */
  ignored?: string;
}

/**
 * `retry-after-ms` (milliseconds), else `retry-after` (seconds or an HTTP date). A value that is
 * not a positive wait (0, negative, unreadable, a date in the past) is ignored: the retry policy
 * then decides, as if the provider had said nothing. How long a wait is honoured is decided
 * with the retry policy in the model activity.
 */
export function readRetryAfter(headers: { get(name: string): string | null } | undefined, now: number = Date.now()): RetryAfter {
  if (!headers || typeof headers.get !== 'function') return {};
  const ignored: string[] = [];
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const n = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)\s*$/.test(ms) ? Number.parseFloat(ms) : NaN;
    if (Number.isFinite(n) && n > 0) return { ms: Math.ceil(n) };
    ignored.push(`retry-after-ms: ${JSON.stringify(ms.slice(0, 40))}`);
  }
  const ra = headers.get('retry-after');
  if (ra !== null && ra.trim() !== '') {
    const trimmed = ra.trim();
    let wait = NaN;
    if (/^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(trimmed)) wait = Number.parseFloat(trimmed) * 1000;
    else if (/[a-z]/i.test(trimmed)) wait = Date.parse(trimmed) - now;
    if (Number.isFinite(wait) && wait > 0) return { ms: Math.ceil(wait), ...(ignored.length > 0 && { ignored: ignored.join(', ') }) };
    ignored.push(`Retry-After: ${JSON.stringify(ra.slice(0, 40))}`);
  }
  return ignored.length > 0 ? { ignored: ignored.join(', ') } : {};
}

/** The usable wait of `readRetryAfter`, in milliseconds. */
export function retryAfterMsFromHeaders(
  headers: { get(name: string): string | null } | undefined,
  now: number = Date.now(),
): number | undefined {
  return readRetryAfter(headers, now).ms;
}

