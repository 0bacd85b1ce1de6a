import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { parseModelName } from '../core/agent-spec.js';
import { cutOffOutputError } from '../core/cut-off.js';
import type { AgentDefinition } from '../core/define.js';
import type { Message } from '../core/messages.js';
import type { ModelProvider, ModelResponse } from '../core/model.js';
import { parseJsonAnswer } from '../core/output.js';
import type { ModelTurnInput, ModelTurnResult, OutputCheck } from '../workflows/activity-types.js';
import { transcriptQuery, workerProblemSignal, type WorkerProblem } from '../workflows/api.js';
import { ProviderConfigError } from '../providers/errors.js';
import { runKey, type ConversationCache } from './conversation-cache.js';
import { keepAlive } from './keep-alive.js';
import { attemptMemory, modelFailure } from './model-failure.js';
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
    const memory = attemptMemory(ctx.info.heartbeatDetails);
    // Heartbeats carry what the next attempt must know (see model-failure.ts).
    const stopHeartbeats = keepAlive(ctx, () => memory);
    let agent: AgentDefinition | undefined;
    try {
      agent = deps.registry.get(input.agent);
      const messages = await conversation(deps, input.messageCount);
      const { provider: providerName, model } = modelName(agent.spec.model);
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
      return turnResult(agent, response);
    } catch (err) {
      // Cancelled (the run was cancelled, or the attempt is gone): report it as a cancellation.
      if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? err;
      const failed = modelFailure(err, {
        attempt: ctx.info.attempt,
        retryPolicy: ctx.info.retryPolicy,
        maxRetryAfterMs: agent?.spec.modelSettings.maxRetryAfterMs,
        memory,
      });
      if (failed.workerProblem) await reportWorkerProblem(deps.client, failed.workerProblem);
      // The last heartbeat's details go with the failure to the next attempt.
      ctx.heartbeat(failed.memory);
      throw failed.failure;
    } finally {
      stopHeartbeats();
    }
  };
}

/** `provider:model` of the agent; a bad one is the worker's configuration problem. */
function modelName(name: string): { provider: string; model: string } {
  try {
    return parseModelName(name);
  } catch (err) {
    throw new ProviderConfigError((err as Error).message, name.split(':')[0] ?? '');
  }
}

function turnResult(agent: AgentDefinition, response: ModelResponse): ModelTurnResult {
  const result: ModelTurnResult = { message: response.message, usage: response.usage, stopReason: response.stopReason };
  if (response.stopReason === 'max_tokens') result.truncated = true;
  if (agent.output && !response.message.toolCalls?.length) {
    result.output = result.truncated
      ? { valid: false, error: cutOffOutputError(agent.spec.modelSettings.maxTokens) }
      : checkOutput(agent, response.message.content);
  }
  return result;
}

/**
 * Tells the run what holds it up, for its current details. Best effort: a signal that fails
 * changes nothing about the activity's own outcome.
 */
async function reportWorkerProblem(client: Client, problem: WorkerProblem): Promise<void> {
  const ctx = Context.current();
  const execution = ctx.info.workflowExecution;
  if (!execution) return;
  try {
    await client.workflow.getHandle(execution.workflowId, execution.runId).signal(workerProblemSignal, problem);
  } catch (err) {
    ctx.log.warn('Could not tell the run about a worker problem', { error: (err as Error)?.message ?? String(err) });
  }
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
