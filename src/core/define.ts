import { msToNumber, type Duration } from '@temporalio/common/lib/time.js';
import { z } from 'zod';
import {
  DEFAULT_MAX_TURNS,
  DEFAULT_OUTPUT_RETRIES,
  parseModelName,
  type AgentSpec,
  type ApprovalSettings,
  type ModelSettings,
  type RetrySettings,
  type StopCondition,
  type ToolSpec,
} from './agent-spec.js';
import {
  BACKGROUND_TOOLS,
  DEFAULT_BACKGROUND_DEPTH,
  DEFAULT_MAX_CONCURRENT,
  DEFAULT_SPAWN_BUDGETS,
  backgroundTools,
  type BackgroundSpec,
} from './background.js';
import type { GuardrailDefinition, GuardrailKind, GuardrailNames } from './guardrails.js';
import type { MonitorBudgets } from './monitor.js';
import { handoff, handoffToolName, type AgentRef, type HandoffDefinition, type HandoffSpec } from './handoff.js';
import type { HooksConfig } from './hooks.js';
import { checkHooksConfig, checkPermissionSettings } from './schemas.js';
import type { JsonValue } from './json.js';
import type { JsonSchema } from './json-schema.js';
import type { MiddlewareDefinition } from './middleware.js';
import type { PermissionSettings } from './permissions/index.js';
import type { StateAccess } from './state.js';
import { stopConditionProblem } from './stop-when.js';

/** The largest tool result a tool may allow itself: half of Temporal's 2 MB payload limit. */
const MAX_RESULT_BYTES = 1024 * 1024;

/** What a tool's `execute` gets besides its arguments. */
export interface ToolContext {
  /** The agent in charge of the run when the model asked for the call. */
  agent: string;
  /** The run's workflow ID: the same across continue-as-new. */
  workflowId: string;
  /** Temporal's run ID of the execution the call belongs to. */
  runId: string;
  turn: number;
  callId: string;
  /** The run's `context`, as given at start (plain JSON), or undefined. */
  context: JsonValue | undefined;
  /**
   * The run's state: `get(key)`, `set(key, value)`, `delete(key)`. Writes (plain JSON only) reach
   * the run when the call finishes, and later calls, turns and handoff targets see them.
   */
  state: StateAccess;
  /**
   * Aborted when the tool activity is cancelled (the run was cancelled). Stop then: keel waits
   * a few seconds for the tool to end before it reports the call cancelled.
   */
  signal: AbortSignal;
  /**
   * keel heartbeats for the tool while it runs; call this only to record progress details
   * (a retried attempt reads them back from Temporal).
   */
  heartbeat(details?: unknown): void;
}

/** What instructions given as a function get: evaluated once, at the start of a run, and recorded. */
export interface InstructionsContext {
  agent: string;
  context: JsonValue | undefined;
  /** The run's state when the run starts (or is handed to this agent); read-only here. */
  state: StateAccess;
}

