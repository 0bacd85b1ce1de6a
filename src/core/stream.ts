/**
 * Live streaming: what a run publishes to the clients that watch it, through Temporal's own
 * `@temporalio/workflow-streams` (one stream per workflow, read by long-poll Updates), and how a
 * client puts the text of a turn together. Pure: the workflow, the model activity and the client
 * all import it.
 *
 * Every delta carries its turn and its attempt, because the stream does not deduplicate across
 * activity retries: a retried model turn publishes `turn.reset` first, and a client drops what
 * an earlier attempt of that turn said (`StreamText`), so the text of a failed attempt is never
 * glued to the next.
 */
import type { RunEvent } from './run.js';

/** The stream's topics: the model activity's deltas, and the run's events (with the end). */
export const STREAM_TOPICS = { delta: 'delta', event: 'event' } as const;

/** Text the model produced, as it arrives (several tokens, batched). */
export interface TextDelta {
  type: 'text.delta';
  turn: number;
  attempt: number;
  text: string;
}

/** A tool call the model is writing: its name once known, then pieces of its arguments (JSON text). */
export interface ToolCallDelta {
  type: 'tool_call.delta';
  turn: number;
  attempt: number;
  /** The call's position in the turn: pieces with the same index belong to one call. */
  index: number;
  callId?: string;
  tool?: string;
  arguments: string;
}

/** Attempt `attempt` of `turn` starts again from nothing: what earlier attempts said of the turn is void. */
export interface TurnReset {
  type: 'turn.reset';
  turn: number;
  attempt: number;
}

/** The last thing a run's stream says: nothing follows, and a subscription ends here. */
export interface StreamEnd {
  type: 'stream.end';
  /** The run's final status (`completed`, `failed`, `cancelled`, ...). */
  status: string;
}

/** What the model activity publishes. */
export type StreamDelta = TextDelta | ToolCallDelta | TurnReset;

/** One item of a run's stream: a delta, a run event, or the end. */
export type StreamChunk = StreamDelta | RunEvent | StreamEnd;

/** A chunk as a subscriber receives it, with its offset: subscribe again from `offset + 1` to resume. */
export type StreamItem = StreamChunk & { offset: number };

/** How streaming is switched on for a run: `true`, or how long the model activity gathers deltas into one batch. */
export type StreamSetting = boolean | { batchMs?: number };

/**
 * The model activity sends a batch at most this often. Each batch is one signal (about 4 history
 * events with its workflow task) and one poll per subscriber: history grows with batches, not
 * tokens, and a token waits at most this long before it is sent.
 */
export const DEFAULT_STREAM_BATCH_MS = 100;

/** The model activity's part of the setting, in its input; absent when streaming is off. */
export interface StreamOptions {
  batchMs: number;
}

/** The setting as the model activity gets it, or undefined when streaming is off. */
export function streamOptions(setting: StreamSetting | undefined): StreamOptions | undefined {
  if (!setting) return undefined;
  return { batchMs: (typeof setting === 'object' && setting.batchMs) || DEFAULT_STREAM_BATCH_MS };
}

export function isDelta(chunk: StreamChunk): chunk is StreamDelta {
  return chunk.type === 'text.delta' || chunk.type === 'tool_call.delta' || chunk.type === 'turn.reset';
}

/**
 * The text of each turn as a client shows it, from the chunks in the order they came: a reset
 * (or a delta of a later attempt) starts the turn again; a delta of an attempt older than the
 * turn's latest (a lost worker's last batch, arriving late) is dropped.
 */
export class StreamText {
  private readonly turns = new Map<number, { attempt: number; text: string }>();

  /** Applies a chunk; returns true when it changed what the turn shows. */
  apply(chunk: StreamChunk): boolean {
    // A turn whose deltas a lagging reader never got: its end has the text (a preview past 2,000 characters).
    if (chunk.type === 'turn.finished' && !this.turns.get(chunk.turn)?.text && chunk.text) {
      this.turns.set(chunk.turn, { attempt: this.turns.get(chunk.turn)?.attempt ?? 0, text: chunk.text });
      return true;
    }
    if (chunk.type !== 'text.delta' && chunk.type !== 'turn.reset') return false;
    const current = this.turns.get(chunk.turn);
    if (current && chunk.attempt < current.attempt) return false;
    if (!current || chunk.attempt > current.attempt || chunk.type === 'turn.reset') {
      this.turns.set(chunk.turn, { attempt: chunk.attempt, text: chunk.type === 'text.delta' ? chunk.text : '' });
      return true;
    }
    current.text += chunk.text;
    return true;
  }

  /** The text of a turn so far. */
  text(turn: number): string {
    return this.turns.get(turn)?.text ?? '';
  }

  /** The attempt of a turn whose text is shown. */
  attempt(turn: number): number | undefined {
    return this.turns.get(turn)?.attempt;
  }
}
