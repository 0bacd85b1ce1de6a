/**
 * The model activity's side of live streaming: the model's deltas, gathered into batches and
 * published to the run's stream by `WorkflowStreamClient.fromWithinActivity` (one signal a
 * batch). Consecutive text deltas of a batch become one chunk, and so do the pieces of one tool
 * call, so a batch costs one item however many tokens it holds: history grows with batches, not
 * tokens. The first delta of a batch waits at most `batchMs`.
 *
 * A retried attempt starts with `turn.reset`: the stream does not deduplicate across attempts
 * (each attempt is a new publisher), so clients learn here that the earlier attempt's text is void.
 */
import { Context } from '@temporalio/activity';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import type { ModelDelta } from '../core/model.js';
import { STREAM_TOPICS, type StreamDelta, type StreamOptions } from '../core/stream.js';

export class DeltaPublisher {
  private readonly client: WorkflowStreamClient;
  private pending: StreamDelta[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The batches sent, in order: a failed send is the activity's failure, not a silent loss. */
  private sending: Promise<void> = Promise.resolve();
  private failure: unknown;

  constructor(
    private readonly turn: number,
    private readonly attempt: number,
    private readonly options: StreamOptions,
  ) {
    // This class decides when a batch goes (send below); the library's own ticker only backs it up.
    this.client = WorkflowStreamClient.fromWithinActivity({ batchInterval: options.batchMs });
    if (attempt > 1) {
      this.pending.push({ type: 'turn.reset', turn, attempt });
      this.send();
    }
  }

  /** A delta from the provider. */
  add(delta: ModelDelta): void {
    const last = this.pending.at(-1);
    if (delta.kind === 'text') {
      if (delta.text === '') return;
      if (last?.type === 'text.delta') last.text += delta.text;
      else this.pending.push({ type: 'text.delta', turn: this.turn, attempt: this.attempt, text: delta.text });
    } else if (last?.type === 'tool_call.delta' && last.index === delta.index && (delta.name === undefined || last.tool === undefined)) {
      last.arguments += delta.arguments;
      if (delta.id !== undefined) last.callId = delta.id;
      if (delta.name !== undefined) last.tool = delta.name;
    } else {
      this.pending.push({
        type: 'tool_call.delta',
        turn: this.turn,
        attempt: this.attempt,
        index: delta.index,
        ...(delta.id !== undefined && { callId: delta.id }),
        ...(delta.name !== undefined && { tool: delta.name }),
        arguments: delta.arguments,
      });
    }
    this.timer ??= setTimeout(() => this.send(), this.options.batchMs);
  }

  /** Sends what is gathered as one batch (one signal). */
  private send(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0) return;
    const topic = this.client.topic<StreamDelta>(STREAM_TOPICS.delta);
    for (const chunk of this.pending.splice(0)) topic.publish(chunk);
    this.sending = this.sending
      .then(() => this.client.flush())
      .catch((err: unknown) => {
        this.failure ??= err;
      });
  }

  /**
   * Sends the rest and waits until every batch reached the workflow: the deltas of a turn are in
   * the run's stream before the turn's result is.
   */
  async close(): Promise<void> {
    this.send();
    await this.sending;
    await this.client[Symbol.asyncDispose]();
    if (this.failure !== undefined) throw this.failure;
  }

  /** The attempt failed: stop the timer, send nothing more (the next attempt resets the turn). */
  abandon(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = [];
    this.client[Symbol.asyncDispose]().catch(() => undefined);
  }
}

/** A publisher for this activity's attempt, when the run streams. */
export function deltaPublisher(turn: number, options: StreamOptions | undefined): DeltaPublisher | undefined {
  if (!options) return undefined;
  return new DeltaPublisher(turn, Context.current().info.attempt, options);
}