export interface ToolOptions<S extends z.ZodType> {
  name: string;
  description: string;
  input: S;
  /** The tool's code, on the worker. A client tool (`runsOn: 'client'`) has none: its code is the client's. */
  execute?(args: z.output<S>, ctx: ToolContext): unknown;
  /**
   * Where the tool runs: on the worker (default, with `execute`), or on the client attached to
   * the run (`'client'`, without `execute`): the run publishes the call and waits for a client
   * to answer it (see `RunHandle.serveClientTools`). Recorded in the spec.
   */
  runsOn?: 'worker' | 'client';
  /** A client tool's output schema: a client's answer that does not match is refused. */
  output?: z.ZodType;
  /** The tool changes nothing: plan mode lets it run, and its calls may run in parallel. Default false. */
  readOnly?: boolean;
  /**
   * Its calls may run in parallel with the other concurrent calls of a turn (consecutive ones, in
   * the model's order). Default: `readOnly`. Only that: a concurrent tool that changes things is
   * still denied in plan mode; `concurrent: false` makes a read-only tool run alone.
   */
  concurrent?: boolean;
  /**
   * One attempt's limit: milliseconds or a string such as '30s' or '5 minutes'. Default 60 s.
   * For a client tool: how long the run waits for a client's answer (default 5 minutes); then
   * the model gets an error result.
   */
  timeout?: Duration;
  retry?: RetrySettings;
  /** How soon a lost worker (or a cancel) is noticed while the tool runs. Default 10 s. */
  heartbeatTimeout?: Duration;
  /** A longer result reaches the model cut to this many UTF-8 bytes, with a marker. Default 64 KB, at most 1 MB. */
  maxResultBytes?: number;
  /**
   * Calls wait for a person's (or the worker's approver's) decision unless a permission rule,
   * hook or middleware allowed them: always (`true`), or when this function of the arguments
   * says so (run on the worker, its answer recorded).
   */
  requiresApproval?: boolean | ((args: z.output<S>, ctx: ApprovalContext) => boolean | Promise<boolean>);
  /** The string `name(pattern)` permission rules match against, for example a URL or a command. */
  permissionKey?(args: z.output<S>): string;
  /** The tool edits files: the `acceptEdits` permission mode allows it without asking. */
  editsFiles?: boolean;
  /** How long a call waits for approval and what it gets then (over the agent's setting). */
  approval?: ApprovalOptions;
  /** Guardrails of this tool's calls, named as on an agent: `toolInput` on the arguments before it runs, `toolOutput` on its result after. */
  guardrails?: ToolGuardrails;
}

/** A tool's guardrails. The kinds are named as on an agent (`guardrails.toolInput` there checks every tool's calls). */
export interface ToolGuardrails {
  toolInput?: GuardrailDefinition[];
  toolOutput?: GuardrailDefinition[];
  /** @deprecated The same as `toolInput`, its earlier name. */
  input?: GuardrailDefinition[];
  /** @deprecated The same as `toolOutput`, its earlier name. */
  output?: GuardrailDefinition[];
}

/** What a `requiresApproval` function gets besides the arguments. */
export interface ApprovalContext {
  agent: string;
  context: JsonValue | undefined;
}

export interface ApprovalOptions {
  /** Without a decision within this time (milliseconds or a string such as '1h') the call gets `default`. */
  timeout?: Duration;
  /** Default `deny`. */
  default?: 'allow' | 'deny';
}

