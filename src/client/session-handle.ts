/**
 * A session, from a client: send messages, read its status, rewind, fork, clear, resume or
 * discard a run. Every operation is an Update of the `agentSession` workflow; a refused one
 * throws SessionRefusedError with the session's reason.
 */
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { innermostError } from '../core/errors.js';
import type { Message } from '../core/messages.js';
import type { RunEvent } from '../core/run.js';
import type { EndInput, RewindResult, SessionResult, SessionRunResult, SessionState } from '../core/session.js';
import {
  clearUpdate,
  discardUpdate,
  endUpdate,
  forkUpdate,
  resumeUpdate,
  rewindUpdate,
  runResultUpdate,
  sendUpdate,
  sessionStatusQuery,
} from '../workflows/api.js';
import { readMessages } from './run-chain.js';
import type { StreamReadOptions } from './run-stream.js';
import type { StreamItem } from '../core/stream.js';
import type { RunHandle } from './run-handle.js';

/** The session refused an operation (busy, an approval pending, an unknown checkpoint, nothing to resume): nothing changed. */
export class SessionRefusedError extends Error {
  constructor(
    readonly workflowId: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SessionRefusedError';
  }
}

/** A run's result with its answer: `output` is the final answer's text (or the structured output). */
export type SessionAnswer = SessionRunResult & { output?: unknown };

export class SessionHandle {
  /** `open`: a handle to a session with this ID, made by `fork` or `clear`. */
  constructor(
    /** The session's workflow as a run: its events, transcript, approvals and Temporal UI link. */
    readonly run: RunHandle,
    private readonly open: (workflowId: string) => SessionHandle,
  ) {}

  get workflowId(): string {
    return this.run.workflowId;
  }

  get uiUrl(): string {
    return this.run.uiUrl;
  }

  private get workflow(): WorkflowHandle {
    return this.run.workflow;
  }

  /**
   * Sends a message to the agent in charge and waits for the run's answer; with `wait: false`,
   * answers with the run's ID at once (wait for it with `result(run)`). Refused while another
   * run is in progress or waits for approval.
   */
  async send(message: string, options: { wait?: boolean } = {}): Promise<SessionAnswer> {
    const wait = options.wait ?? true;
    const result = await this.update(() => this.workflow.executeUpdate(sendUpdate, { args: [{ message, ...(wait === false && { wait }) }] }));
    return wait ? this.settled(result) : result;
  }

  /** Waits for a run of the session (by ID) and answers its result, with the answer's text. */
  async result(run: string): Promise<SessionAnswer> {
    return this.settled(await this.update(() => this.workflow.executeUpdate(runResultUpdate, { args: [run] })));
  }

  /** `{ agent, busy, messages, checkpoints, pending, run, ... }`. */
  status(): Promise<SessionState> {
    return this.workflow.query(sessionStatusQuery);
  }

  /** Removes the checkpoint's message and all after it; answers the message, to edit and send again. */
  rewind(checkpoint: string): Promise<RewindResult> {
    return this.update(() => this.workflow.executeUpdate(rewindUpdate, { args: [{ checkpoint }] }));
  }

  /** A new session with this one's conversation, state and checkpoints. */
  async fork(options: { workflowId?: string } = {}): Promise<SessionHandle> {
    const { workflowId } = await this.update(() => this.workflow.executeUpdate(forkUpdate, { args: [options] }));
    return this.open(workflowId);
  }

  /** A new empty session with this one's state; this one ends (SessionEnd "clear") and is kept. */
  async clear(options: { workflowId?: string } = {}): Promise<SessionHandle> {
    const { workflowId } = await this.update(() => this.workflow.executeUpdate(clearUpdate, { args: [options] }));
    return this.open(workflowId);
  }

  /** Runs the failed run again from where it failed, and waits for its answer. */
  async resume(options: { wait?: boolean } = {}): Promise<SessionAnswer> {
    const result = await this.update(() => this.workflow.executeUpdate(resumeUpdate, { args: [options] }));
    return options.wait === false ? result : this.settled(result);
  }

  /** Gives up the current run: a failed one, one waiting for approval (its calls answered as not run), or one in progress. */
  discard(): Promise<SessionRunResult> {
    return this.update(() => this.workflow.executeUpdate(discardUpdate));
  }

  /** Ends the session (SessionEnd with the reason); answers its result. */
  async end(reason: NonNullable<EndInput['reason']> = 'other'): Promise<SessionResult> {
    await this.update(() => this.workflow.executeUpdate(endUpdate, { args: [{ reason }] }));
    return (await this.workflow.result()) as SessionResult;
  }

  /** The whole conversation, across continue-as-new. */
  transcript(): Promise<Message[]> {
    return this.run.transcript();
  }

  events(options: { after?: number } = {}): Promise<RunEvent[]> {
    return this.run.events(options);
  }

  /**
   * The session's live stream (a session started with `options: { stream: true }`): every run's
   * text and tool calls as they are produced, and the session's events, across its messages and
   * continue-as-new, until the session ends. Throws RunNotStreamingError for one that does not stream.
   */
  stream(options: StreamReadOptions = {}): AsyncGenerator<StreamItem> {
    return this.run.stream(options);
  }

  /**
   * A run that was still going when the session continued as new is answered by the next
   * execution; a text answer is read from the transcript, where it is stored once.
   */
  private async settled(result: SessionRunResult): Promise<SessionAnswer> {
    let r = result;
    while (r.status === 'running' || r.status === 'awaiting_approval') {
      r = await this.update(() => this.workflow.executeUpdate(runResultUpdate, { args: [r.run] }));
    }
    if (r.answer === undefined || r.output !== undefined) return r;
    const [message] = await readMessages(this.workflow.client, this.workflowId, undefined, r.answer, r.answer + 1);
    return { ...r, output: message?.content };
  }

  private async update<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) throw new SessionRefusedError(this.workflowId, innermostError(err).message, { cause: err });
      throw err;
    }
  }
}
