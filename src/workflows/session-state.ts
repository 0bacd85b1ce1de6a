/**
 * A session's own state and handlers, beside its run: the runs of its messages (one at a time),
 * the checkpoints, the work its Updates ask of the driver (agent-session.ts), and what it carries
 * across continue-as-new. Every Update has a validator that refuses with the reason, before
 * anything is written to history.
 */
import {
  ApplicationFailure,
  ParentClosePolicy,
  type CancellationScope,
  condition,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { parseEnd, parseNewSession, parseRewind, parseSend } from '../core/boundary.js';
import { ErrorTypes } from '../core/errors.js';
import type { JsonValue } from '../core/json.js';
import { preview } from '../core/limits.js';
import {
  CHECKPOINT_MESSAGE_CHARS,
  keepCheckpoints,
  type Checkpoint,
  type SessionCarried,
  type SessionCheckpoint,
  type SessionEndReason,
  type SessionInput,
  type SessionRunResult,
  type SessionRunStatus,
  type SessionState,
} from '../core/session.js';
import { subtractUsage, zeroUsage, type Usage } from '../core/usage.js';
import {
  AGENT_SESSION_WORKFLOW,
  agentSearchAttribute,
  clearUpdate,
  discardUpdate,
  endUpdate,
  forkUpdate,
  resumeUpdate,
  rewindUpdate,
  runResultUpdate,
  sendUpdate,
  sessionStatusQuery,
  statusSearchAttribute,
} from './api.js';
import { Handoffs } from './handoff.js';
import { conversationActivity } from './scheduling.js';
import type { Message } from '../core/messages.js';
import type { Run } from './run-state.js';

/** A refused Update: non-retryable (sending it again is refused again), of one type. */
export function sessionRefusal(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: ErrorTypes.SessionRefused, message, nonRetryable: true });
}

/** A run of the session: one message, from its send to its end. */
export interface SessionRun {
  id: string;
  message: string;
  status: SessionRunStatus;
  /** The driver has taken it (its checks and turns began). */
  started: boolean;
  checkpoint?: string;
  /** Turns and usage of the session when it started: its own are counted from there. */
  firstTurn: number;
  startUsage: Usage;
  result?: SessionRunResult;
  scope?: CancellationScope;
  discardRequested?: boolean;
  /** Carried from the execution before: its turns and usage count from where this execution takes it up. */
  carried?: true;
}

/** What the driver does next, asked by an Update. */
export type SessionWork = { kind: 'run' } | { kind: 'resume' } | { kind: 'end'; reason: SessionEndReason } | { kind: 'rewind'; messages: number };

const SETTLED: readonly SessionRunStatus[] = ['completed', 'max_turns', 'blocked', 'failed', 'discarded'];
const RECENT_RESULTS = 100;

export class Session {
  /** The state the session started with (its input, or carried); once its run is open, the run's state is the session's. */
  readonly state: Record<string, JsonValue>;
  checkpoints: SessionCheckpoint[] = [];
  runs = 0;
  /** The run in progress, waiting for approval, queued, or failed (to resume or discard). */
  current: SessionRun | undefined;
  last: SessionRunResult | null = null;
  private readonly results = new Map<string, SessionRunResult>();
  work: SessionWork | undefined;
  ended: SessionEndReason | undefined;
  /** Updates this execution accepted (`totalUpdates`: with the earlier executions'). */
  updates = 0;
  private readonly updatesBefore: number;
  /** The handlers drain before a continue-as-new: a waiting send answers at once, its run goes on in the next execution. */
  continuing = false;
  /** SessionStart's context, for the next message. */
  startContext: string | undefined;
  /** The messages a rewind past this execution's first message keeps: the driver continues as new with them. */
  rewoundTo: number | undefined;

