import type { AgentSpec } from './agent-spec.js';
import type { DecisionSource, PendingApproval } from './approval.js';
import type { BackgroundChild, BackgroundReport } from './background.js';
import type { ClientToolAnswerer, PendingClientCall } from './client-tools.js';
import type { GuardrailKind, Tripwire } from './guardrails.js';
import type { HandoffFilter } from './handoff.js';
import type { JsonValue } from './json.js';
import type { Message, ToolCall } from './messages.js';
import type { MonitorStopReason } from './monitor.js';
import type { PermissionMode } from './permissions/index.js';
import type { SessionEndReason, SessionRunStatus, SessionStartSource } from './session.js';
import type { StateValues } from './state.js';
import type { Usage } from './usage.js';
import type { StreamSetting } from './stream.js';
import type { WorkflowStreamState } from '@temporalio/workflow-streams/workflow';

/** Where a run is. Also the value of the `KeelStatus` search attribute. */
export type RunStatus = 'running' | 'awaiting_approval' | 'completed' | 'max_turns' | 'blocked' | 'failed' | 'cancelled';

export const TERMINAL_STATUSES: readonly RunStatus[] = ['completed', 'max_turns', 'blocked', 'failed', 'cancelled'];

/** Input of the `agentRun` workflow. Plain JSON: any Temporal client can start a run. */
export interface AgentRunInput {
  /** Name of a registered agent. */
  agent: string;
  /** The user's prompt. */
  input: string;
  /**
   * Plain JSON the run's tools (`ctx.context`) and instructions (when a function) see: the
   * run's dependencies, such as a user or tenant ID. Recorded in the run's input.
   */
  context?: JsonValue;
  /**
   * The run's state at its start: a JSON key-value map that its tools, hooks, middleware and
   * instruction functions read and write (`ctx.state`), and that fills `{key}` placeholders in
   * static instructions.
   */
  state?: StateValues;
  /** Per-run changes to the agent, recorded in the run's spec. */
  overrides?: RunOverrides;
  options?: RunOptions;
  /** Set by the workflow itself when it continues as new; rejected from any other caller. */
  continued?: ContinuedState;
  /** Set for a sub-agent's run: the run and call it answers, and how deep it is. */
  parent?: ParentRun;
}

/** The run a sub-agent's run answers to. */
export interface ParentRun {
  workflowId: string;
  callId: string;
  /** This run's depth: 1 for a sub-agent of a top-level run. */
  depth: number;
  /** The smallest depth limit of the runs above. */
  maxDepth: number;
  /** Send this run's events to the parent, which adds them to its own log. */
  forwardEvents?: boolean;
  /** The allow rules the parent's approvals remembered: the sub-agent's calls get them too. */
  remembered?: string[];
}

export interface RunOverrides {
  /** `provider:model`, instead of the agent's. */
  model?: string;
  maxTurns?: number;
  /** The permission mode the run starts in (it can change during the run by the `setPermissionMode` signal). */
  permissionMode?: PermissionMode;
  /** Instructions instead of the agent's (a background agent's, given by the run that spawned it). */
  instructions?: string;
  /** Only these of the agent's tools. */
  tools?: string[];
}

export interface RunOptions {
  /** Continue as new once the history has this many events (default 10,000). */
  continueAsNewAfterEvents?: number;
  /**
   * Live streaming: text deltas, tool-call progress and run events published to the run's
   * stream as they happen (read with `RunHandle.stream()`). Off by default, and then it costs
   * nothing. `{ batchMs }`: how long the model activity gathers deltas into one batch (100 ms).
   */
  stream?: StreamSetting;
}

/**
 * What a run carries into its next execution when it continues as new: references and
 * counters, never the conversation or the event log (they stay readable in the earlier
 * executions, which the queries' pages point to), so it stays small however long the run.
 */
export interface ContinuedState {
  /** The agent in charge, and every spec the run recorded: one run, one spec per agent. */
  agent: string;
  specs: AgentSpec[];
  /** The fingerprint of the agent in charge's spec (several of its specs may be recorded: handoffs, instructions of the state). */
  agentSpec?: string;
  /** The state's version that the agent in charge's instructions were evaluated with. */
  instructionsAt?: number;
  context?: JsonValue;
  /** Messages and events the earlier executions hold. */
  messages: number;
  lastSeq: number;
  turns: number;
  usage: Usage;
  outputAttempts: number;
  /** The last answer so far, for a run that then stops at its turn limit. */
  lastAnswer: string | null;
  /** An answer cut off at the token limit that the model is continuing. */
  partialAnswer?: string;
  /** The permission mode, when a signal changed it. */
  permissionMode?: PermissionMode;
  /** Allow rules approvals added ("allow again"). */
  remembered?: string[];
  /** The run's state and its version, when it has any. */
  state?: StateValues;
  stateVersion?: number;
  /** Handoffs so far, and what the agent in charge sees of the conversation before the last one. */
  handoffs?: number;
  handoffView?: HandoffView;
  /** The background agents the run started and the reports not yet read. */
  background?: BackgroundState;
  /**
   * Messages of earlier executions that the next model turn needs (a monitor's goal and
   * compacted view), so that reading them never walks the chain of executions.
   */
  carried?: MessageSegment[];
  /** The live stream's state (its offset and the log of the turn in progress), when the run streams. */
  stream?: WorkflowStreamState;
}

