/**
 * The contract between the workflow and its activities: names, inputs and outputs, plain JSON.
 * Both sides import it; nothing else lives here.
 */
import type { AgentSpec } from '../core/agent-spec.js';
import type { JsonValue } from '../core/json.js';
import type { AssistantMessage, ToolCall, ToolResultMessage } from '../core/messages.js';
import type { StopReason } from '../core/model.js';
import type { RunOverrides } from '../core/run.js';
import type { Usage } from '../core/usage.js';

export interface ResolveAgentInput {
  agent: string;
  context?: JsonValue;
  overrides?: RunOverrides;
}

export interface ModelTurnInput {
  /** The agent in charge. */
  agent: string;
  turn: number;
  /** The model sees the run's first `messageCount` messages; it reads them from the worker's cache. */
  messageCount: number;
  /**
   * Fingerprint of the spec the run recorded for this agent (`specHash`). A worker whose own
   * agent differs asks the run for the recorded spec, so the model sees what the run recorded.
   * Absent in runs recorded before it existed.
   */
  spec?: string;
  /**
   * Compaction: the model sees the first message, then the messages from this index on (the
   * ones between are left out, with a marker). Absent: all of them.
   */
  from?: number;
}

export type OutputCheck = { valid: true; value: unknown } | { valid: false; error: string };

export interface ModelTurnResult {
  message: AssistantMessage;
  usage: Usage;
  stopReason: StopReason;
  /**
   * The answer was cut off at the output token limit (`stopReason` is `'max_tokens'`): its text
   * may end mid-sentence and its last tool call's arguments are likely incomplete. Absent when
   * the answer is whole.
   */
  truncated?: true;
  /** For an agent with an output schema, a final answer checked against it. */
  output?: OutputCheck;
}

export interface ToolCallInput {
  agent: string;
  turn: number;
  call: ToolCall;
  /** The run's context, when it has one. */
  context?: JsonValue;
}

export interface AgentActivities {
  /** The agent's spec for a run: overrides applied, instructions evaluated. A string is a name (older runs). */
  resolveAgent(input: ResolveAgentInput | string): Promise<AgentSpec>;
  modelTurn(input: ModelTurnInput): Promise<ModelTurnResult>;
  toolCall(input: ToolCallInput): Promise<ToolResultMessage>;
}
