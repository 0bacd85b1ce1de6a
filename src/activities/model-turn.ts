import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { parseModelName } from '../core/agent-spec.js';
import type { AgentDefinition } from '../core/define.js';
import { ErrorTypes, ProviderError } from '../core/errors.js';
import type { Message } from '../core/messages.js';
import type { ModelProvider } from '../core/model.js';
import { parseJsonAnswer } from '../core/output.js';
import type { ModelTurnInput, ModelTurnResult, OutputCheck } from '../workflows/activity-types.js';
import { transcriptQuery } from '../workflows/api.js';
import { ProviderConfigError } from '../providers/errors.js';
import { runKey, type ConversationCache } from './conversation-cache.js';
import type { AgentRegistry } from './registry.js';

export interface ModelTurnDeps {
  registry: AgentRegistry;
  providers: { get(provider: string): ModelProvider };
  cache: ConversationCache;
  client: Client;
}

export function createModelTurn(deps: ModelTurnDeps) {
  return async function modelTurn(input: ModelTurnInput): Promise<ModelTurnResult> {
    const ctx = Context.current();
    const agent = deps.registry.get(input.agent);
    const messages = await conversation(deps, input.messageCount);
    try {
      const { provider: providerName, model } = parseModelName(agent.spec.model);
      const provider = deps.providers.get(providerName);
      const response = await provider.generate({
        model,
        system: agent.spec.instructions,
        messages,
        tools: agent.spec.tools,
        outputSchema: agent.spec.outputSchema,
        settings: agent.spec.modelSettings,
        signal: ctx.cancellationSignal,
      });
      const result: ModelTurnResult = { message: response.message, usage: response.usage, stopReason: response.stopReason };
      if (agent.output && !response.message.toolCalls?.length) result.output = checkOutput(agent, response.message.content);
      return result;
    } catch (err) {
      throw toFailure(err, ctx.info.attempt);
    }
  };
}

/** The run's first `count` messages: from the worker's cache, or by querying the run. */
async function conversation(deps: ModelTurnDeps, count: number): Promise<Message[]> {
  const execution = Context.current().info.workflowExecution;
  if (!execution) throw ApplicationFailure.nonRetryable('modelTurn runs only as part of an agentRun workflow.');
  const { workflowId, runId } = execution;
  const key = runKey(workflowId, runId);
  const cached = deps.cache.read(key, count);
  if (cached) return cached;
  const from = deps.cache.size(key);
  const missing = await deps.client.workflow
    .getHandle(workflowId, runId)
    .query(transcriptQuery, { from, to: count });
  deps.cache.append(key, from, missing);
  const all = deps.cache.read(key, count);
  if (!all) {
    throw ApplicationFailure.retryable(
      `Could not read the first ${count} messages of run ${workflowId}; the run answered with ${from + missing.length}.`,
    );
  }
  return all;
}

function checkOutput(agent: AgentDefinition, text: string): OutputCheck {
  const parsed = parseJsonAnswer(text);
  if (!parsed.ok) return { valid: false, error: parsed.error };
  const checked = agent.output!.safeParse(parsed.value);
  if (checked.success) return { valid: true, value: checked.data };
  return {
    valid: false,
    error: checked.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`).join('; '),
  };
}

/** Provider errors were classified by the adapter; here they become Temporal's retry decisions. */
function toFailure(err: unknown, attempt: number): unknown {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof ProviderError) {
    if (!err.retryable) {
      return ApplicationFailure.create({
        type: err instanceof ProviderConfigError ? ErrorTypes.Config : ErrorTypes.ProviderRequest,
        nonRetryable: true,
        message: err.message,
        details: [{ provider: err.provider, status: err.status ?? null }],
      });
    }
    return ApplicationFailure.create({
      type: ErrorTypes.ProviderTransient,
      message: `${err.message} (attempt ${attempt}; will retry)`,
      details: [{ provider: err.provider, status: err.status ?? null }],
      // The provider said when to come back: no earlier attempt than that.
      ...(err.retryAfterMs !== undefined && { nextRetryDelay: err.retryAfterMs }),
    });
  }
  if (err instanceof Error && /^Invalid model /.test(err.message)) {
    return ApplicationFailure.create({ type: ErrorTypes.Config, nonRetryable: true, message: err.message });
  }
  return err;
}
