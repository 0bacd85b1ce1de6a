/**
 * The run's interface, defined once and shared by the workflow and its clients: workflow type,
 * queries, signals, sinks, search attributes. Only definitions live here, so a client can import it.
 */
import { defineSearchAttributeKey } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate, type Sinks } from '@temporalio/workflow';
import type { ApprovalDecision, ApprovalReceipt, PendingApproval } from '../core/approval.js';
import type { BackgroundReport } from '../core/background.js';
import type { ClientToolReceipt, ClientToolResult, PendingClientCall } from '../core/client-tools.js';
import type { MonitorState } from '../core/monitor.js';
import type { EndInput, NewSessionInput, NewSessionResult, RewindInput, RewindResult, SendInput, SessionRunResult, SessionState } from '../core/session.js';
import type { PermissionMode } from '../core/permissions/index.js';
import type { AgentSpec } from '../core/agent-spec.js';
import type { Message } from '../core/messages.js';
import type { EventPage, MessageSegment, RunEvent, RunState, TranscriptPage } from '../core/run.js';
import type { StateSnapshot, StateValues } from '../core/state.js';

/** The workflow type name: `temporal workflow start --type agentRun ...` */
export const AGENT_RUN_WORKFLOW = 'agentRun';
export const DEFAULT_TASK_QUEUE = 'keel';
/** The monitor's workflow type: `temporal workflow start --type agentMonitor ...` */
export const AGENT_MONITOR_WORKFLOW = 'agentMonitor';

/** A slice of the transcript, by message index: `from` included, `to` excluded. */
export interface TranscriptRange {
  from?: number;
  to?: number;
}

export const statusQuery = defineQuery<RunState>('status');
/** A bounded page of the messages in the range that this execution holds. */
export const transcriptQuery = defineQuery<TranscriptPage, [TranscriptRange?]>('transcript');
/** A bounded page of the events with `seq` greater than the argument, of those this execution holds. */
export const eventsQuery = defineQuery<EventPage, [number?]>('events');
/** The spec the run recorded with this fingerprint (`specHash`), or null. */
export const specQuery = defineQuery<AgentSpec | null, [string]>('spec');
/** The run's state: its values and version (one more with each change). Every kind of run answers it. */
export const stateQuery = defineQuery<StateSnapshot>('state');

/** A problem of the worker's own setup that holds the run up (and is retried until it is fixed). */
export interface WorkerProblem {
  /** What is wrong and what to fix, for the run's current details. */
  message: string;
  /** The error type, for example `KeelConfigError`. */
  type: string;
}

/**
 * Sent by the model activity to its own run when it meets a worker problem (once per problem,
 * not once per attempt), so the run's current details can say what holds it up.
 */
export const workerProblemSignal = defineSignal<[WorkerProblem]>('workerProblem');

/**
 * A decision on a call waiting for approval, as an Update: its validator rejects an unknown or
 * already decided call, or edited arguments that fail the tool's schema, before anything is
 * written to history. Answers once the decision is recorded.
 */
export const approveUpdate = defineUpdate<ApprovalReceipt, [ApprovalDecision]>('approve');
/**
 * The same decision as a plain Signal, for any client (`temporal workflow signal --name approve
 * --input '{...}'`). A bad one is recorded as an `approval.rejected` event; it never fails the run.
 */
export const approveSignal = defineSignal<[ApprovalDecision]>('approve');
/**
 * A client's answer to a client tool's call: its output or an error. The validator refuses an
 * unknown or already answered call, or an output that fails the tool's output schema, before
 * anything is written to history. Send it with the Update ID `clientToolResult:<callId>` (as
 * `RunHandle.serveClientTools` does), so a retried send applies once.
 */
export const clientToolResultUpdate = defineUpdate<ClientToolReceipt, [ClientToolResult]>('clientToolResult');
/** The client tools' calls waiting for a client, with their arguments (and those of its sub-agents' runs), in every kind of run. */
export const clientToolCallsQuery = defineQuery<PendingClientCall[]>('clientToolCalls');
/** From a sub-agent's run to its parent: the client tools' calls waiting in it (and below it), listed on the parent. */
export const subAgentClientCallsSignal = defineSignal<[{ workflowId: string; calls: PendingClientCall[] }]>('subAgentClientCalls');
/** From a sub-agent's run to its parent: the calls waiting in it (and below it), listed and decided on the parent. */
export const subAgentPendingSignal = defineSignal<[{ workflowId: string; pending: PendingApproval[] }]>('subAgentPending');
/** From a sub-agent's run to its parent (with forwardSubAgentEvents): events to add to the parent's log. */
export const subAgentEventsSignal = defineSignal<[{ workflowId: string; callId: string; depth: number; events: RunEvent[] }]>('subAgentEvents');
/** From a background agent to the run that started it: an alert, or its end. */
export const backgroundReportSignal = defineSignal<[BackgroundReport]>('backgroundReport');
/** Changes the run's permission mode (`default`, `acceptEdits`, `plan`, `dontAsk`, `bypassPermissions`). */
export const permissionModeSignal = defineSignal<[PermissionMode]>('setPermissionMode');

