/**
 * How the model activity reads a run's conversation when the worker's cache lacks some of it (a
 * new worker after a crash or a deploy, an activity on another worker than the workflow's).
 *
 * The run's history holds every message (each once), and history is readable without any worker:
 * replaying an execution's history here, in this process, with a `conversation` sink that is
 * called during replay, gives the messages that execution appended and the ones it was handed on
 * (`carried`) by the execution before it. A query of the run is cheaper when the worker that
 * holds the run is alive (it answers from memory), but it needs that worker: the server sends a
 * query first to the sticky queue of the workflow's last worker, and when that worker has just
 * died the query fails after the sticky schedule-to-start timeout less a second (9 s with
 * Temporal's default of 10 s: "no poller seen for task queue recently"), without trying the
 * normal queue. So the query is asked only by a first attempt, under a short deadline; a retried
 * attempt (the one after a lost worker) and a failed query replay instead. Earlier executions,
 * which are closed, are always replayed here, never queried (a query of a closed execution makes
 * some worker replay it anyway).
 */
import type { Client } from '@temporalio/client';
import { Worker, type InjectedSinks, type ReplayWorkerOptions } from '@temporalio/worker';
import type { Message } from '../core/messages.js';
import type { StateSnapshot } from '../core/state.js';
import { transcriptQuery, type KeelSinks } from '../workflows/api.js';

export type WorkflowBundle = NonNullable<ReplayWorkerOptions['workflowBundle']>;

/** How long a query of a live execution may take before the history is replayed instead. */
const QUERY_DEADLINE_MS = 3_000;
/** Replays at once in one worker process: each is a replay worker of its own, and CPU-bound. */
const MAX_REPLAYS = 2;

/** What one execution holds of the conversation: its own messages and those it was handed on. */
export interface ExecutionMessages {
  messages: Map<number, Message>;
  /** The run's state at the end of the history replayed (only `replay` says), when it had any. */
  state?: StateSnapshot;
  /** The execution it continues, when it continued an earlier one. */
  previousRunId?: string;
}

export class ConversationReader {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly client: Client,
    /** The workflow code, bundled once per worker process (or how to get it, when first needed); without it, only queries. */
    private readonly code: WorkflowBundle | (() => Promise<WorkflowBundle>) | undefined,
  ) {}

  private get bundle(): boolean {
    return this.code !== undefined;
  }

  /**
   * Messages `wanted` (indices) of the run, reading from execution `runId` and, for what it does
   * not hold, the executions before it. A message found nowhere is absent from the answer.
   */
  async read(workflowId: string, runId: string, wanted: number[], options: { query: boolean }): Promise<Map<number, Message>> {
    const found = new Map<number, Message>();
    const lacking = () => wanted.filter((i) => !found.has(i));
    if (options.query || !this.bundle) {
      const answer = await this.query(workflowId, runId, lacking()).catch((err: unknown) => {
        if (!this.bundle) throw err;
        return undefined;
      });
      for (const [i, m] of answer?.messages ?? []) found.set(i, m);
      if (!this.bundle) return found;
    }
    // The current execution's history also holds what it was handed on; earlier ones, the rest.
    let execution: string | undefined = runId;
    while (execution && lacking().length > 0) {
      const held = await this.replay(workflowId, execution);
      for (const i of lacking()) {
        const m = held.messages.get(i);
        if (m) found.set(i, m);
      }
      execution = held.previousRunId;
    }
    return found;
  }

  /** The messages of one execution, from its history replayed here: no worker needed. */
  async replay(workflowId: string, runId: string): Promise<ExecutionMessages> {
    if (!this.code) throw new Error('No workflow code to replay with.');
    const workflowBundle = typeof this.code === 'function' ? await this.code() : this.code;
    await this.slot();
    try {
      const history = await this.client.workflow.getHandle(workflowId, runId).fetchHistory();
      const own: (Message | undefined)[] = [];
      const handed = new Map<number, Message>();
      let state: StateSnapshot | undefined;
      const sinks: InjectedSinks<KeelSinks> = {
        conversation: {
          append: {
            fn: (_info, start, messages) => {
              own.length = Math.max(start, 0);
              messages.forEach((m, i) => (own[start + i] = m));
            },
            callDuringReplay: true,
          },
          carried: {
            fn: (_info, segments) => {
              for (const s of segments) s.messages.forEach((m: Message, i: number) => handed.set(s.start + i, m));
            },
            callDuringReplay: true,
          },
          continued: { fn: () => undefined, callDuringReplay: false },
        },
        state: {
          set: {
            fn: (_info, version, values) => {
              if (!state || version >= state.version) state = { version, values };
            },
            callDuringReplay: true,
          },
        },
      };
      await Worker.runReplayHistory({ workflowBundle, sinks, replayName: `conversation of ${workflowId}` }, history, workflowId);
      const messages = new Map(handed);
      own.forEach((m, i) => m && messages.set(i, m));
      const previousRunId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
      return { messages, ...(previousRunId && { previousRunId }), ...(state && { state }) };
    } finally {
      this.release();
    }
  }

  /** Messages of the live execution `runId` by its transcript query, in pages. */
  private async query(workflowId: string, runId: string, wanted: number[]): Promise<ExecutionMessages> {
    const messages = new Map<number, Message>();
    if (wanted.length === 0) return { messages };
    const handle = this.client.workflow.getHandle(workflowId, runId);
    const to = Math.max(...wanted) + 1;
    let from = Math.min(...wanted);
    return this.client.withDeadline(Date.now() + QUERY_DEADLINE_MS, async () => {
      let previousRunId: string | undefined;
      for (;;) {
        const page = await handle.query(transcriptQuery, { from, to });
        previousRunId = page.previousRunId;
        page.messages.forEach((m, i) => messages.set(page.from + i, m));
        const next = page.from + page.messages.length;
        if (next >= Math.min(to, page.total) || page.messages.length === 0) break;
        from = next;
      }
      return { messages, ...(previousRunId && { previousRunId }) };
    });
  }

  private async slot(): Promise<void> {
    if (this.running < MAX_REPLAYS) {
      this.running++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}