export interface ToolDefinition<S extends z.ZodType = z.ZodType> extends ToolOptions<S> {
  readonly kind: 'tool';
  readonly spec: ToolSpec;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export function defineTool<S extends z.ZodType>(options: ToolOptions<S>): ToolDefinition<S> {
  if (!TOOL_NAME.test(options.name)) {
    throw new Error(
      `Invalid tool name "${options.name}": use 1 to 64 letters, digits, "_" or "-" (the providers accept nothing else).`,
    );
  }
  const guardrails = options.guardrails !== undefined ? toolGuardrails(options.guardrails, `tool "${options.name}"`) : undefined;
  const onClient = runsOnClient(options);
  return {
    ...options,
    ...(guardrails && { guardrails }),
    kind: 'tool',
    spec: {
      name: options.name,
      description: options.description,
      parameters: toJsonSchema(options.input, `tool "${options.name}"`),
      readOnly: options.readOnly ?? false,
      ...(options.concurrent !== undefined && options.concurrent !== (options.readOnly ?? false) && { concurrent: options.concurrent }),
      ...(options.timeout !== undefined && { timeoutMs: durationMs(options.timeout, `tool "${options.name}": timeout`) }),
      ...(options.retry !== undefined && { retry: options.retry }),
      ...(options.heartbeatTimeout !== undefined && {
        heartbeatTimeoutMs: durationMs(options.heartbeatTimeout, `tool "${options.name}": heartbeatTimeout`),
      }),
      ...(options.maxResultBytes !== undefined && { maxResultBytes: resultLimit(options) }),
      ...(options.requiresApproval !== undefined &&
        options.requiresApproval !== false && { requiresApproval: typeof options.requiresApproval === 'function' ? 'dynamic' : true }),
      ...(options.permissionKey !== undefined && { permissionKey: checkFunction(options.permissionKey, `tool "${options.name}": permissionKey`) }),
      ...(options.editsFiles && { editsFiles: true }),
      ...(options.approval !== undefined && { approval: approvalSettings(options.approval, `tool "${options.name}": approval`) }),
      ...(guardrails && { guardrails: guardrailNames(guardrails, `tool "${options.name}"`) }),
      ...(onClient && { runsOn: 'client' as const }),
      ...(options.output !== undefined && { outputSchema: toJsonSchema(options.output, `output of tool "${options.name}"`) }),
    },
  };
}

/** Whether the tool runs on the client; what a definition gives must fit where it runs. */
function runsOnClient(options: ToolOptions<z.ZodType>): boolean {
  const where = `Tool "${options.name}"`;
  if (options.runsOn !== undefined && options.runsOn !== 'worker' && options.runsOn !== 'client') {
    throw new Error(`${where}: runsOn must be "worker" or "client", got ${JSON.stringify(options.runsOn)}.`);
  }
  if (options.runsOn !== 'client') {
    if (typeof options.execute !== 'function') {
      throw new Error(`${where} has no execute function: give it one, or runsOn: 'client' for a tool that the client attached to the run executes.`);
    }
    if (options.output !== undefined) throw new Error(`${where}: output (a schema of the answer a client sends) is for client tools only (runsOn: 'client').`);
    return false;
  }
  if (options.execute !== undefined) {
    throw new Error(`${where} runs on the client (runsOn: 'client'), so it has no execute function on the worker: remove execute, and give its code to the client (serveClientTools, keel run --tools).`);
  }
  // These describe the tool activity, which a client tool does not have.
  for (const key of ['retry', 'heartbeatTimeout'] as const) {
    if (options[key] !== undefined) throw new Error(`${where} runs on the client: ${key} applies to tools that run on a worker; remove it (timeout says how long the run waits for the client).`);
  }
  if (options.output !== undefined && !(options.output instanceof z.ZodType)) throw new Error(`${where}: output must be a zod schema.`);
  return true;
}

function checkFunction(fn: unknown, what: string): true {
  if (typeof fn !== 'function') throw new Error(`${what} must be a function.`);
  return true;
}

function approvalSettings(options: ApprovalOptions, what: string): ApprovalSettings {
  if (options.default !== undefined && options.default !== 'allow' && options.default !== 'deny') {
    throw new Error(`${what}: default must be "allow" or "deny", got ${JSON.stringify(options.default)}.`);
  }
  return {
    ...(options.timeout !== undefined && { timeoutMs: durationMs(options.timeout, `${what}: timeout`) }),
    ...(options.default !== undefined && { default: options.default }),
  };
}

/** A tool's guardrails under the agent's names (`input` and `output` are their deprecated aliases). */
function toolGuardrails(given: ToolGuardrails, what: string): { toolInput?: GuardrailDefinition[]; toolOutput?: GuardrailDefinition[] } {
  if (typeof given !== 'object' || given === null) throw new Error(`${what}: guardrails must be an object such as { toolInput: [...], toolOutput: [...] }.`);
  const unknown = Object.keys(given).filter((k) => !['toolInput', 'toolOutput', 'input', 'output'].includes(k));
  if (unknown.length > 0) throw new Error(`${what}: guardrails has no kind "${unknown[0]}"; a tool's kinds are toolInput and toolOutput.`);
  if (given.input && given.toolInput) throw new Error(`${what}: guardrails.input is the old name of guardrails.toolInput; give one of them.`);
  if (given.output && given.toolOutput) throw new Error(`${what}: guardrails.output is the old name of guardrails.toolOutput; give one of them.`);
  const toolInput = given.toolInput ?? given.input;
  const toolOutput = given.toolOutput ?? given.output;
  return { ...(toolInput && { toolInput }), ...(toolOutput && { toolOutput }) };
}

function guardrailNames(given: Partial<Record<GuardrailKind, GuardrailDefinition[] | undefined>>, what: string): GuardrailNames {
  const names: GuardrailNames = {};
  for (const [kind, list] of Object.entries(given) as [GuardrailKind, GuardrailDefinition[] | undefined][]) {
    if (!list?.length) continue;
    for (const g of list) {
      if (g?.kind !== 'guardrail') throw new Error(`${what}: guardrails.${kind} must hold guardrails made with defineGuardrail.`);
    }
    names[kind] = list.map((g) => g.name);
  }
  return names;
}

function resultLimit(options: { name: string; maxResultBytes?: number }): number {
  const n = options.maxResultBytes;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1024 || n > MAX_RESULT_BYTES) {
    throw new Error(
      `Tool "${options.name}": maxResultBytes must be a whole number from 1024 to ${MAX_RESULT_BYTES} (1 MB), got ${n}.`,
    );
  }
  return n;
}