  /** The carried state is restored at once: an Update buffered for this execution may run right after. */
  constructor(readonly input: SessionInput) {
    const c = input?.continued;
    this.state = { ...(c?.state ?? input?.state ?? {}) };
    this.updatesBefore = c?.updates ?? 0;
    if (c) {
      this.checkpoints = [...c.checkpoints];
      this.runs = c.runs;
      this.last = c.last;
      this.ended = c.ended;
      for (const result of c.results ?? []) this.results.set(result.run, result);
      if (c.last) this.results.set(c.last.run, c.last);
      if (c.failed && c.last) {
        this.current = { id: c.last.run, message: '', status: 'failed', started: true, firstTurn: 0, startUsage: zeroUsage(), result: c.last, carried: true, ...(c.last.checkpoint && { checkpoint: c.last.checkpoint }) };
      }
      if (c.queued) {
        this.current = { id: c.queued.run, message: c.queued.message, status: 'running', started: false, firstTurn: 0, startUsage: zeroUsage() };
        this.work = { kind: 'run' };
      }
      if (c.resume && this.current) {
        this.current.status = 'running';
        this.work = { kind: 'resume' };
      }
    } else if (input?.origin?.kind === 'fork') {
      this.checkpoints = [...(input.origin.checkpoints ?? [])];
      this.runs = input.origin.runs ?? 0;
    }
  }

  get totalUpdates(): number {
    return this.updatesBefore + this.updates;
  }

  get busy(): boolean {
    return this.work !== undefined || (this.current !== undefined && this.current.status !== 'failed');
  }

  carry(run: Run, view: boolean): SessionCarried {
    const queued = this.current && !this.current.started && this.work?.kind === 'run' ? this.current : undefined;
    const failed = this.current?.status === 'failed' || (this.work?.kind === 'resume' && this.current !== undefined);
    return {
      run: this.rewoundTo !== undefined ? { ...run.carry(), messages: this.rewoundTo, lastAnswer: null } : run.carry({ view }),
      checkpoints: this.checkpoints,
      runs: this.runs,
      last: failed ? (this.current!.result ?? this.last) : this.last,
      failed,
      ...(this.ended && { ended: this.ended }),
      // The run's state is the session's: what its tools wrote carries on.
      state: run.state.values,
      updates: this.totalUpdates,
      results: [...this.results.values()],
      ...(queued && { queued: { run: queued.id, message: queued.message } }),
      ...(this.work?.kind === 'resume' && { resume: true }),
    };
  }

  status(run: Run | undefined): SessionState {
    const current = this.current;
    const waiting = run !== undefined && run.approvals.waiting > 0;
    const status: SessionState['status'] = current?.status === 'failed' ? 'failed' : waiting ? 'awaiting_approval' : this.busy ? 'running' : this.ended ? 'ended' : 'idle';
    const shown = current ? (current.result && current.status !== 'running' ? current.result : this.progress(run, current)) : this.last;
    return {
      kind: 'session',
      agent: run?.agent.name ?? this.input?.agent ?? '',
      busy: this.busy,
      status,
      messages: this.rewoundTo ?? run?.messageCount ?? 0,
      checkpoints: this.checkpoints.map(publicCheckpoint),
      pending: run?.approvals.list() ?? [],
      ...(shown && { run: shown }),
      ...(this.ended && { ended: this.ended }),
      runs: this.runs,
      turns: run?.turns ?? 0,
      usage: run?.usage ?? zeroUsage(),
      lastSeq: run?.log.lastSeq ?? 0,
      state: run?.state.values ?? this.state,
    };
  }

  /** A run still going, as its result reads so far. */
  progress(run: Run | undefined, r: SessionRun): SessionRunResult {
    const waiting = run !== undefined && run.approvals.waiting > 0 && r.started;
    return {
      run: r.id,
      status: waiting ? 'awaiting_approval' : 'running',
      ...(r.checkpoint && { checkpoint: r.checkpoint }),
      agent: run?.agent.name ?? this.input?.agent ?? '',
      turns: r.started && run ? run.turns - r.firstTurn : 0,
      usage: r.started && run ? subtractUsage(run.usage, r.startUsage) : zeroUsage(),
    };
  }

