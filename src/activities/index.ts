import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { parseModelName, type AgentSpec } from '../core/agent-spec.js';
import { ErrorTypes } from '../core/errors.js';
import type { ModelProvider } from '../core/model.js';
import type { AgentActivities, ResolveAgentInput } from '../workflows/activity-types.js';
import { ConversationCache } from './conversation-cache.js';
import { createModelTurn } from './model-turn.js';
import type { AgentRegistry } from './registry.js';
import { createToolCall } from './tool-call.js';

export { AgentRegistry } from './registry.js';
export { ConversationCache, runKey } from './conversation-cache.js';

export interface ActivityDeps {
  registry: AgentRegistry;
  providers: { get(provider: string): ModelProvider };
  client: Client;
  cache?: ConversationCache;
}

export function createActivities(deps: ActivityDeps): AgentActivities {
  const cache = deps.cache ?? new ConversationCache();
  return {
    resolveAgent: (input) => resolveAgent(deps.registry, input),
    modelTurn: createModelTurn({ ...deps, cache, specs: new Map() }),
    toolCall: createToolCall(deps.registry),
  };
}

/** The spec a run records: the agent's, with the run's overrides applied and its instructions evaluated. */
async function resolveAgent(registry: AgentRegistry, input: ResolveAgentInput | string): Promise<AgentSpec> {
  const { agent: name, context, overrides } = typeof input === 'string' ? { agent: input } : input;
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
  if (agent.instructions) {
    let text: unknown;
    try {
      text = await agent.instructions({ agent: agent.name, context });
    } catch (err) {
      // Retried (a few times, as local activities are): the function may read something that comes back.
      throw ApplicationFailure.create({
        type: ErrorTypes.InvalidInput,
        message: `The instructions of agent "${agent.name}" failed for this run's context: ${(err as Error)?.message ?? err}`,
      });
    }
    if (typeof text !== 'string') throw invalid(`The instructions function of agent "${agent.name}" must return a string.`);
    spec.instructions = text;
  }
  return spec;
}

function invalid(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: ErrorTypes.InvalidInput, nonRetryable: true, message });
}