/** Messages `start..start + messages.length - 1` of a run. */
export interface MessageSegment {
  start: number;
  messages: Message[];
}

export interface BackgroundState {
  children: BackgroundChild[];
  reports: BackgroundReport[];
  /** The last report seen of each agent, by name: a report delivered twice is dropped. */
  seen: Record<string, number>;
}

/** The agent in charge sees the messages before `at` through `filter` (a handoff's input filter). */
export interface HandoffView {
  at: number;
  filter: Exclude<HandoffFilter, 'all'>;
}

/** Result of the `agentRun` workflow. */
export interface AgentRunResult<O = unknown> {
  kind: 'run';
  status: Extract<RunStatus, 'completed' | 'max_turns' | 'blocked'>;
  /** The final answer: text, or the parsed structured output when the agent has an output schema. */
  output: O;
  usage: Usage;
  turns: number;
  agent: string;
  /** What blocked a `blocked` run (its output is then null). */
  blocked?: Tripwire;
  /** The run's state at its end, when it had any. */
  state?: StateValues;
  /** Allow rules the run's approvals remembered (a sub-agent's flow back to its parent). */
  rememberedRules?: string[];
}

/** Answer of the `status` query: the shape every kind of run shares (a monitor's adds its own fields). */
export interface RunState {
  kind: 'run';
  /** The agent in charge. */
  agent: string;
  status: RunStatus;
  turns: number;
  usage: Usage;
  /** Number of messages in the transcript (across continue-as-new). */
  messages: number;
  /** Sequence number of the last event. */
  lastSeq: number;
  /** Calls waiting for a decision (status `awaiting_approval`). */
  pending?: PendingApproval[];
  /** Client tools' calls waiting for a client to answer them. */
  clientCalls?: PendingClientCall[];
  /** The run's permission mode, when the agent has permissions or the run set a mode. */
  permissionMode?: PermissionMode;
  /** Allow rules added by approvals with `remember`. */
  rememberedRules?: string[];
}

/** Answer of the `transcript` query: a bounded page of the messages this execution holds. */
export interface TranscriptPage {
  /** Index of `messages[0]` in the whole transcript. */
  from: number;
  messages: Message[];
  /** Messages in the whole transcript. */
  total: number;
  /** Messages before this index are held by the execution `previousRunId` (continue-as-new). */
  firstHeld: number;
  previousRunId?: string;
}

/** Answer of the `events` query: a bounded page of the events this execution holds. */
export interface EventPage {
  events: RunEvent[];
  /** Events before this `seq` are held by the execution `previousRunId` (continue-as-new). */
  firstSeq: number;
  lastSeq: number;
  previousRunId?: string;
}

interface EventBase {
  seq: number;
  /** ISO time, from the workflow's deterministic clock. */
  at: string;
}

/**
 * One entry of a run's event log. The log is workflow state, exposed by the `events` query:
 * it costs no history events. CLI, tests and benchmarks all read it. Long texts are previews:
 * the transcript has them whole.
 */