  /** A run ended (or failed): its result is what `send`, `result` and the status query answer. */
  settle(r: SessionRun, result: SessionRunResult): void {
    r.status = result.status;
    r.result = result;
    this.results.set(r.id, result);
    while (this.results.size > RECENT_RESULTS) this.results.delete(this.results.keys().next().value!);
    if (result.status !== 'failed') {
      this.last = result;
      if (this.current === r) this.current = undefined;
    }
  }

  /** The checkpoint of a run's message, which the driver has just added to the conversation. */
  addCheckpoint(run: Run, r: SessionRun, index: number): SessionCheckpoint {
    const id = `cp-${r.id.slice('run-'.length)}`;
    const cut = r.message.length > CHECKPOINT_MESSAGE_CHARS;
    const view = run.feature(Handoffs)?.view;
    const checkpoint: SessionCheckpoint = {
      id,
      message: cut ? r.message.slice(0, CHECKPOINT_MESSAGE_CHARS) : r.message,
      at: new Date().toISOString(),
      agent: run.agent.name,
      index,
      spec: run.specHash,
      chars: 0,
      ...(cut && { cut: r.message.length }),
      ...(view && { handoffView: view }),
    };
    this.checkpoints = keepCheckpoints(this.checkpoints, checkpoint);
    r.checkpoint = id;
    return checkpoint;
  }

  private waitFor(r: SessionRun): Promise<SessionRunResult> {
    return condition(() => (r.result !== undefined && SETTLED.includes(r.status) && r.status === r.result.status) || this.continuing).then(
      () => (r.result && SETTLED.includes(r.status) ? r.result : this.progress(undefined, r)),
    );
  }