export interface AgentOptions<O extends z.ZodType | undefined = z.ZodType | undefined> {
  name: string;
  description?: string;
  /**
   * The system prompt; or a function of the run's context, evaluated once in an activity at the
   * start of each run and recorded, so the run keeps it whatever the code says later.
   */
  instructions: string | ((ctx: InstructionsContext) => string | Promise<string>);
  model: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tools of any argument type
  tools?: ToolDefinition<any>[];
  maxTurns?: number;
  output?: O;
  outputRetries?: number;
  stopAtTools?: string[];
  modelSettings?: ModelSettings;
  /** Permission rules (Claude Code syntax) and mode: which calls run, which ask, which are denied. */
  permissions?: PermissionSettings;
  /** Hooks in Claude Code's format (`{ PreToolUse: [{ matcher, hooks: [...] }] }`), or loaded with `loadClaudeSettings`. */
  hooks?: HooksConfig;
  /** A hook that crashes or times out denies the call instead of being logged. Default false. */
  hooksFailClosed?: boolean;
  /** Policies as functions on the worker, in order: see `defineMiddleware`. */
  middleware?: MiddlewareDefinition[];
  /** Checks that end the run `blocked` when they trip: on its input, its final answer, every tool call. */
  guardrails?: Partial<Record<GuardrailKind, GuardrailDefinition[]>>;
  /** How long calls wait for approval and what they get then. */
  approval?: ApprovalOptions;
  /** Working directory of hooks and of relative path rules. Default: the worker's. */
  cwd?: string;
  /**
   * Agents the model can hand the run to, each as a `transfer_to_<name>` tool: an agent, a
   * `ref('name')` (for cycles), or a `handoff({ agent, input, onHandoff, inputFilter })`.
   */
  handoffs?: (AgentDefinition<any> | AgentRef | HandoffDefinition<any>)[]; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** At most this many handoffs in a run (default 10); more are refused with an error result. */
  maxHandoffs?: number;
  /**
   * Agents the model can call as tools: each call runs the agent as a child workflow (shown
   * under this run in the Temporal UI), without this run's conversation, and returns its answer.
   */
  subAgents?: (AgentDefinition<any> | AgentRef)[]; // eslint-disable-line @typescript-eslint/no-explicit-any
  /**
   * Sub-agent calls run one at a time (default), or in parallel with each other and read-only
   * tools. Only that: whether plan mode lets a sub-agent run depends on what it can do (read-only
   * when it is given as an agent whose tools are all read-only and which hands off to nobody).
   */
  concurrentSubAgents?: boolean;
  /** Add the sub-agents' events to this run's event log (`subagent.event`, with depth and call ID). */
  forwardSubAgentEvents?: boolean;
  /** How deep sub-agents may nest below a run of this agent (default 5; the smallest limit above applies). */
  maxDepth?: number;
  /**
   * Lets the model start agents in the background (spawn_agent, list_agents, check_agent,
   * stop_agent): each a monitor of its own, a child workflow, which reports back.
   */
  background?: BackgroundOptions;
  /**
   * Conditions checked after each turn's tool calls: when one holds, the run ends completed
   * (with the last answer as its output). Plain JSON, recorded with the run's spec.
   */
  stopWhen?: StopCondition | StopCondition[];
  /**
   * When the model answers without tool calls: return input to continue the loop with it as the
   * next user message, or nothing to let the answer stand. Runs on the worker (an activity, so its
   * answer is recorded); bounded by maxTurns.
   */
  onTurnEnd?: (ctx: TurnEndContext) => string | undefined | void | Promise<string | undefined | void>;
}

