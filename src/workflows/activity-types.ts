/**
 * The contract between the workflow and its activities: names, inputs and outputs, plain JSON.
 * Both sides import it; nothing else lives here.
 */
import type { AgentSpec } from '../core/agent-spec.js';
import type { ApprovalRequest } from '../core/approval.js';
import type { Tripwire } from '../core/guardrails.js';
import type { HookEvent } from '../core/hooks.js';
import type { PermissionMode } from '../core/permissions/index.js';
import type { StageDecision } from '../core/tool-gate.js';
import type { JsonValue } from '../core/json.js';
import type { AssistantMessage, Message, ToolCall, ToolResultMessage } from '../core/messages.js';
import type { StopReason } from '../core/model.js';
import type { HandoffView, RunOverrides } from '../core/run.js';
import type { StateChanges, StateValues } from '../core/state.js';
import type { StreamOptions } from '../core/stream.js';
import type { Usage } from '../core/usage.js';

export interface ResolveAgentInput {
  agent: string;
  context?: JsonValue;
  /** The run's state: it fills the static instructions' `{key}` placeholders; instruction functions read it. */
  state?: StateValues;
  overrides?: RunOverrides;
}

/**
 * The version of the run's state that an activity reads (from the worker's cache, else by query
 * or from history), when the run has state. Its writes come back as `stateChanges`.
 */
export interface StateRef {
  state?: number;
}

/** What an activity wrote to the state, when it wrote anything. */
export interface StateWrites {
  stateChanges?: StateChanges;
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
  /** After a handoff with an input filter: the messages before `at` are seen through it. */
  handoff?: HandoffView;
  /** The run streams: publish the model's deltas to its stream, batched so. Absent when it does not. */
  stream?: StreamOptions;
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

export interface ToolCallInput extends StateRef {
  agent: string;
  turn: number;
  call: ToolCall;
  /** The run's context, when it has one. */
  context?: JsonValue;
  /** The recorded spec's fingerprint, when stages after the call (hooks, output guardrails) need it. */
  spec?: string;
  /** The run's permission mode, for the hooks' input. */
  mode?: PermissionMode;
  /** A client tool's result, which a client sent: only the stages after the call run, on it. */
  answered?: { content: string; isError?: boolean };
}

/** A tool call's result; a tool output guardrail that tripped ends the run. */
export type ToolCallResult = ToolResultMessage & StateWrites & { tripped?: Tripwire; hookErrors?: string[] };

/** The worker-side stages before a call: PreToolUse hooks, middleware, the policy, tool input guardrails. */
export interface CheckToolCallInput extends StateRef {
  agent: string;
  /** The recorded spec's fingerprint. */
  spec: string;
  turn: number;
  call: ToolCall;
  mode: PermissionMode;
  remembered?: string[];
  context?: JsonValue;
  /** An approval edited the arguments: only the policy and the guardrails look again. */
  recheck?: true;
}

export interface CheckToolCallResult extends StateWrites {
  decision?: 'allow' | 'ask' | 'deny';
  /** The stage that gave the decision, and why. */
  stage?: string;
  reason?: string;
  /** The arguments as the stages rewrote them, when they did. */
  arguments?: Record<string, unknown>;
  /** Every stage's answer, for the run's events. */
  steps: StageDecision[];
  /** The tool's `requiresApproval(args)`, when it is a function. */
  requiresApproval?: boolean;
  /** The tool's `permissionKey(args)`, when it has one. */
  key?: string;
  tripped?: Tripwire;
  hookErrors?: string[];
}

/** A run's input or final answer, checked by the agent's guardrails. */
export interface CheckGuardrailsInput extends StateRef {
  agent: string;
  spec: string;
  kind: 'input' | 'output';
  text: string;
  output?: unknown;
  context?: JsonValue;
}

export interface CheckGuardrailsResult {
  tripped?: Tripwire;
}

/** Hooks of the run's own events (UserPromptSubmit, Stop, SessionStart, SessionEnd). */
export interface RunHooksInput extends StateRef {
  agent: string;
  spec: string;
  event: HookEvent;
  /** The event's fields, as Claude Code names them (prompt, stop_hook_active, source, reason). */
  fields: Record<string, JsonValue>;
  mode?: PermissionMode;
}

export interface RunHooksResult extends StateWrites {
  decision?: 'allow' | 'ask' | 'deny' | 'block';
  reason?: string;
  additionalContext?: string;
  /** A hook said `"continue": false`, with this reason: the run stops. */
  stop?: string;
  errors: string[];
}

/** A handoff the model asked for: the source's `onHandoff` check, then the target's spec. */
export interface ResolveHandoffInput {
  from: string;
  to: string;
  tool: string;
  input: Record<string, unknown>;
  context?: JsonValue;
  /** The run's state (a local activity: its input is not recorded), for the target's instructions. */
  state?: StateValues;
}

export type ResolveHandoffResult = { spec: AgentSpec } | { refused: string };

/** A call that needs approval, put to the worker's approver function first. */
export type ApproveCallInput = Omit<ApprovalRequest, 'workflowId' | 'context'> & { context?: JsonValue };

/** The approver's answer; no decision leaves the call to a person. */
export interface ApproveCallResult {
  decision?: 'allow' | 'deny';
  reason?: string;
  arguments?: Record<string, unknown>;
  remember?: boolean;
}

export interface AgentActivities {
  /** The agent's spec for a run: overrides applied, instructions evaluated. A string is a name (older runs). */
  resolveAgent(input: ResolveAgentInput | string): Promise<AgentSpec>;
  /** Instructions that are a function of the state, evaluated again after the state changed. */
  resolveInstructions(input: ResolveAgentInput): Promise<{ instructions: string }>;
  modelTurn(input: ModelTurnInput): Promise<ModelTurnResult>;
  toolCall(input: ToolCallInput): Promise<ToolCallResult>;
  checkToolCall(input: CheckToolCallInput): Promise<CheckToolCallResult>;
  checkGuardrails(input: CheckGuardrailsInput): Promise<CheckGuardrailsResult>;
  runHooks(input: RunHooksInput): Promise<RunHooksResult>;
  approveCall(input: ApproveCallInput): Promise<ApproveCallResult>;
  resolveHandoff(input: ResolveHandoffInput): Promise<ResolveHandoffResult>;
  turnEnd(input: TurnEndInput): Promise<TurnEndResult>;
  readConversation(input: ReadConversationInput): Promise<ReadConversationResult>;
}

/** Messages of another session (a fork's source), or of an earlier execution of this one, read by the worker. */
export interface ReadConversationInput {
  workflowId: string;
  runId?: string;
  from: number;
  to: number;
}

/** A page of them, at most about 1 MB: `messages[0]` is message `from`; read on from `from + messages.length`. */
export interface ReadConversationResult {
  from: number;
  messages: Message[];
}

/** The agent's onTurnEnd, asked when the model answered without tool calls. */
export interface TurnEndInput extends StateRef {
  agent: string;
  spec: string;
  turn: number;
  answer: string;
  context?: JsonValue;
}

/** `input`: the next user message, which continues the loop; absent: the answer stands. */
export interface TurnEndResult extends StateWrites {
  input?: string;
}