  /**
   * Sets the session's handlers. `current` is the run, once it is open (an Update buffered for
   * the first workflow task may come before).
   */
  register(current: () => Run | undefined): void {
    const opened = async (): Promise<Run> => {
      await condition(() => current() !== undefined);
      return current()!;
    };
    const counted = <A extends unknown[], R>(handler: (...args: A) => Promise<R>) => (...args: A): Promise<R> => {
      this.updates++;
      return handler(...args);
    };
    const notBusy = (what: string) => {
      const r = this.current;
      if (this.ended && this.ended !== 'clear') throw sessionRefusal(`The session has ended (${this.ended}): it takes no more ${what}.`);
      if (!r) {
        if (this.work?.kind === 'rewind') throw sessionRefusal(`The session is busy: a rewind is being applied; ${what} again in a moment.`);
        if (this.work?.kind === 'end') throw sessionRefusal(`The session is ending (${this.work.reason}): it takes no more ${what === 'send the message' ? 'messages' : 'changes'}.`);
        return;
      }
      if (!this.busy) return;
      const run = current();
      const pending = run?.approvals.list() ?? [];
      if (pending.length > 0) {
        throw sessionRefusal(
          `Approval pending: run ${r.id} waits for a decision on ${pending.map((p) => `${p.tool} (${p.callId})`).join(', ')}. ` +
            `Decide with the approve Update (keel approve ${workflowInfo().workflowId} <call>), or discard the run; then ${what} again.`,
        );
      }
      throw sessionRefusal(`The session is busy: run ${r.id} is in progress. Wait for its result (the result Update), or discard it; then ${what} again.`);
    };

    setHandler(sessionStatusQuery, () => this.status(current()));

    setHandler(
      sendUpdate,
      counted(async (input) => {
        const failed = this.current?.status === 'failed' ? this.current : undefined;
        if (failed) this.giveUp(current(), failed, 'a new message was sent');
        const r: SessionRun = { id: `run-${++this.runs}`, message: input.message, status: 'running', started: false, firstTurn: 0, startUsage: zeroUsage() };
        this.current = r;
        this.work = { kind: 'run' };
        if (input.wait === false) return this.progress(current(), r);
        return this.waitFor(r);
      }),
      {
        validator: (input) => {
          const parsed = parseSend(input);
          if (!parsed.ok) throw sessionRefusal(parsed.error);
          notBusy('send the message');
        },
      },
    );

    setHandler(
      runResultUpdate,
      counted(async (id) => {
        const r = this.current?.id === id ? this.current : undefined;
        return r ? this.waitFor(r) : this.results.get(id)!;
      }),
      {
        validator: (id) => {
          if (this.current?.id === id || this.results.has(id)) return;
          throw sessionRefusal(`Unknown run ${JSON.stringify(id)}: this session knows ${[...(this.current ? [this.current.id] : []), ...this.results.keys()].slice(-10).join(', ') || 'no run yet'} (the last ${RECENT_RESULTS} are kept).`);
        },
      },
    );

    setHandler(
      rewindUpdate,
      counted(async ({ checkpoint: id }) => {
        const run = await opened();
        const at = this.checkpoints.findIndex((c) => c.id === id);
        const cp = this.checkpoints[at]!;
        const failed = this.current?.status === 'failed' ? this.current : undefined;
        if (failed) this.giveUp(run, failed, `the session was rewound to ${id}`);
        // The original message, whole: kept by the checkpoint, else in the conversation it leaves.
        const held = cp.index >= run.firstMessage ? run.transcriptPage({ from: cp.index, to: cp.index + 1 }).messages[0] : undefined;
        const whole = cp.cut ? (held ?? (await readMessage(cp.index))) : undefined;
        const message = cp.cut && whole ? whole.content.slice(0, cp.cut) : cp.message;
        this.checkpoints = this.checkpoints.slice(0, at);
        const spec = run.spec(cp.spec);
        if (spec) run.handOff(spec);
        const handoffs = run.feature(Handoffs);
        if (handoffs) handoffs.view = cp.handoffView;
        if (cp.index >= run.firstMessage) run.rollback(cp.index);
        else {
          // Messages of an earlier execution: the next execution starts from them.
          this.rewoundTo = cp.index;
          this.work = { kind: 'rewind', messages: cp.index };
        }
        run.viewFrom = 0;
        run.emit({ type: 'session.rewound', checkpoint: id, messages: cp.index, agent: run.agent.name });
        return { checkpoint: id, message, messages: cp.index, agent: run.agent.name };
      }),
      {
        validator: (input) => {
          const parsed = parseRewind(input);
          if (!parsed.ok) throw sessionRefusal(parsed.error);
          notBusy('rewind');
          if (!this.checkpoints.some((c) => c.id === parsed.value.checkpoint)) {
            const known = this.checkpoints.map((c) => c.id);
            throw sessionRefusal(
              `Unknown checkpoint ${JSON.stringify(parsed.value.checkpoint)}: ` +
                (known.length ? `this session has ${known.length > 10 ? `${known.slice(0, 3).join(', ')}, …, ${known.slice(-5).join(', ')}` : known.join(', ')} (see the status query).` : 'this session has none yet (one is made per message).'),
            );
          }
        },
      },
    );

    const newSession = (kind: 'fork' | 'clear') =>
      counted(async (input?: { workflowId?: string }) => {
        const run = await opened();
        const info = workflowInfo();
        const workflowId = input?.workflowId ?? `${info.workflowId}-${kind}-${this.runs}-${info.runId.slice(0, 8)}`;
        const agent = kind === 'fork' ? run.agent.name : this.input.agent;
        const child: SessionInput = {
          agent,
          ...(Object.keys(run.state.values).length > 0 && { state: run.state.values }),
          ...(this.input.options && { options: this.input.options }),
          origin:
            kind === 'fork'
              ? { kind, workflowId: info.workflowId, runId: info.runId, messages: run.messageCount, checkpoints: this.checkpoints, runs: this.runs }
              : { kind, workflowId: info.workflowId },
        };
        await startChild(AGENT_SESSION_WORKFLOW, {
          workflowId,
          args: [child],
          // The new session lives on its own: neither this session's end nor its continue-as-new closes it.
          parentClosePolicy: ParentClosePolicy.ABANDON,
          typedSearchAttributes: [
            { key: agentSearchAttribute, value: agent },
            { key: statusSearchAttribute, value: 'running' },
          ],
          staticSummary: `session ${kind === 'fork' ? 'forked' : 'cleared'} from ${info.workflowId}`,
        });
        if (kind === 'fork') run.emit({ type: 'session.forked', workflowId, messages: run.messageCount });
        else {
          run.emit({ type: 'session.cleared', workflowId });
          this.work = { kind: 'end', reason: 'clear' };
        }
        return { workflowId };
      });
    for (const [update, kind] of [
      [forkUpdate, 'fork'],
      [clearUpdate, 'clear'],
    ] as const) {
      setHandler(update, newSession(kind), {
        validator: (input) => {
          const parsed = parseNewSession(input, kind);
          if (!parsed.ok) throw sessionRefusal(parsed.error);
          notBusy(kind);
        },
      });
    }

    setHandler(
      resumeUpdate,
      counted(async (input: { wait?: boolean } | undefined) => {
        const r = this.current!;
        r.status = 'running';
        this.work = { kind: 'resume' };
        current()?.emit({ type: 'session.resumed', run: r.id });
        if (input?.wait === false) return this.progress(current(), r);
        return this.waitFor(r);
      }),
      {
        validator: (input) => {
          if (input !== undefined && input !== null && (typeof input !== 'object' || (input.wait !== undefined && typeof input.wait !== 'boolean'))) {
            throw sessionRefusal('Invalid resume: it takes nothing, or { "wait": true | false }.');
          }
          if (this.current?.status === 'failed' && !this.work) return;
          if (this.busy) notBusy('resume');
          throw sessionRefusal('Nothing to resume: no run of this session failed.');
        },
      },
    );

    setHandler(
      discardUpdate,
      counted(async () => {
        const r = this.current!;
        const run = current();
        if (r.status === 'failed' || !r.started) {
          if (this.work?.kind === 'run' || this.work?.kind === 'resume') this.work = undefined;
          this.giveUp(run, r, 'discarded');
          return r.result!;
        }
        r.discardRequested = true;
        r.scope?.cancel();
        return this.waitFor(r);
      }),
      {
        validator: () => {
          if (!this.current) throw sessionRefusal('Nothing to discard: no run of this session is in progress, waiting for approval or failed.');
        },
      },
    );

    setHandler(
      endUpdate,
      counted(async (input) => {
        const reason = input?.reason ?? 'other';
        this.work = { kind: 'end', reason };
        return { reason };
      }),
      {
        validator: (input) => {
          const parsed = parseEnd(input);
          if (!parsed.ok) throw sessionRefusal(parsed.error);
          if (this.ended && this.ended !== 'clear') throw sessionRefusal(`The session has ended (${this.ended}) already.`);
          if (this.busy) throw sessionRefusal(`The session is busy (run ${this.current?.id ?? ''}): discard the run first, then end the session.`);
        },
      },
    );
  }