export interface TurnEndContext {
  agent: string;
  turn: number;
  /** The model's answer: its text, or the structured output as JSON. */
  answer: string;
  /** The run's context. */
  context: JsonValue | undefined;
  /** The run's state, to read and write. */
  state: StateAccess;
  workflowId: string;
}

export interface BackgroundOptions {
  /** The agent spawned agents run as; its tools are the catalog a spawn picks from. Default: this agent. */
  agent?: AgentDefinition<any> | AgentRef; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** At most this many running at once (default 8). */
  maxConcurrent?: number;
  /** How deep background agents may nest (default 2). */
  maxDepth?: number;
  /** Budgets of a spawn that gives none (default 20 turns). */
  budgets?: MonitorBudgets;
  /** When the run ends: cancel the agents it started (default), or let them run. */
  onParentEnd?: 'cancel' | 'continue';
  /** Task queues a spawn may name, to run on other workers (remote agents). */
  taskQueues?: string[];
}

export interface AgentDefinition<O extends z.ZodType | undefined = z.ZodType | undefined> {
  readonly kind: 'agent';
  readonly name: string;
  readonly spec: AgentSpec;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly tools: ReadonlyMap<string, ToolDefinition<any>>;
  readonly output?: O;
  /** Instructions given as a function; `spec.instructions` is then empty until a run evaluates it. */
  readonly instructions?: (ctx: InstructionsContext) => string | Promise<string>;
  readonly middleware: readonly MiddlewareDefinition[];
  /** Every guardrail the agent and its tools name, by name. */
  readonly guardrails: ReadonlyMap<string, GuardrailDefinition>;
  /** The agent's handoffs by tool name (their `onHandoff` checks run on the worker). */
  readonly handoffs: ReadonlyMap<string, HandoffDefinition<any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  readonly onTurnEnd?: AgentOptions['onTurnEnd'];
}

const AGENT_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,63}$/;

