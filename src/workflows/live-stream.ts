/**
 * Live streaming, as a feature of a run: the workflow's one `WorkflowStream`
 * (`@temporalio/workflow-streams`), built by the lifecycle when the run streams, so every kind of
 * run (plain, monitor, session, sub-agent, background agent, the agent a run was handed off to)
 * gets it by construction. The model activity publishes its deltas to it by signal; this feature
 * publishes the run's events and, at the run's real end, the `stream.end` terminator.
 *
 * Temporal's limits shape it:
 * - the log lives in the workflow (and is carried across continue-as-new): it is truncated once
 *   a turn settles, keeping the last settled turn for subscribers that lag a little;
 * - each poll is an Update and an execution accepts at most 2,000: polls are counted, the run
 *   is due to continue as new well before the limit, and past a hard margin a poll is refused
 *   (as the library refuses one while it drains: the subscriber waits and polls the next
 *   execution) rather than failing at Temporal's limit;
 * - parked polls are handlers in flight: before continue-as-new and at the end they are
 *   detached, or the run would wait for them forever.
 */
import {
  WorkflowStream,
  workflowStreamPollUpdate,
  type PollInput,
  type PollResult,
  type WorkflowStreamState,
} from '@temporalio/workflow-streams/workflow';
import { ApplicationFailure, CancellationScope, condition, setHandler, sleep } from '@temporalio/workflow';
import type { ContinuedState, RunEvent } from '../core/run.js';
import { STREAM_TOPICS, type StreamEnd, type StreamOptions } from '../core/stream.js';
import type { RunFeature } from './feature.js';
import type { Run } from './run-state.js';

/** Temporal accepts at most this many Updates in one execution. */
const UPDATES_PER_EXECUTION = 2_000;
/** Past this many polls the run continues as new at its next turn boundary. */
export const POLLS_BEFORE_NEW = 1_500;
/**
 * Past this many polls a poll is refused until the run has continued as new: the rest of the
 * budget is left to the run's own Updates (approvals, a session's messages).
 */
export const POLL_LIMIT = UPDATES_PER_EXECUTION - 200;
/** The failure type of a poll refused past POLL_LIMIT: the client polls again a little later. */
export const STREAM_BUDGET_SPENT = 'KeelStreamBudgetSpent';
/** How long an ending run waits for its terminator to reach a subscriber. */
const END_GRACE_MS = 2_000;
/** ... and how long after the first subscriber took it, for the others. */
const END_LINGER_MS = 300;
/** At most this much log (base64 characters) is carried across continue-as-new. */
const CARRY_LOG_CHARS = 256 * 1024;

/** What the library keeps private and this feature needs: the poll handler, the log's bounds. */
interface StreamInternals {
  onPoll(input: PollInput): Promise<PollResult>;
  draining: boolean;
  baseOffset: number;
  log: unknown[];
}

export class LiveStream implements RunFeature {
  readonly name = 'stream';
  private readonly stream: WorkflowStream;
  private readonly internals: StreamInternals;
  /** Polls accepted by this execution. */
  private pollCount = 0;
  /** The offset at which each turn still in the log started. */
  private readonly turnStarts = new Map<number, number>();
  private ended = false;
  /** Polls waiting in the run now. */
  private parked = 0;
  /** The terminator's offset, once published; whether a poll has carried it to a subscriber. */
  private endOffset: number | undefined;
  private endDelivered = false;
  /** A continued execution: its subscribers may be on their way from the previous one. */
  private readonly followed: boolean;