  /** Gives up a run that failed or never started (or is being discarded): its calls answered as not run, its result discarded. */
  giveUp(run: Run | undefined, r: SessionRun, reason: string): void {
    if (run && r.started) {
      const open = run.openCalls();
      if (open.length > 0) run.append(open.map((c) => ({ role: 'tool' as const, toolCallId: c.id, toolName: c.name, content: NOT_RUN, isError: true })));
      run.emit({ type: 'session.discarded', run: r.id, reason });
      run.emit({ type: 'session.run_finished', run: r.id, status: 'discarded' });
    } else run?.emit({ type: 'session.discarded', run: r.id, reason });
    this.settle(r, { ...(r.result ?? this.progress(run, r)), status: 'discarded', ...(r.checkpoint && { checkpoint: r.checkpoint }) });
  }
}

/** A message of an earlier execution of this session, read by the worker. */
async function readMessage(index: number): Promise<Message | undefined> {
  const { workflowId, runId } = workflowInfo();
  const page = await conversationActivity(`read message ${index}`).readConversation({ workflowId, runId, from: index, to: index + 1 });
  return page.messages[0];
}

/** The result a call of a discarded run gets: the model reads it at the next message. */
export const NOT_RUN = 'Not run: the user discarded this run before the call ran.';

function publicCheckpoint(c: SessionCheckpoint): Checkpoint {
  return { id: c.id, message: preview(c.message, 500), at: c.at, agent: c.agent };
}