export function defineAgent<O extends z.ZodType | undefined = undefined>(options: AgentOptions<O>): AgentDefinition<O> {
  if (!AGENT_NAME.test(options.name)) {
    throw new Error(
      `Invalid agent name "${options.name}": start with a letter or digit, then up to 63 letters, digits, "_", "." or "-" (it becomes part of workflow IDs).`,
    );
  }
  parseModelName(options.model);
  const maxRetryAfterMs = options.modelSettings?.maxRetryAfterMs;
  if (maxRetryAfterMs !== undefined && !(Number.isFinite(maxRetryAfterMs) && maxRetryAfterMs > 0)) {
    throw new Error(`Agent "${options.name}": modelSettings.maxRetryAfterMs must be a positive number of milliseconds, got ${maxRetryAfterMs}.`);
  }
  const heartbeatTimeoutMs = options.modelSettings?.heartbeatTimeoutMs;
  if (heartbeatTimeoutMs !== undefined && !(Number.isFinite(heartbeatTimeoutMs) && heartbeatTimeoutMs >= 1_000)) {
    throw new Error(
      `Agent "${options.name}": modelSettings.heartbeatTimeoutMs must be at least 1000 (milliseconds), got ${heartbeatTimeoutMs}.`,
    );
  }
  const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
  if (!Number.isInteger(maxTurns) || maxTurns < 1) {
    throw new Error(`Agent "${options.name}": maxTurns must be a whole number of at least 1, got ${options.maxTurns}.`);
  }
  const tools = new Map<string, ToolDefinition>();
  for (const tool of options.tools ?? []) {
    if (tools.has(tool.name)) throw new Error(`Agent "${options.name}" has two tools named "${tool.name}".`);
    tools.set(tool.name, tool);
  }
  for (const name of options.stopAtTools ?? []) {
    if (!tools.has(name)) {
      throw new Error(`Agent "${options.name}": stopAtTools names "${name}", which is not one of its tools.`);
    }
  }
  const stopWhen = options.stopWhen === undefined ? [] : Array.isArray(options.stopWhen) ? options.stopWhen : [options.stopWhen];
  for (const c of stopWhen) {
    const problem = stopConditionProblem(c);
    if (problem) throw new Error(`Agent "${options.name}": stopWhen: ${problem}, got ${JSON.stringify(c)}.`);
    if ('toolCalled' in c && !tools.has(c.toolCalled)) throw new Error(`Agent "${options.name}": stopWhen names the tool "${c.toolCalled}", which is not one of its tools.`);
  }
  if (options.onTurnEnd !== undefined && typeof options.onTurnEnd !== 'function') throw new Error(`Agent "${options.name}": onTurnEnd must be a function.`);
  const checked = pipelineSettings(options, tools);
  const handoffs = handoffsOf(options, tools);
  const background = backgroundSpec(options, tools);
  return {
    kind: 'agent',
    name: options.name,
    tools,
    output: options.output,
    ...(typeof options.instructions === 'function' && { instructions: options.instructions }),
    middleware: checked.middleware,
    guardrails: checked.guardrails,
    handoffs: handoffs.byTool,
    ...(options.onTurnEnd && { onTurnEnd: options.onTurnEnd }),
    spec: {
      name: options.name,
      description: options.description ?? '',
      instructions: typeof options.instructions === 'string' ? options.instructions : '',
      model: options.model,
      tools: [
        ...[...tools.values()].map((t) => t.spec),
        ...handoffs.tools,
        ...subAgentTools(options, tools, handoffs.byTool),
        ...(background ? backgroundTools(background.catalog ?? []) : []),
      ],
      maxTurns,
      ...(options.output && { outputSchema: toJsonSchema(options.output, `output of agent "${options.name}"`) }),
      outputRetries: options.outputRetries ?? DEFAULT_OUTPUT_RETRIES,
      stopAtTools: options.stopAtTools ?? [],
      modelSettings: options.modelSettings ?? {},
      ...checked.spec,
      ...(handoffs.specs.length > 0 && { handoffs: handoffs.specs }),
      ...(options.maxHandoffs !== undefined && { maxHandoffs: options.maxHandoffs }),
      ...(options.maxDepth !== undefined && { maxDepth: wholeAtLeast(options.maxDepth, 0, `agent "${options.name}": maxDepth`) }),
      ...(background && { background }),
      ...(options.forwardSubAgentEvents && { forwardSubAgentEvents: true }),
      ...(stopWhen.length > 0 && { stopWhen }),
      ...(options.onTurnEnd && { continuesOnTurnEnd: true }),
    },
  };
}

function backgroundSpec(options: AgentOptions, tools: Map<string, ToolDefinition>): BackgroundSpec | undefined {
  const b = options.background;
  if (!b) return undefined;
  const where = `agent "${options.name}": background`;
  for (const name of BACKGROUND_TOOLS) if (tools.has(name)) throw new Error(`${where}: the agent has a tool named "${name}", which background agents need.`);
  const base = b.agent;
  if (base !== undefined && base?.kind !== 'agent' && base?.kind !== 'ref') throw new Error(`${where}.agent must be an agent or ref('name').`);
  if (b.onParentEnd !== undefined && b.onParentEnd !== 'cancel' && b.onParentEnd !== 'continue') {
    throw new Error(`${where}.onParentEnd must be "cancel" or "continue".`);
  }
  // Without a base agent, spawns run as this agent: its own tools are the catalog.
  const catalog = base === undefined ? [...tools.keys()] : base.kind === 'agent' ? base.spec.tools.map((t) => t.name) : undefined;
  return {
    agent: base?.name ?? options.name,
    maxConcurrent: wholeAtLeast(b.maxConcurrent ?? DEFAULT_MAX_CONCURRENT, 1, `${where}.maxConcurrent`),
    maxDepth: wholeAtLeast(b.maxDepth ?? DEFAULT_BACKGROUND_DEPTH, 1, `${where}.maxDepth`),
    budgets: b.budgets ?? DEFAULT_SPAWN_BUDGETS,
    onParentEnd: b.onParentEnd ?? 'cancel',
    taskQueues: b.taskQueues ?? [],
    ...(catalog && { catalog }),
  };
}

