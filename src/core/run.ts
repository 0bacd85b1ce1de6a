import type { AgentSpec } from './agent-spec.js';
import type { Message, ToolCall } from './messages.js';
import type { Usage } from './usage.js';

/** Where a run is. Also the value of the `KeelStatus` search attribute. */
export type RunStatus = 'running' | 'completed' | 'max_turns' | 'failed' | 'cancelled';

export const TERMINAL_STATUSES: readonly RunStatus[] = ['completed', 'max_turns', 'failed', 'cancelled'];

/** Input of the `agentRun` workflow. Plain JSON: any Temporal client can start a run. */
export interface AgentRunInput {
  /** Name of a registered agent. */
  agent: string;
  /** The user's prompt. */
  input: string;
  options?: RunOptions;
  /** Set by the workflow itself when it continues as new; never by a caller. */
  continued?: ContinuedState;
}

export interface RunOptions {
  /** Continue as new once the history has this many events (default 10,000). */
  continueAsNewAfterEvents?: number;
}

/** What a run carries into its next execution when it continues as new. */
export interface ContinuedState {
  /** The spec the run started with: one run, one spec, across its whole chain. */
  spec: AgentSpec;
  messages: Message[];
  events: RunEvent[];
  turns: number;
  usage: Usage;
  outputAttempts: number;
}

/** Result of the `agentRun` workflow. */
export interface AgentRunResult {
  status: Extract<RunStatus, 'completed' | 'max_turns'>;
  /** The final answer: text, or the parsed structured output when the agent has an output schema. */
  output: unknown;
  usage: Usage;
  turns: number;
  agent: string;
}

/** Answer of the `status` query. */
export interface RunState {
  agent: string;
  status: RunStatus;
  turns: number;
  usage: Usage;
  /** Number of messages in the transcript. */
  messages: number;
  /** Sequence number of the last event. */
  lastSeq: number;
}

interface EventBase {
  seq: number;
  /** ISO time, from the workflow's deterministic clock. */
  at: string;
}

/**
 * One entry of a run's event log. The log is workflow state, exposed by the `events` query:
 * it costs no history events. CLI, tests and benchmarks all read it.
 */
export type RunEvent = EventBase &
  (
    | { type: 'run.started'; agent: string; model: string; input: string }
    | { type: 'turn.started'; turn: number }
    | {
        type: 'turn.finished';
        turn: number;
        text: string;
        toolCalls: ToolCall[];
        usage: Usage;
        /** The answer was cut off at the output token limit: its tool calls were not run. */
        truncated?: true;
      }
    | { type: 'tool.requested'; turn: number; callId: string; tool: string; arguments: string }
    | { type: 'tool.started'; turn: number; callId: string; tool: string }
    | { type: 'tool.finished'; turn: number; callId: string; tool: string; result: string; isError: boolean }
    | { type: 'output.invalid'; turn: number; error: string; attempt: number }
    | { type: 'run.continued'; turns: number }
    | { type: 'run.finished'; status: RunStatus; output?: unknown; error?: string }
  );

export type RunEventType = RunEvent['type'];

/** Distributes Omit over a union, so each event variant keeps its own fields. */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type NewRunEvent = DistributiveOmit<RunEvent, 'seq' | 'at'>;
