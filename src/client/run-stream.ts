/**
 * Reading a run's live stream from a client: any workflow of keel's that streams (a run, a
 * monitor, a session, a sub-agent's run) answers the same way, so this takes a workflow ID, and
 * every handle's `stream()` is this function.
 *
 * It subscribes through `@temporalio/workflow-streams` (a long-poll Update per batch, following
 * continue-as-new) and ends on the `stream.end` terminator the run publishes at its real end. A
 * workflow that closed without the subscriber getting it (terminated, or closed while the
 * subscriber was between two polls) is read by query for the events it missed, then ended.
 */
import { Client, WorkflowNotFoundError, WorkflowUpdateFailedError, type WorkflowClient, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { innermostError } from '../core/errors.js';
import type { RunEvent } from '../core/run.js';
import { STREAM_TOPICS, isDelta, type StreamChunk, type StreamItem } from '../core/stream.js';
import { readEvents } from './run-chain.js';

export interface StreamReadOptions {
  /**
   * Read from this offset: 0 (the default) is the start of what the run still holds (the turn
   * in progress and the last settled one); a reconnecting client passes its last item's
   * `offset + 1` and gets exactly what it missed, while the run holds it.
   */
  from?: number;
  /** Also the model's deltas (default), or the run's events only. */
  deltas?: boolean;
  /** Stops reading (the iterator returns). */
  signal?: AbortSignal;
}

/** The run was not started with streaming on: it has no stream to read. */
export class RunNotStreamingError extends Error {
  constructor(
    readonly workflowId: string,
    options?: { cause?: unknown },
  ) {
    super(
      `Run ${workflowId} has no live stream: it was not started with streaming on. Start it with ` +
        '{ stream: true } (keel run streams unless --no-stream), or follow its events with follow().',
      options,
    );
    this.name = 'RunNotStreamingError';
  }
}

/**
 * Between two polls a subscriber waits this long. Not the library's 100 ms: the model activity
 * batches already, and a subscriber that is always polling is there when the run ends.
 */
const POLL_COOLDOWN = '10 milliseconds';
/** A run whose execution spent its poll budget continues as new soon: poll again after this. */
const BUDGET_RETRY_MS = 1_000;
/** The failure type of live-stream.ts's refusal past the poll budget. */
const BUDGET_SPENT = 'KeelStreamBudgetSpent';

/**
 * The chunks of a workflow's stream, in order, until its end. Readers of one run in one process
 * share one subscription (one poll in flight, one Update per batch, however many readers): an
 * execution accepts 2,000 Updates and 10 in flight. A reader that starts after the shared
 * subscription began gets what it holds from the reader's offset on, then what comes.
 */
export function readStream(client: Client | WorkflowClient, workflowId: string, options: StreamReadOptions = {}): AsyncGenerator<StreamItem> {
  const key = `${options.deltas === false ? 'events' : 'all'}:${workflowId}`;
  let hubs = HUBS.get(client);
  if (!hubs) HUBS.set(client, (hubs = new Map()));
  let hub = hubs.get(key);
  const from = options.from ?? 0;
  if (!hub || !hub.covers(from)) {
    // A hub that cannot serve this offset keeps its readers; this one starts another.
    hub = new StreamHub(from, (signal) => subscribe(client, workflowId, { ...options, signal }), () => {
      if (hubs.get(key) === hub) hubs.delete(key);
    });
    hubs.set(key, hub);
  }
  return hub.reader(from, options.signal);
}

const HUBS = new WeakMap<object, Map<string, StreamHub>>();
/** At most this many items are kept for readers that join a shared subscription late. */
const HUB_ITEMS = 10_000;

/** One subscription, fanned out to its readers; it stops when the last reader leaves. */
class StreamHub {
  private items: StreamItem[] = [];
  /** The absolute index of `items[0]`: a long stream keeps only its last HUB_ITEMS. */
  private base = 0;
  private ended = false;
  private failure: unknown;
  private readers = 0;
  private wake: (() => void)[] = [];
  private readonly upstream = new AbortController();
  private dropped = false;

  constructor(
    private from: number,
    source: (signal: AbortSignal) => AsyncGenerator<StreamItem>,
    private readonly done: () => void,
  ) {
    void (async () => {
      try {
        for await (const item of source(this.upstream.signal)) {
          this.items.push(item);
          if (this.items.length > HUB_ITEMS) {
            const drop = this.items.length - HUB_ITEMS / 2;
            this.items = this.items.slice(drop);
            this.base += drop;
            this.from = this.items[0]!.offset;
            this.dropped = true;
          }
          this.notify();
        }
      } catch (err) {
        this.failure = err;
      } finally {
        this.ended = true;
        this.done();
        this.notify();
      }
    })();
  }

  /** Whether a reader from this offset gets everything from the hub: it started there or before, and is still going. */
  covers(from: number): boolean {
    if (this.ended) return false;
    if (from === 0) return this.from === 0 && !this.dropped;
    return from >= this.from;
  }

  private notify(): void {
    for (const wake of this.wake.splice(0)) wake();
  }

  async *reader(from: number, signal: AbortSignal | undefined): AsyncGenerator<StreamItem> {
    this.readers++;
    const aborted = abortion(signal);
    const at = from === 0 ? 0 : this.items.findIndex((item) => item.offset >= from);
    // An absolute index: the hub may drop old items meanwhile (a reader that far behind skips them).
    let i = this.base + (at < 0 ? this.items.length : at);
    try {
      for (;;) {
        while (i - this.base < this.items.length) {
          i = Math.max(i, this.base);
          const item = this.items[i++ - this.base]!;
          if (from !== 0 && item.offset < from) continue;
          yield item;
          if (item.type === 'stream.end') return;
        }
        if (this.ended) {
          if (this.failure !== undefined) throw this.failure;
          return;
        }
        const woke = new Promise<void>((resolve) => this.wake.push(resolve));
        if ((await Promise.race([woke, aborted.promise])) === ABORTED) return;
      }
    } finally {
      aborted.dispose();
      if (--this.readers === 0 && !this.ended) {
        this.upstream.abort();
        this.done();
      }
    }
  }
}

/** One subscription of the stream, through the library. */
async function* subscribe(client: Client | WorkflowClient, workflowId: string, options: StreamReadOptions = {}): AsyncGenerator<StreamItem> {
  const topics = options.deltas === false ? [STREAM_TOPICS.event] : [STREAM_TOPICS.delta, STREAM_TOPICS.event];
  const full = asClient(client);
  const aborted = abortion(options.signal);
  let from = options.from ?? 0;
  let lastSeq: number | undefined;
  let lastOffset = from - 1;
  try {
    for (;;) {
      const items = followingChain(WorkflowStreamClient.create(full, workflowId), full, workflowId).subscribe<StreamChunk>(topics, from, { resultType: true, pollCooldown: POLL_COOLDOWN });
      try {
        for (;;) {
          const next = await Promise.race([items.next(), aborted.promise]);
          if (next === ABORTED) return;
          if (next.done) break;
          const item = { ...next.value.data, offset: next.value.offset } as StreamItem;
          if (!isDelta(item) && item.type !== 'stream.end') {
            // A gap: the run truncated what this subscriber had not read yet (it lagged a turn
            // or more behind); the events are read by query, the text is in their turn.finished.
            if (lastSeq !== undefined && item.seq > lastSeq + 1) {
              for (const event of await readEvents(full.workflow, workflowId, undefined, lastSeq)) {
                if (event.seq >= item.seq) break;
                yield { ...event, offset: lastOffset };
              }
            }
            lastSeq = item.seq;
          }
          lastOffset = item.offset;
          yield item;
          if (item.type === 'stream.end') return;
        }
      } catch (err) {
        const root = innermostError(err);
        if (err instanceof WorkflowUpdateFailedError && /No registered handler for update/.test(root.message)) {
          throw new RunNotStreamingError(workflowId, { cause: err });
        }
        // The workflow closed (the library gives up on the chain's last execution this way).
        if (err instanceof WorkflowNotFoundError && !(await isRunning(full, workflowId))) break;
        if (!(root instanceof ApplicationFailure && root.type === BUDGET_SPENT)) throw err;
        from = lastOffset + 1;
        await Promise.race([new Promise((resolve) => setTimeout(resolve, BUDGET_RETRY_MS)), aborted.promise]);
        continue;
      } finally {
        // A poll may be parked in the run; leave it (it answers when the run publishes or ends).
        void items.return(undefined).catch(() => undefined);
      }
      // The workflow closed without the terminator reaching this subscriber.
      yield* missedEnd(full, workflowId, lastSeq, lastOffset);
      return;
    }
  } finally {
    aborted.dispose();
  }
}

/** The events a subscriber missed at the end, read by query, then the end. */
async function* missedEnd(client: Client, workflowId: string, lastSeq: number | undefined, offset: number): AsyncGenerator<StreamItem> {
  let events: RunEvent[];
  try {
    events = await readEvents(client.workflow, workflowId, undefined, lastSeq ?? 0);
  } catch (err) {
    if (/did not register a handler|QueryNotRegistered|Query handler.*not found|Unknown query/i.test(innermostError(err).message)) return;
    throw err;
  }
  if (lastSeq === undefined && !(await streams(client, workflowId))) throw new RunNotStreamingError(workflowId);
  let status: string | undefined;
  for (const event of events) {
    if (event.type === 'run.finished') status = event.status;
    yield { ...event, offset };
  }
  const described = await client.workflow.getHandle(workflowId).describe();
  yield { type: 'stream.end', status: status ?? described.status.name.toLowerCase(), offset };
}

/**
 * The library follows continue-as-new by describing the execution its last poll reached; when the
 * chain's last execution closes before a poll reached it, that one reads CONTINUED_AS_NEW for
 * ever and the library polls the closed run again at once, without end. Here the chain's latest
 * execution decides: a newer one that runs is followed; else the subscription ends.
 */
function followingChain(stream: WorkflowStreamClient, client: Client, workflowId: string): WorkflowStreamClient {
  const internals = stream as unknown as { polledRunId?: string; handle: WorkflowHandle; followContinueAsNew(): Promise<boolean> };
  internals.followContinueAsNew = async () => {
    try {
      const latest = await client.workflow.getHandle(workflowId).describe();
      if (latest.status.name !== 'RUNNING' || latest.runId === internals.polledRunId) return false;
      internals.handle = client.workflow.getHandle(workflowId);
      return true;
    } catch {
      return false;
    }
  };
  return stream;
}

async function isRunning(client: Client, workflowId: string): Promise<boolean> {
  try {
    return (await client.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';
  } catch {
    return false;
  }
}

/** Whether the workflow has a stream (it answers the stream's offset query). */
async function streams(client: Client, workflowId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowId).query<number>('__temporal_workflow_stream_offset');
    return true;
  } catch {
    return false;
  }
}

/** The library follows continue-as-new with a whole Client; a handle has its WorkflowClient (same connection, no new one). */
function asClient(client: Client | WorkflowClient): Client {
  if (client instanceof Client) return client;
  return new Client({ connection: client.connection, namespace: client.options.namespace, dataConverter: client.options.dataConverter });
}

const ABORTED = Symbol('aborted');

function abortion(signal: AbortSignal | undefined): { promise: Promise<typeof ABORTED>; dispose(): void } {
  if (!signal) return { promise: new Promise(() => undefined), dispose: () => undefined };
  let listener: (() => void) | undefined;
  const promise = new Promise<typeof ABORTED>((resolve) => {
    listener = () => resolve(ABORTED);
    if (signal.aborted) resolve(ABORTED);
    else signal.addEventListener('abort', listener, { once: true });
  });
  return { promise, dispose: () => listener && signal.removeEventListener('abort', listener) };
}