function wholeAtLeast(n: number, min: number, what: string): number {
  if (!Number.isInteger(n) || n < min) throw new Error(`${what} must be a whole number of at least ${min}, got ${n}.`);
  return n;
}

/** A tool per sub-agent: named after it, taking the task as `input`. */
function subAgentTools(options: AgentOptions, tools: Map<string, ToolDefinition>, handoffs: ReadonlyMap<string, unknown>): ToolSpec[] {
  const where = `agent "${options.name}"`;
  return (options.subAgents ?? []).map((agent) => {
    if (agent?.kind !== 'agent' && agent?.kind !== 'ref') throw new Error(`${where}: subAgents must hold agents or ref('name').`);
    const name = agent.name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
    if (tools.has(name) || handoffs.has(name)) throw new Error(`${where} has a tool named "${name}" besides its sub-agent "${agent.name}".`);
    const description = agent.kind === 'agent' && agent.spec.description ? agent.spec.description : `Ask the agent "${agent.name}" to do a task; it answers with its result.`;
    // Read-only (plan mode lets it run) only when all it can do is read; parallel only when asked for,
    // even then: one at a time by default, since sub-agents may have effects whose order matters.
    const readOnly = subAgentReadOnly(agent);
    const concurrent = options.concurrentSubAgents === true;
    return {
      name,
      description,
      parameters: {
        type: 'object',
        properties: { input: { type: 'string', description: `The task for ${agent.name}, with everything it needs: it does not see this conversation.` } },
        required: ['input'],
        additionalProperties: false,
      },
      readOnly,
      ...(concurrent !== readOnly && { concurrent }),
      subAgent: agent.name,
    } as ToolSpec;
  });
}

/**
 * A sub-agent changes nothing when it is given as an agent (a ref's tools are unknown here) whose
 * tools are all read-only, its own sub-agents' included (by this rule), and which hands off to
 * nobody (a handoff's tool is read-only, the agent it hands to need not be).
 */
function subAgentReadOnly(agent: AgentDefinition<any> | AgentRef): boolean { // eslint-disable-line @typescript-eslint/no-explicit-any
  if (agent.kind !== 'agent') return false;
  return !agent.spec.handoffs?.length && agent.spec.tools.every((t) => t.readOnly);
}

/** The agent's handoffs: their tools for the model, what the spec records, the checks by tool. */
function handoffsOf(options: AgentOptions, tools: Map<string, ToolDefinition>) {
  const where = `agent "${options.name}"`;
  const byTool = new Map<string, HandoffDefinition<any>>(); // eslint-disable-line @typescript-eslint/no-explicit-any
  const specs: HandoffSpec[] = [];
  const toolSpecs: ToolSpec[] = [];
  if (options.maxHandoffs !== undefined && !(Number.isInteger(options.maxHandoffs) && options.maxHandoffs >= 0)) {
    throw new Error(`${where}: maxHandoffs must be a whole number, 0 or more, got ${options.maxHandoffs}.`);
  }
  for (const given of options.handoffs ?? []) {
    const h: HandoffDefinition<any> = // eslint-disable-line @typescript-eslint/no-explicit-any
      given?.kind === 'handoff' ? given : given?.kind === 'agent' || given?.kind === 'ref' ? handoff({ agent: given }) : (undefined as never);
    if (!h) throw new Error(`${where}: handoffs must hold agents, ref('name') or handoff({...}).`);
    const tool = h.toolName ?? handoffToolName(h.agent.name);
    if (!TOOL_NAME.test(tool)) throw new Error(`${where}: invalid handoff tool name "${tool}".`);
    if (tools.has(tool) || byTool.has(tool)) throw new Error(`${where} has two tools named "${tool}" (a handoff's tool and another).`);
    const description =
      h.description ?? `Hand the conversation to the agent "${h.agent.name}"${h.agent.kind === 'agent' && h.agent.spec.description ? `: ${h.agent.spec.description}` : '.'}`;
    byTool.set(tool, h);
    specs.push({ tool, agent: h.agent.name, filter: h.inputFilter ?? 'all', check: h.onHandoff !== undefined });
    // Read-only: a call only asks for the handoff, which happens after the turn (plan mode allows it).
    toolSpecs.push({ name: tool, description, parameters: handoffParameters(h.input), readOnly: true, handoff: h.agent.name });
  }
  return { byTool, specs, tools: toolSpecs };
}