  constructor(
    carried: WorkflowStreamState | undefined,
    /** What the model activity is told: how it batches. */
    readonly options: StreamOptions,
  ) {
    this.stream = new WorkflowStream(carried);
    this.followed = carried !== undefined;
    this.internals = this.stream as unknown as StreamInternals;
    // The library's poll handler, counted, behind a validator that also keeps the budget.
    const internals = this.internals;
    setHandler(
      workflowStreamPollUpdate,
      async (input: PollInput) => {
        this.pollCount++;
        this.parked++;
        try {
          // Not cancelled with the run: a cancelled run's polls still answer (its end is news too).
          const result = await CancellationScope.nonCancellable(() => internals.onPoll.call(this.stream, input));
          if (this.endOffset !== undefined && result.next_offset > this.endOffset) this.endDelivered = true;
          return result;
        } finally {
          this.parked--;
        }
      },
      {
        validator: (input: PollInput) => {
          if (internals.draining) {
            throw ApplicationFailure.create({ type: 'StreamDraining', nonRetryable: true, message: 'The run is continuing as new (or ending): poll again, and the next execution answers.' });
          }
          if (this.pollCount >= POLL_LIMIT) {
            throw ApplicationFailure.create({
              type: STREAM_BUDGET_SPENT,
              nonRetryable: true,
              message: `This execution has answered ${this.pollCount} polls of the ${UPDATES_PER_EXECUTION} Updates Temporal allows it; the run continues as new after this turn: poll again then.`,
            });
          }
          if (typeof input?.from_offset !== 'number' || !Number.isInteger(input.from_offset) || input.from_offset < 0) {
            throw ApplicationFailure.create({ type: 'KeelInvalidInput', nonRetryable: true, message: 'from_offset must be a whole number, 0 or more (the offset to read the stream from).' });
          }
        },
      },
    );
  }

  attach(run: Run): void {
    run.onEvent = (event) => this.publishEvent(event);
  }

  /** The next offset: where the next published item will be. */
  get offset(): number {
    return this.internals.baseOffset + this.internals.log.length;
  }

  /** Polls this execution has answered: each is an Update. */
  get polls(): number {
    return this.pollCount;
  }

  /** The run should continue as new before its polls use up what Temporal allows an execution. */
  get dueForNew(): boolean {
    return this.pollCount >= POLLS_BEFORE_NEW;
  }

  private publishEvent(event: RunEvent): void {
    if (this.ended) return;
    if (event.type === 'turn.started') this.turnStarts.set(event.turn, this.offset);
    this.stream.topic<RunEvent>(STREAM_TOPICS.event).publish(event);
    // A settled turn's text is in the transcript: the turns before it leave the log.
    if (event.type === 'turn.finished') this.truncateBefore(event.turn);
  }

  private truncateBefore(turn: number): void {
    const start = this.turnStarts.get(turn);
    if (start === undefined) return;
    this.stream.truncate(start);
    for (const t of this.turnStarts.keys()) if (t < turn) this.turnStarts.delete(t);
  }

  /** Parked polls answer now and new ones are refused: the run is about to continue as new or to end. */
  detach(): void {
    this.stream.detachPollers();
  }

  /**
   * The run really ends: the terminator, then a short wait for a subscriber to take it (a poll
   * that arrives after the workflow closed cannot be answered: a subscriber between two polls
   * would lose the run's last events), then the parked polls let go.
   */
  async finish(status: string): Promise<void> {
    if (this.ended) return;
    this.endOffset = this.offset;
    this.stream.topic<StreamEnd>(STREAM_TOPICS.event).publish({ type: 'stream.end', status });
    this.ended = true;
    // Nobody subscribed to this chain of executions: nobody to wait for. Else the first subscriber
    // to take the end, then a moment for others between two polls (a poll after the close is lost).
    if (this.pollCount > 0 || this.followed) {
      // A cancelled run ends this way too: its subscribers learn it.
      await CancellationScope.nonCancellable(async () => {
        await condition(() => this.endDelivered, END_GRACE_MS);
        await sleep(END_LINGER_MS);
      });
    }
    this.detach();
  }

  /**
   * The stream's state for the next execution, with the log as it is (the turn in progress and
   * the last settled one), so a subscriber between two polls misses nothing; a log too large to
   * carry is left behind (its turns are settled: their text is in the transcript).
   */
  carry(): Partial<ContinuedState> {
    let state = this.stream.getState();
    if (state.log.reduce((n, item) => n + item.data.length, 0) > CARRY_LOG_CHARS) {
      this.stream.truncate(this.offset);
      state = this.stream.getState();
    }
    return { stream: state };
  }
}