export const agentSearchAttribute = defineSearchAttributeKey('KeelAgent', 'KEYWORD');
export const statusSearchAttribute = defineSearchAttributeKey('KeelStatus', 'KEYWORD');

/**
 * The workflow tells its worker about each new message, so the model activity reads the
 * conversation from a worker-local cache instead of receiving it as input (which would store
 * the whole conversation in history on every turn). On a cache miss the activity queries.
 */
export interface KeelSinks extends Sinks {
  conversation: {
    append(start: number, messages: Message[]): void;
    /** The execution continues an earlier one of the same run: its messages are this one's. */
    continued(previousRunId: string): void;
    /** Messages of earlier executions that this one was handed on (`ContinuedState.carried`). */
    carried(segments: MessageSegment[]): void;
  };
  /** Each version of the run's state, for the worker's cache: activities get the version, not the values. */
  state: {
    set(version: number, values: StateValues): void;
  };
}

// A monitor answers the queries above (its `status` is a MonitorState) and takes these.

/** A monitor's status: phase, next wake, totals. */
export const monitorStatusQuery = defineQuery<MonitorState>('status');

/** A message for a monitor's next turn: a string, or `{ "message": "..." }`. */
export type InjectInput = string | { message: string };
/** Queues a message for the next turn (an `[Inbox]` block) and wakes a sleeping monitor. */
export const injectSignal = defineSignal<[InjectInput]>('inject');
/** The same as an Update: returns once the message is queued, with the inbox's length. */
export const injectUpdate = defineUpdate<{ queued: number }, [InjectInput]>('inject');
/** Wakes a sleeping monitor now. */
export const wakeSignal = defineSignal('wake');
/** Pauses at the next turn boundary; a sleeping monitor stays asleep past its wake time. */
export const pauseSignal = defineSignal('pause');
export const resumeSignal = defineSignal('resume');
/** Ends the monitor: its current turn is cancelled cleanly and it ends `cancelled`. */
export const stopSignal = defineSignal<[string?]>('stop');

// A session (agentSession) answers the run's queries above (its `status` is a SessionState), the
// approve Update and Signal, and takes these Updates; each refused one fails with type
// KeelSessionRefused and says why.

/** The session's workflow type: `temporal workflow start --type agentSession --input '{"agent": "..."}'` */
export const AGENT_SESSION_WORKFLOW = 'agentSession';
/** `{ agent, busy, messages, checkpoints, pending, ... }`. */
export const sessionStatusQuery = defineQuery<SessionState>('status');
/** A message for the agent in charge: one run; answers with its result (or, with `wait: false`, its ID at once). */
export const sendUpdate = defineUpdate<SessionRunResult, [SendInput]>('send');
/** Waits for a run of the session (by ID) and answers its result. */
export const runResultUpdate = defineUpdate<SessionRunResult, [string]>('result');
/** Removes a checkpoint's message and all after it; answers the message, to edit and send again. */
export const rewindUpdate = defineUpdate<RewindResult, [RewindInput]>('rewind');
/** A new session with this one's conversation, state and checkpoints. */
export const forkUpdate = defineUpdate<NewSessionResult, [NewSessionInput]>('fork');
/** A new empty session with this one's state; this one ends (SessionEnd "clear") and is kept. */
export const clearUpdate = defineUpdate<NewSessionResult, [NewSessionInput]>('clear');
/** Runs a failed run again from where it failed. */
export const resumeUpdate = defineUpdate<SessionRunResult, [{ wait?: boolean }]>('resume');
/** Gives up the current run: a failed one, one waiting for approval (its calls answered as not run), or one in progress (cancelled). */
export const discardUpdate = defineUpdate<SessionRunResult, []>('discard');
/** Ends the session (SessionEnd with the reason: logout, prompt_input_exit, other). */
export const endUpdate = defineUpdate<{ reason: string }, [EndInput]>('end');