/** The pipeline settings of an agent, checked, and what its spec records of them. */
function pipelineSettings(options: AgentOptions, tools: Map<string, ToolDefinition>) {
  const where = `agent "${options.name}"`;
  const middleware = options.middleware ?? [];
  const seen = new Set<string>();
  for (const m of middleware) {
    if (m?.kind !== 'middleware') throw new Error(`${where}: middleware must hold middleware made with defineMiddleware.`);
    if (seen.has(m.name)) throw new Error(`${where} has two middleware named "${m.name}".`);
    seen.add(m.name);
  }
  const guardrails = new Map<string, GuardrailDefinition>();
  const collect = (list: GuardrailDefinition[] | undefined) => {
    for (const g of list ?? []) {
      const other = guardrails.get(g.name);
      if (other && other !== g) throw new Error(`${where}: two different guardrails are named "${g.name}".`);
      guardrails.set(g.name, g);
    }
  };
  const names = guardrailNames(options.guardrails ?? {}, where);
  for (const list of Object.values(options.guardrails ?? {})) collect(list);
  for (const tool of tools.values()) {
    collect(tool.guardrails?.toolInput);
    collect(tool.guardrails?.toolOutput);
  }
  if (options.cwd !== undefined && !(typeof options.cwd === 'string' && options.cwd.startsWith('/'))) {
    throw new Error(`${where}: cwd must be an absolute path, got ${JSON.stringify(options.cwd)}.`);
  }
  if (options.hooksFailClosed !== undefined && typeof options.hooksFailClosed !== 'boolean') {
    throw new Error(`${where}: hooksFailClosed must be true or false.`);
  }
  const spec: Partial<AgentSpec> = {
    ...(options.permissions !== undefined && { permissions: checkPermissionSettings(options.permissions, `${where}: permissions`) }),
    ...(options.hooks !== undefined && { hooks: checkHooksConfig(options.hooks, `${where}: hooks`) }),
    ...(options.hooksFailClosed && { hooksFailClosed: true }),
    ...(middleware.length > 0 && { middleware: middleware.map((m) => ({ name: m.name, beforeCall: m.beforeCall !== undefined })) }),
    ...(Object.keys(names).length > 0 && { guardrails: names }),
    ...(options.approval !== undefined && { approval: approvalSettings(options.approval, `${where}: approval`) }),
    ...(options.cwd !== undefined && { cwd: options.cwd }),
  };
  return { middleware, guardrails, spec };
}

function toJsonSchema(schema: z.ZodType, what: string): JsonSchema {
  try {
    // zod 4's own converter; `input` describes what the model must send, before transforms.
    const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'throw' }) as JsonSchema;
    delete json.$schema;
    return json;
  } catch (err) {
    throw new Error(`Cannot describe the schema of ${what} as JSON Schema: ${(err as Error).message}`);
  }
}

function durationMs(value: Duration, what: string): number {
  let ms: number;
  try {
    ms = msToNumber(value);
  } catch {
    ms = NaN;
  }
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new Error(`${what} must be a positive duration (milliseconds, or a string such as '30s'), got ${JSON.stringify(value)}.`);
  }
  return ms;
}

/** The parameters of a handoff tool: its input schema, or no arguments. */
export function handoffParameters(input: z.ZodType | undefined): JsonSchema {
  if (!input) return { type: 'object', properties: {}, additionalProperties: false } as JsonSchema;
  const json = z.toJSONSchema(input, { io: 'input', unrepresentable: 'throw' }) as JsonSchema;
  delete (json as { $schema?: unknown }).$schema;
  return json;
}
