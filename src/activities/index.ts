import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { parseModelName, type AgentSpec } from '../core/agent-spec.js';
import { ErrorTypes } from '../core/errors.js';
import type { ModelProvider } from '../core/model.js';
import type { Approver } from '../core/approval.js';
import { PERMISSION_MODES } from '../core/permissions/index.js';
import { MissingStateKey, StateView, fillTemplate, type StateValues } from '../core/state.js';
import type { AgentActivities, ResolveAgentInput, ResolveHandoffInput, ResolveHandoffResult } from '../workflows/activity-types.js';
import { createChecks } from './checks.js';
import { ConversationCache } from './conversation-cache.js';
import { ConversationReader, type WorkflowBundle } from './conversation-reader.js';
import { StateCache } from './state-reader.js';
import { createModelTurn } from './model-turn.js';
import type { AgentRegistry } from './registry.js';
import { createToolCall } from './tool-call.js';
import { turnEnd } from './turn-end.js';
import { createReadConversation } from './read-conversation.js';

export { AgentRegistry } from './registry.js';
export { ConversationCache, runKey } from './conversation-cache.js';
export { ConversationReader, type WorkflowBundle } from './conversation-reader.js';
export { StateCache } from './state-reader.js';

export interface ActivityDeps {
  registry: AgentRegistry;
  providers: { get(provider: string): ModelProvider };
  client: Client;
  cache?: ConversationCache;
  /** Each run's latest state, filled by the workflow's `state` sink. */
  stateCache?: StateCache;
  /** The workflow code, for reading a run's conversation from its history without a worker. */
  /** keel's workflow code, for replays of a run's history on a cache miss (or how to get it, once). */
  workflowBundle?: WorkflowBundle | (() => Promise<WorkflowBundle>);
  /** Decides calls that need approval before a person is asked. */
  approver?: Approver;
}

export function createActivities(deps: ActivityDeps): AgentActivities {
  const cache = deps.cache ?? new ConversationCache();
  const stateCache = deps.stateCache ?? new StateCache();
  // Specs runs recorded, by fingerprint: asked of a run once per worker.
  const specs = new Map<string, AgentSpec>();
  const reader = new ConversationReader(deps.client, deps.workflowBundle);
  const state = { stateCache, reader, client: deps.client };
  return {
    resolveAgent: (input) => resolveAgent(deps.registry, input, deps.approver !== undefined),
    resolveInstructions: async (input) => ({ instructions: (await resolveAgent(deps.registry, input, deps.approver !== undefined)).instructions }),
    modelTurn: createModelTurn({ ...deps, cache, specs, reader }),
    toolCall: createToolCall({ ...deps, specs, state }),
    ...createChecks({ ...deps, specs, state }),
    resolveHandoff: (input) => resolveHandoff(deps.registry, input, deps.approver !== undefined),
    turnEnd: (input) => turnEnd(deps.registry, input, state),
    readConversation: createReadConversation(reader, deps.client),
  };
}

