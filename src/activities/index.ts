import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { AgentSpec } from '../core/agent-spec.js';
import type { ModelProvider } from '../core/model.js';
import type { AgentActivities } from '../workflows/activity-types.js';
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
    async resolveAgent(name: string): Promise<AgentSpec> {
      if (typeof name !== 'string') throw ApplicationFailure.nonRetryable('The agent name must be a string.');
      return deps.registry.get(name).spec;
    },
    modelTurn: createModelTurn({ ...deps, cache }),
    toolCall: createToolCall(deps.registry),
  };
}
