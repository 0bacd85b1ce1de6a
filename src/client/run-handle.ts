/**
 * A run's handle and the errors it raises: read a run, follow it, decide its calls. Apart from
 * `AgentClient` so that `MonitorHandle` (which wraps one) and `AgentClient` (which makes both)
 * do not import each other.
 */
import { WorkflowFailedError, WorkflowNotFoundError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import type { ApprovalDecision, ApprovalReceipt, PendingApproval } from '../core/approval.js';
import { PERMISSION_MODES, type PermissionMode } from '../core/permissions/index.js';
import type { Message } from '../core/messages.js';
import type { AgentRunResult, RunEvent, RunState } from '../core/run.js';
import type { ClientToolHandlers, ClientToolReceipt, ClientToolResult, PendingClientCall } from '../core/client-tools.js';
import { approveSignal, approveUpdate, clientToolCallsQuery, permissionModeSignal, stateQuery, statusQuery } from '../workflows/api.js';
import { sendClientToolResult, serveClientTools, type ServeClientToolsOptions, type ServedCall } from './client-tools.js';
import type { StateValues } from '../core/state.js';
import { innermostError } from '../core/errors.js';
import { readEvents, readMessages } from './run-chain.js';
import { readStream, type StreamReadOptions } from './run-stream.js';
import { isDelta, type StreamItem } from '../core/stream.js';
import { summarize, type RunSummary } from './run-summary.js';
import { readRunTree, type RunTree, type TreeOptions } from './tree.js';

/** A run that ended in failure, with the error that explains it. */
export class RunFailedError extends Error {
  constructor(
    readonly workflowId: string,
    message: string,
    readonly type: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'RunFailedError';
  }
}

export interface ApproveOptions {
  /** Edited arguments to run the call with. */
  arguments?: Record<string, unknown>;
  /** Allow calls like this one for the rest of the run. */
  remember?: boolean;
  reason?: string;
}

/** The run refused a decision (the call is not pending, or an edit fails the tool's schema). Nothing changed. */
export class ApprovalRejectedError extends Error {
  constructor(
    readonly workflowId: string,
    readonly callId: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ApprovalRejectedError';
  }
}

export class RunHandle<O = unknown> {
  constructor(
    readonly workflow: WorkflowHandle,
    private readonly uiBase: string,
    private readonly namespace: string,
  ) {}

  get workflowId(): string {
    return this.workflow.workflowId;
  }

  /** The run in the Temporal Web UI. */
  get uiUrl(): string {
    return `${this.uiBase}/namespaces/${encodeURIComponent(this.namespace)}/workflows/${encodeURIComponent(this.workflowId)}`;
  }

  /** Waits for the end of the run (across continue-as-new); a failed run throws RunFailedError. */
  async result(): Promise<AgentRunResult<O>> {
    try {
      return (await this.workflow.result()) as AgentRunResult<O>;
    } catch (err) {
      if (err instanceof WorkflowFailedError) {
        const root = innermostError(err);
        throw new RunFailedError(
          this.workflowId,
          `Run ${this.workflowId} ${err.message.includes('cancel') ? 'was cancelled' : 'failed'}: ${root.message}`,
          (root as { type?: string }).type,
          { cause: err },
        );
      }
      throw err;
    }
  }

  status(): Promise<RunState> {
    return this.workflow.query(statusQuery);
  }

  /** The run's state now: the values its tools, hooks and middleware have written (and those it started with). */
  async state(): Promise<StateValues> {
    return (await this.workflow.query(stateQuery)).values;
  }

  /** What the run does or waits for now, as the Temporal UI shows it ("turn 3 of at most 10: waiting for ..."). */
  async currentDetails(): Promise<string | undefined> {
    const metadata = await this.workflow.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    return metadata.currentDetails || undefined;
  }

  /** The whole conversation, across continue-as-new (read page by page). */
  transcript(): Promise<Message[]> {
    return readMessages(this.workflow.client, this.workflowId, undefined);
  }

  /** Events with `seq` greater than `after`, across continue-as-new. */
  events(options: { after?: number } = {}): Promise<RunEvent[]> {
    return readEvents(this.workflow.client, this.workflowId, undefined, options.after ?? 0);
  }

  /**
   * The run's live stream (a run started with streaming on): the model's text and tool calls as
   * they are produced, and the run's events, until its end. `for await (const chunk of
   * run.stream())`; `StreamText` puts a turn's text together (a retried turn's `turn.reset`
   * applied). Throws RunNotStreamingError for a run that does not stream.
   */
  stream(options: StreamReadOptions = {}): AsyncGenerator<StreamItem> {
    return readStream(this.workflow.client, this.workflowId, options);
  }

  /**
   * The run's events as they happen, ending after `run.finished` (or when the run closes).
   * A run that streams is read from its stream (each event as it is published); any other is
   * polled by the `events` query. `after` resumes from a known sequence number.
   */
  async *follow(options: { after?: number; intervalMs?: number; signal?: AbortSignal } = {}): AsyncGenerator<RunEvent> {
    const offset = await this.streamOffset();
    if (offset !== undefined) {
      yield* this.followStream(offset, options);
      return;
    }
    yield* this.followByQuery(options);
  }

  /** The stream's next offset (read from it to get what comes next), or undefined when the run has no stream (or cannot say yet). */
  async streamOffset(): Promise<number | undefined> {
    try {
      return await this.workflow.query<number>(STREAM_OFFSET_QUERY);
    } catch {
      return undefined;
    }
  }

  /**
   * Events from the stream, complete: what came before `offset` is read by query first, and a
   * gap (a subscriber that fell behind the log's truncation) is filled by query too.
   */
  private async *followStream(offset: number, options: { after?: number; signal?: AbortSignal }): AsyncGenerator<RunEvent> {
    let after = options.after ?? 0;
    const missed = async function* (this: RunHandle, upTo: number): AsyncGenerator<RunEvent> {
      for (const event of await this.events({ after })) {
        if (event.seq >= upTo) return;
        after = event.seq;
        yield event;
        if (event.type === 'run.finished') return;
      }
    };
    for await (const event of missed.call(this, Infinity)) {
      yield event;
      if (event.type === 'run.finished') return;
    }
    for await (const chunk of this.stream({ from: offset, deltas: false, ...(options.signal && { signal: options.signal }) })) {
      // The stream may end before the run did (a subscription cut between two executions): the rest by query.
      if (chunk.type === 'stream.end') break;
      if (isDelta(chunk) || chunk.seq <= after) continue;
      if (chunk.seq > after + 1) {
        for await (const event of missed.call(this, chunk.seq)) yield event;
      }
      const { offset: _offset, ...event } = chunk;
      after = event.seq;
      yield event as RunEvent;
      if (event.type === 'run.finished') return;
    }
    if (options.signal?.aborted) return;
    yield* this.followByQuery({ ...options, after });
  }

  private async *followByQuery(options: { after?: number; intervalMs?: number; signal?: AbortSignal }): AsyncGenerator<RunEvent> {
    let after = options.after ?? 0;
    const interval = options.intervalMs ?? 250;
    for (;;) {
      let events: RunEvent[];
      try {
        events = await this.events({ after });
      } catch (err) {
        // Before its first workflow task a run cannot answer queries yet.
        if (!(await this.isOpen())) return;
        if (!isNotReady(err)) throw err;
        events = [];
      }
      for (const event of events) {
        after = event.seq;
        yield event;
        if (event.type === 'run.finished') return;
      }
      if (options.signal?.aborted) return;
      if (events.length === 0 && !(await this.isOpen())) {
        // Closed without a run.finished event (terminated, timed out): say what there is.
        const last = await this.events({ after }).catch(() => []);
        yield* last;
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, interval));
    }
  }

  async isOpen(): Promise<boolean> {
    const description = await this.workflow.describe();
    return description.status.name === 'RUNNING';
  }

  /** Requests cancellation; the run ends with status `cancelled`. */
  async cancel(): Promise<void> {
    await this.workflow.cancel();
  }

  /** The calls waiting for a decision. */
  async pending(): Promise<PendingApproval[]> {
    const state = (await this.workflow.query(statusQuery)) as { pending?: PendingApproval[] };
    return state.pending ?? [];
  }

  /**
   * Allows a pending call, optionally with edited arguments (checked again: schema, policy,
   * guardrails) and remembered for the rest of the run. Sent as the `approve` Update, so an
   * unknown or already decided call, or an edit that fails the tool's schema, is refused here.
   */
  approve(callId: string, options: ApproveOptions = {}): Promise<ApprovalReceipt> {
    return this.decide({
      callId,
      decision: 'allow',
      ...(options.reason !== undefined && { reason: options.reason }),
      ...(options.arguments !== undefined && { arguments: options.arguments }),
      ...(options.remember && { remember: true }),
    });
  }

  /** Denies a pending call; the model reads the reason as the call's result. */
  deny(callId: string, reason?: string): Promise<ApprovalReceipt> {
    return this.decide({ callId, decision: 'deny', ...(reason !== undefined && { reason }) });
  }

  /** Sends a decision as the `approve` Update; a refused decision throws ApprovalRejectedError with the run's reason. */
  async decide(decision: ApprovalDecision): Promise<ApprovalReceipt> {
    try {
      return await this.workflow.executeUpdate(approveUpdate, { args: [decision] });
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        throw new ApprovalRejectedError(this.workflowId, decision.callId, innermostError(err).message, { cause: err });
      }
      throw err;
    }
  }

  /** The same decision as a plain Signal: fire and forget; a bad one is recorded as an `approval.rejected` event. */
  async signalDecision(decision: ApprovalDecision): Promise<void> {
    await this.workflow.signal(approveSignal, decision);
  }

  /** The client tools' calls waiting for a client, with their arguments. */
  clientToolCalls(): Promise<PendingClientCall[]> {
    return this.workflow.query(clientToolCallsQuery);
  }

  /**
   * Answers a client tool's call (`{ callId, output }` or `{ callId, error }`) by the
   * `clientToolResult` Update, with the call's Update ID (`clientToolResult:<callId>`, unless
   * `updateId` says otherwise): a retry applies once and gets the first one's receipt. A refused
   * answer (the call is not waiting or was answered, or the output fails the tool's output
   * schema) throws ClientToolRejectedError.
   */
  sendClientToolResult(result: ClientToolResult, options: { updateId?: string } = {}): Promise<ClientToolReceipt> {
    return sendClientToolResult(this.workflow, result, options.updateId);
  }

  /**
   * Runs the run's client tools here, until the run ends or `signal` aborts: each call that waits
   * for a client is run once with the handler named after its tool (its return value is the
   * output; a throw, an error result). Resolves with the calls served.
   *
   *   await run.serveClientTools({ read_file: async ({ path }) => readFile(String(path), 'utf8') });
   */
  serveClientTools(handlers: ClientToolHandlers, options: ServeClientToolsOptions = {}): Promise<ServedCall[]> {
    return serveClientTools(this, handlers, options);
  }

  /** Changes the run's permission mode from now on. */
  async setPermissionMode(mode: PermissionMode): Promise<void> {
    if (!PERMISSION_MODES.includes(mode)) throw new Error(`Unknown permission mode "${mode}": use one of ${PERMISSION_MODES.join(', ')}.`);
    await this.workflow.signal(permissionModeSignal, mode);
  }

  /** The run's execution as Temporal sees it (status, times, search attributes). */
  async describe(): Promise<RunSummary> {
    return summarize(await this.workflow.describe());
  }

  /** The run and everything under it (see `AgentClient.tree`). */
  tree(options: TreeOptions = {}): Promise<RunTree> {
    return readRunTree(this.workflow.client, this.workflowId, options);
  }
}


/** The stream's offset query (`@temporalio/workflow-streams`' fixed name): answered only by a run that streams. */
const STREAM_OFFSET_QUERY = '__temporal_workflow_stream_offset';

function isNotReady(err: unknown): boolean {
  if (err instanceof WorkflowNotFoundError) return false;
  const message = (err as Error)?.message ?? '';
  return /workflow task|not ready|query.*fail|no poller|deadline/i.test(message);
}