/** The spec a run records: the agent's, with the run's overrides applied and its instructions evaluated. */
async function resolveAgent(registry: AgentRegistry, input: ResolveAgentInput | string, approver: boolean): Promise<AgentSpec> {
  const { agent: name, context, overrides, state } = typeof input === 'string' ? { agent: input } : input;
  if (typeof name !== 'string') throw invalid('The agent name must be a string.');
  const agent = registry.get(name);
  const spec: AgentSpec = { ...agent.spec };
  if (overrides?.model !== undefined) {
    try {
      parseModelName(String(overrides.model));
    } catch (err) {
      throw invalid(`Invalid model override: ${(err as Error).message}`);
    }
    spec.model = overrides.model;
  }
  if (overrides?.maxTurns !== undefined) {
    if (!Number.isInteger(overrides.maxTurns) || overrides.maxTurns < 1) {
      throw invalid(`Invalid maxTurns override ${JSON.stringify(overrides.maxTurns)}: a whole number of at least 1.`);
    }
    spec.maxTurns = overrides.maxTurns;
  }
  if (overrides?.instructions !== undefined) {
    if (typeof overrides.instructions !== 'string') throw invalid('The instructions override must be a string.');
    spec.instructions = overrides.instructions;
  }
  if (overrides?.tools !== undefined) {
    const unknown = (Array.isArray(overrides.tools) ? overrides.tools : [String(overrides.tools)]).filter((t) => !agent.tools.has(t));
    if (unknown.length > 0 || !Array.isArray(overrides.tools)) {
      throw invalid(`Agent "${agent.name}" has no tool ${unknown.map((t) => `"${t}"`).join(', ')}; it has: ${[...agent.tools.keys()].join(', ') || 'none'}.`);
    }
    spec.tools = spec.tools.filter((t) => !agent.tools.has(t.name) || overrides.tools!.includes(t.name));
  }
  if (overrides?.permissionMode !== undefined) {
    if (!PERMISSION_MODES.includes(overrides.permissionMode)) {
      throw invalid(`Invalid permissionMode override ${JSON.stringify(overrides.permissionMode)}: use one of ${PERMISSION_MODES.join(', ')}.`);
    }
    spec.permissions = { ...spec.permissions, mode: overrides.permissionMode };
  }
  // Hooks and relative path rules work in a directory: the agent's, else this worker's, recorded.
  if ((spec.hooks || spec.permissions) && spec.cwd === undefined) spec.cwd = spec.permissions?.cwd ?? process.cwd();
  if (spec.permissions && spec.permissions.cwd === undefined) spec.permissions = { ...spec.permissions, cwd: spec.cwd! };
  if (approver && agentMayAsk(spec)) spec.approver = true;
  if (agent.instructions && overrides?.instructions === undefined) {
    let text: unknown;
    try {
      const view = new StateView(state ?? {}, READ_ONLY_IN_INSTRUCTIONS);
      text = await agent.instructions({ agent: agent.name, context, state: view });
      if (view.read) spec.instructionsFromState = true;
    } catch (err) {
      // Retried (a few times, as local activities are): the function may read something that comes back.
      throw ApplicationFailure.create({
        type: ErrorTypes.InvalidInput,
        message: `The instructions of agent "${agent.name}" failed for this run's context: ${(err as Error)?.message ?? err}`,
      });
    }
    if (typeof text !== 'string') throw invalid(`The instructions function of agent "${agent.name}" must return a string.`);
    spec.instructions = text;
  } else {
    // Static instructions (the agent's, or an override) are a template of the run's state.
    spec.instructions = filledInstructions(agent.name, spec.instructions, state ?? {});
  }
  return spec;
}

const READ_ONLY_IN_INSTRUCTIONS = "instructions read the run's state; write it from a tool, middleware or onTurnEnd.";

/** `{key}` placeholders filled from the state; a required key it lacks fails the run, naming the key. */
function filledInstructions(agent: string, text: string, state: StateValues): string {
  try {
    return fillTemplate(text, state);
  } catch (err) {
    if (!(err instanceof MissingStateKey)) throw err;
    throw invalid(
      `The instructions of agent "${agent}" use {${err.key}}, but the run's state has no "${err.key}". ` +
        `Give it in the run's state at start (for example "state": {"${err.key}": "..."}), or write {${err.key}?} to make it optional.`,
    );
  }
}

/**
 * A handoff the model asked for: the source agent's `onHandoff` check (a message refuses it),
 * then the target's spec, resolved as a run's is and recorded by the run.
 */
async function resolveHandoff(registry: AgentRegistry, input: ResolveHandoffInput, approver: boolean): Promise<ResolveHandoffResult> {
  const source = registry.serving(input.from);
  const h = source.handoffs.get(input.tool);
  if (h?.onHandoff) {
    const parsed = h.input ? h.input.safeParse(input.input) : { success: true as const, data: input.input };
    if (!parsed.success) return { refused: `its input is invalid: ${parsed.error.message}` };
    let answer: string | void;
    try {
      answer = await h.onHandoff(parsed.data as never, {
        from: input.from,
        to: input.to,
        workflowId: Context.current().info.workflowExecution?.workflowId ?? '',
        context: input.context,
      });
    } catch (err) {
      answer = (err as Error)?.message ?? String(err);
    }
    if (typeof answer === 'string' && answer !== '') return { refused: answer };
  }
  if (!registry.find(input.to)) {
    return { refused: `this worker has no agent "${input.to}" (it serves ${registry.names().join(', ')}).` };
  }
  const target = { agent: input.to, ...(input.context !== undefined && { context: input.context }), ...(input.state && { state: input.state }) };
  try {
    return { spec: await resolveAgent(registry, target, approver) };
  } catch (err) {
    // The target's instructions need a state key the run lacks: the model hears why, the run goes on.
    if (err instanceof ApplicationFailure && err.type === ErrorTypes.InvalidInput) return { refused: err.message };
    throw err;
  }
}

/** Whether any call of the agent can need approval: only then does the approver matter to its runs. */
function agentMayAsk(spec: AgentSpec): boolean {
  return Boolean(spec.permissions || spec.hooks || spec.middleware?.length || spec.tools.some((t) => t.requiresApproval));
}

function invalid(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: ErrorTypes.InvalidInput, nonRetryable: true, message });
}
