/**
 * Bounds on what a run stores, so that no payload's size can fail it: Temporal refuses a
 * payload over 2 MB (and warns at 512 KB), and a query answer over the gRPC message limit.
 * Pure: used by the workflow and the activities alike.
 */

/** Default limit of one tool result, in UTF-8 bytes. */
export const DEFAULT_TOOL_RESULT_BYTES = 64 * 1024;
/** Limit of a model's answer text; far above any model's output limit. */
export const MODEL_ANSWER_BYTES = 512 * 1024;
/** Limit of one page of a query answer. */
export const QUERY_PAGE_BYTES = 1024 * 1024;
/** Limit of a run's `context`. */
export const CONTEXT_BYTES = 64 * 1024;
/** Long texts in events are previews of this many characters; the transcript has them whole. */
export const EVENT_TEXT_CHARS = 2_000;

/** Size of a string in UTF-8, without Node's Buffer (workflow code has none). */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      // A surrogate pair: one code point, four bytes.
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** The longest prefix of `text` that fits in `maxBytes` of UTF-8, never splitting a code point. */
function prefixWithin(text: string, maxBytes: number): string {
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length;
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    if (bytes + size > maxBytes) break;
    bytes += size;
    i += pair ? 2 : 1;
  }
  return text.slice(0, i);
}

export interface Bounded {
  text: string;
  /** Set when the text was cut: its size before, in bytes. */
  truncatedFrom?: number;
}

/**
 * `text` cut to at most `maxBytes` (marker included), with a marker that says how much was
 * cut, so the model knows it sees part of it.
 */
export function boundText(text: string, maxBytes: number, what = 'result'): Bounded {
  const size = utf8Bytes(text);
  if (size <= maxBytes) return { text };
  const marker = (kept: number) =>
    `\n[… ${what} truncated by keel: ${size.toLocaleString('en-US')} bytes, showing the first ${kept.toLocaleString('en-US')}]`;
  const room = Math.max(0, maxBytes - utf8Bytes(marker(maxBytes)));
  const kept = prefixWithin(text, room);
  return { text: kept + marker(utf8Bytes(kept)), truncatedFrom: size };
}

/** A short preview of a text for an event, with an ellipsis when cut. */
export function preview(text: string, max = EVENT_TEXT_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The longest prefix of `items` whose JSON fits in `maxBytes` (at least one item, so a page always moves on). */
export function pageWithin<T>(items: T[], maxBytes = QUERY_PAGE_BYTES): T[] {
  let bytes = 2;
  let n = 0;
  for (const item of items) {
    bytes += utf8Bytes(JSON.stringify(item) ?? 'null') + 1;
    if (n > 0 && bytes > maxBytes) break;
    n++;
  }
  return n === items.length ? items : items.slice(0, n);
}
