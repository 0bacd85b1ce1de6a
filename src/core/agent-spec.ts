import type { BackgroundSpec } from './background.js';
import type { GuardrailNames } from './guardrails.js';
import type { HandoffSpec } from './handoff.js';
import type { HooksConfig } from './hooks.js';
import type { JsonSchema } from './json-schema.js';
import type { PermissionSettings } from './permissions/index.js';

/**
 * Retry policy for an activity, in the JSON form Temporal accepts.
 * Durations are milliseconds or strings such as '1s', '2 minutes'.
 */
export interface RetrySettings {
  initialInterval?: number | string;
  backoffCoefficient?: number;
  maximumInterval?: number | string;
  maximumAttempts?: number;
}

export interface ModelSettings {
  temperature?: number;
  maxTokens?: number;
  /** Stream the response from the provider (the result is the same; it arrives as it is produced). */
  stream?: boolean;
  /** One HTTP attempt's limit; the model activity's start-to-close timeout is a little longer. Default 120 s. */
  timeoutMs?: number;
  /**
   * The model activity's heartbeat timeout: a worker lost during a model call is noticed after
   * this long, and the call retried on another worker. The activity heartbeats every second
   * while the call is pending, so a slow answer is never cut by it. Default 10 s.
   */
  heartbeatTimeoutMs?: number;
  /** Retries of the model turn activity. Default: 1 s initial, x2, at most 60 s apart, no attempt limit. */
  retry?: RetrySettings;
  /**
   * The longest a provider's `Retry-After` may hold back the next attempt; a longer one is
   * capped to this, and the attempt's failure says so. Default 5 minutes.
   */
  maxRetryAfterMs?: number;
}

/** What the workflow and the model need to know about a tool; the code that runs it stays in the worker. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments, generated from the tool's zod schema. */
  parameters: JsonSchema;
  /**
   * The tool changes nothing: plan mode lets it run. Read-only calls may also run in parallel
   * (`concurrent` defaults to it).
   */
  readOnly: boolean;
  /**
   * Consecutive calls of a turn that are all concurrent run in parallel; any other call runs
   * alone. Absent, it is `readOnly` (specs recorded before this field kept concurrency there).
   * Recorded only when it differs from `readOnly`.
   */
  concurrent?: boolean;
  /**
   * Start-to-close timeout of one attempt of the tool activity, in milliseconds (default 60 s);
   * for a client tool, how long the run waits for a client's answer (default 5 minutes).
   */
  timeoutMs?: number;
  /**
   * `client`: the tool runs on the client attached to the run, not on a worker. The run
   * publishes the call and waits for a client's answer (the `clientToolResult` Update).
   */
  runsOn?: 'client';
  /** JSON Schema of a client tool's output: a client's answer that does not match is refused. */
  outputSchema?: JsonSchema;
  /** Retries of a tool that throws. Without it a throwing tool returns an error result at once. */
  retry?: RetrySettings;
  /**
   * Heartbeat timeout of the tool activity, in milliseconds (default 10 s). keel heartbeats for
   * the tool while it runs, so a lost worker is noticed this soon, and a cancel arrives.
   */
  heartbeatTimeoutMs?: number;
  /** A longer result reaches the model cut to this many UTF-8 bytes, with a marker. Default 64 KB. */
  maxResultBytes?: number;
  /**
   * A call waits for approval unless a stage allowed it: `true` always, `'dynamic'` when the
   * tool's function of the arguments says so (evaluated on the worker).
   */
  requiresApproval?: boolean | 'dynamic';
  /** The tool has a `permissionKey(args)` function: `tool(pattern)` rules match its answer. */
  permissionKey?: boolean;
  /** The tool edits files: the `acceptEdits` mode allows it. */
  editsFiles?: boolean;
  /** Approval timeout and default for this tool's calls (over the agent's). */
  approval?: ApprovalSettings;
  /** Names of the tool's own guardrails (checked besides the agent's tool guardrails). */
  guardrails?: Pick<GuardrailNames, 'toolInput' | 'toolOutput'>;
  /** A handoff tool: calling it hands the run to this agent (the workflow answers it). */
  handoff?: string;
  /** A sub-agent tool: a call runs this agent as a child workflow and returns its answer. */
  subAgent?: string;
}

