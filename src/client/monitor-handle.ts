/** A running monitor, from a client: its status, and the messages and commands it takes. */
import { WorkflowFailedError } from '@temporalio/client';
import type { MonitorResult, MonitorState } from '../core/monitor.js';
import type { StateValues } from '../core/state.js';
import type { Message } from '../core/messages.js';
import type { RunEvent } from '../core/run.js';
import { injectUpdate, monitorStatusQuery, pauseSignal, resumeSignal, stopSignal, wakeSignal } from '../workflows/api.js';
import { innermostError } from '../core/errors.js';
import { RunFailedError, type RunHandle } from './run-handle.js';
import type { StreamReadOptions } from './run-stream.js';
import type { StreamItem } from '../core/stream.js';

export class MonitorHandle {
  constructor(readonly run: RunHandle) {}

  get workflowId(): string {
    return this.run.workflowId;
  }

  get uiUrl(): string {
    return this.run.uiUrl;
  }

  /** The monitor's live stream (started with `options.stream`), across its turns and sleeps, until its end. */
  stream(options: StreamReadOptions = {}): AsyncGenerator<StreamItem> {
    return this.run.stream(options);
  }

  /** `{ phase, nextWakeAt, wakeReason, turns, usage, cost, lastTurn, inbox, budgets }`. */
  status(): Promise<MonitorState> {
    return this.run.workflow.query(monitorStatusQuery);
  }

  /** The monitor's state now (see RunHandle.state). */
  state(): Promise<StateValues> {
    return this.run.state();
  }

  /** Waits for the monitor's end: its stop reason, totals and report_done's detail. A failed monitor throws RunFailedError. */
  async result(): Promise<MonitorResult> {
    try {
      return (await this.run.workflow.result()) as MonitorResult;
    } catch (err) {
      if (err instanceof WorkflowFailedError) {
        const root = innermostError(err);
        const what = err.message.includes('cancel') ? 'was cancelled' : 'failed';
        throw new RunFailedError(this.workflowId, `Monitor ${this.workflowId} ${what}: ${root.message}`, (root as { type?: string }).type, {
          cause: err,
        });
      }
      throw err;
    }
  }

  /** Queues a message for the next turn (an `[Inbox]` block) and wakes a sleeping monitor; resolves once queued. */
  async inject(message: string): Promise<{ queued: number }> {
    return this.run.workflow.executeUpdate(injectUpdate, { args: [{ message }] });
  }

  wake(): Promise<void> {
    return this.run.workflow.signal(wakeSignal);
  }

  /** Takes effect at the next turn boundary; a sleeping monitor stays asleep past its wake time. */
  pause(): Promise<void> {
    return this.run.workflow.signal(pauseSignal);
  }

  resume(): Promise<void> {
    return this.run.workflow.signal(resumeSignal);
  }

  /** Cancels the current turn cleanly; the monitor ends `cancelled`. */
  stop(reason?: string): Promise<void> {
    return this.run.workflow.signal(stopSignal, reason);
  }

  events(options: { after?: number } = {}): Promise<RunEvent[]> {
    return this.run.events(options);
  }

  transcript(): Promise<Message[]> {
    return this.run.transcript();
  }

  follow(options: Parameters<RunHandle['follow']>[0] = {}): AsyncGenerator<RunEvent> {
    return this.run.follow(options);
  }

  /** Runs the monitor's client tools here until it ends (see `RunHandle.serveClientTools`). */
  serveClientTools(...args: Parameters<RunHandle['serveClientTools']>): ReturnType<RunHandle['serveClientTools']> {
    return this.run.serveClientTools(...args);
  }
}
