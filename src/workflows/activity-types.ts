/** Inputs and outputs of the activities the agent loop schedules. Plain JSON. */
import type { AgentSpec } from '../core/agent-spec.js';
import type { AssistantMessage, ToolCall, ToolResultMessage } from '../core/messages.js';
import type { StopReason } from '../core/model.js';
import type { Usage } from '../core/usage.js';

export interface ModelTurnInput {
  agent: string;
  turn: number;
  /** The model sees the run's first `messageCount` messages; it reads them from the worker's cache. */
  messageCount: number;
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
}

export interface AgentActivities {
  resolveAgent(name: string): Promise<AgentSpec>;
  modelTurn(input: ModelTurnInput): Promise<ModelTurnResult>;
  toolCall(input: ToolCallInput): Promise<ToolResultMessage>;
}