/** How long a call waits for a person, and what it gets then. */
export interface ApprovalSettings {
  /** Without a decision within this many milliseconds the call gets `default`. Without it: no limit. */
  timeoutMs?: number;
  /** The decision at the timeout. Default `deny`. */
  default?: 'allow' | 'deny';
}

/**
 * The serializable description of an agent, resolved by name at the start of a run and
 * recorded in its history, so a later change to the code never alters a run being replayed.
 */
export interface AgentSpec {
  name: string;
  description: string;
  instructions: string;
  /**
   * The instructions are a function that read the run's state: the run evaluates them again
   * before a turn when the state has changed since (the `resolveInstructions` local activity).
   */
  instructionsFromState?: true;
  /** `provider:model`, for example `openai:gpt-4.1`, `anthropic:claude-sonnet-4-5`, `demo:weather`. */
  model: string;
  tools: ToolSpec[];
  maxTurns: number;
  /** JSON Schema of the structured final answer, when the agent has one. */
  outputSchema?: JsonSchema;
  /** How many invalid final answers are sent back to the model before the run fails. */
  outputRetries: number;
  /** The run ends as soon as one of these tools has run; its result is the run's output. */
  stopAtTools: string[];
  modelSettings: ModelSettings;
  /** Permission rules and mode, in Claude Code's syntax. */
  permissions?: PermissionSettings;
  /** Hooks in Claude Code's configuration format. */
  hooks?: HooksConfig;
  /** A hook that crashes or times out denies (or blocks) instead of being logged. */
  hooksFailClosed?: boolean;
  /** The agent's middleware, in order; `beforeCall` when it decides calls before they run. */
  middleware?: { name: string; beforeCall: boolean }[];
  /** Names of the agent's guardrails, by kind. */
  guardrails?: GuardrailNames;
  /** Approval timeout and default for the agent's calls. */
  approval?: ApprovalSettings;
  /** The worker that resolved the spec has an approver function: calls needing approval ask it first. */
  approver?: boolean;
  /** Working directory of the agent's hooks and relative path rules (absolute). */
  cwd?: string;
  /** The agents this one can hand the run to; their tools are in `tools` (with `handoff` set). */
  handoffs?: HandoffSpec[];
  /** At most this many handoffs in a run while this agent is in charge (default 10). */
  maxHandoffs?: number;
  /** How deep sub-agents may nest below a run of this agent (default 5; the smallest limit above applies). */
  maxDepth?: number;
  /** Sub-agents' events are forwarded into this run's event log. */
  forwardSubAgentEvents?: boolean;
  /** The agent may start background agents (its spawn_agent, list_agents, check_agent and stop_agent tools). */
  background?: BackgroundSpec;
  /** Conditions checked after a turn's tool calls: when one holds, the run ends completed. */
  stopWhen?: StopCondition[];
  /** The agent has an `onTurnEnd` function: an answer without tool calls asks it whether to go on. */
  continuesOnTurnEnd?: boolean;
}

/**
 * A condition that ends a run after a turn's tool calls (plain JSON, recorded with the spec):
 * a tool ran (without error), the run took this many turns, or used this many tokens.
 */
export type StopCondition = { toolCalled: string } | { turns: number } | { totalTokens: number };

export const DEFAULT_MAX_TURNS = 10;
export const DEFAULT_OUTPUT_RETRIES = 2;

/** Split `provider:model` into its parts, with an error that says what a valid name looks like. */
export function parseModelName(model: string): { provider: string; model: string } {
  const i = model.indexOf(':');
  if (i <= 0 || i === model.length - 1) {
    throw new Error(
      `Invalid model "${model}": expected "provider:model", for example "openai:gpt-4.1", "anthropic:claude-sonnet-4-5" or "demo:weather".`,
    );
  }
  return { provider: model.slice(0, i), model: model.slice(i + 1) };
}