export type RunEvent = EventBase &
  (
    | { type: 'run.started'; agent: string; model: string; input: string }
    | { type: 'turn.started'; turn: number; agent: string }
    | {
        type: 'turn.finished';
        turn: number;
        text: string;
        toolCalls: ToolCall[];
        usage: Usage;
        /** The answer stopped at the token limit. */
        truncated?: boolean;
      }
    | { type: 'tool.requested'; turn: number; callId: string; tool: string; arguments: string }
    | { type: 'tool.started'; turn: number; callId: string; tool: string }
    | {
        type: 'tool.finished';
        turn: number;
        callId: string;
        tool: string;
        result: string;
        isError: boolean;
        /** The result was cut to the tool's limit; its size before, in bytes. */
        truncatedFrom?: number;
        /** The pipeline stage that produced the result, when it was not the tool (`validate`, `client`, ...). */
        stage?: string;
        /** Who answered a client tool's call: the client, or its timeout. */
        by?: ClientToolAnswerer;
      }
    /** A client tool's call waits for a client attached to the run to answer it (by the clientToolResult Update) until `expires`. */
    | {
        type: 'client_tool.requested';
        turn: number;
        callId: string;
        tool: string;
        arguments: string;
        expires: string;
        /** The sub-agent's run the call waits in, when it is not this run's own. */
        run?: string;
      }
    | { type: 'output.invalid'; turn: number; error: string; attempt: number }
    /** A stage of the pipeline decided a call (allow, ask or deny), or rewrote its arguments. */
    | { type: 'tool.decided'; turn: number; callId: string; tool: string; stage: string; decision: 'allow' | 'ask' | 'deny' | 'rewrite'; reason: string }
    | { type: 'approval.requested'; turn: number; callId: string; tool: string; stage: string; reason: string; arguments: string }
    | {
        type: 'approval.decided';
        turn: number;
        callId: string;
        tool: string;
        decision: 'allow' | 'deny';
        by: DecisionSource;
        reason?: string;
        /** The decision edited the arguments. */
        edited?: boolean;
        /** The allow rule the decision added. */
        remembered?: string;
      }
    /** A decision that could not be applied (an unknown call, a bad payload): nothing changed. */
    | { type: 'approval.rejected'; callId?: string; error: string }
    /** A signal whose payload could not be decoded (not JSON): recorded, not delivered. */
    | { type: 'signal.rejected'; signal: string; error: string }
    | { type: 'permission.mode'; mode: PermissionMode; by: 'signal' }
    /** The run's state changed: the keys set or deleted, by the call (or the sub-agent's call) that wrote them. */
    | { type: 'state.changed'; turn: number; keys: string[]; version: number; callId?: string; tool?: string }
    /** The run was handed to another agent: it answers from the next turn on. */
    | { type: 'handoff'; turn: number; from: string; to: string; callId: string; input?: string }
    | { type: 'subagent.started'; turn: number; callId: string; agent: string; workflowId: string }
    | { type: 'subagent.finished'; turn: number; callId: string; agent: string; workflowId: string; status: string }
    /** An event of a sub-agent's run, forwarded into this log (with forwardSubAgentEvents). */
    | { type: 'subagent.event'; callId: string; depth: number; workflowId: string; event: RunEvent }
    | { type: 'background.spawned'; name: string; workflowId: string; goal: string; taskQueue?: string }
    | { type: 'background.report'; name: string; kind: string; text: string; report: number }
    | { type: 'background.stopped'; name: string; reason: string }
    | { type: 'guardrail.tripped'; guardrail: string; kind: GuardrailKind; reason: string; callId?: string }
    /** A hook failed without deciding (a crash, a timeout, an exit code other than 0 and 2): logged, the run goes on. */
    | { type: 'hook.failed'; event: string; error: string; callId?: string }
    | { type: 'hook.context'; event: string; text: string }
    | { type: 'run.continued'; turns: number }
    /** The agent's onTurnEnd gave input after an answer: the loop goes on with it as the next user message. */
    | { type: 'turn.continued'; turn: number; input: string }
    /** One of the agent's stopWhen conditions held after a turn's tool calls: the run ends completed. */
    | { type: 'run.stop_condition'; turn: number; condition: string }
    | { type: 'run.finished'; status: RunStatus | MonitorStopReason; output?: unknown; error?: string }
    // A session's own events.
    /** The session started (or, after a clear, took a message again): `from` is the session it was made from. */
    | { type: 'session.started'; source: SessionStartSource; from?: string; messages?: number }
    /** A message started a run of the session. */
    | { type: 'session.run_started'; run: string; checkpoint?: string; agent: string; message: string }
    | { type: 'session.run_finished'; run: string; status: SessionRunStatus; error?: string }
    | { type: 'session.resumed'; run: string }
    | { type: 'session.discarded'; run: string; reason: string }
    | { type: 'session.rewound'; checkpoint: string; messages: number; agent: string }
    | { type: 'session.forked'; workflowId: string; messages: number }
    | { type: 'session.cleared'; workflowId: string }
    | { type: 'session.ended'; reason: SessionEndReason }
    // A monitor's own events.
    | { type: 'monitor.turn'; turn: number; prompt: string; inbox: number }
    | { type: 'monitor.sleep'; turn: number; until: string; reason: string; nextPrompt: string }
    | { type: 'monitor.wake'; cause: 'timer' | 'inject' | 'wake' | 'resume' }
    | { type: 'monitor.injected'; message: string; queued: number }
    | { type: 'monitor.paused' }
    | { type: 'monitor.resumed' }
    | { type: 'monitor.warning'; message: string }
    | { type: 'monitor.turn_failed'; turn: number; attempt: number; error: string; errorType?: string; action: 'retry' | 'skip' | 'abort' }
  );

export type RunEventType = RunEvent['type'];

/** Distributes Omit over a union, so each event variant keeps its own fields. */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type NewRunEvent = DistributiveOmit<RunEvent, 'seq' | 'at'>;
