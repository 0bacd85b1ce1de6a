import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { parseModelName, type AgentSpec } from '../core/agent-spec.js';
import type { AgentDefinition } from '../core/define.js';
import { ErrorTypes, ProviderError } from '../core/errors.js';
import type { Message } from '../core/messages.js';
import type { ModelProvider } from '../core/model.js';
import { parseJsonAnswer } from '../core/output.js';
import type { ModelTurnInput, ModelTurnResult, OutputCheck } from '../workflows/activity-types.js';
import { specQuery } from '../workflows/api.js';
import { readMessages } from '../client/run-chain.js';
import { specHash, stableJson } from '../core/spec-hash.js';
import { ProviderConfigError } from '../providers/errors.js';
import { runKey, type ConversationCache } from './conversation-cache.js';
import type { AgentRegistry } from './registry.js';

export interface ModelTurnDeps {
  registry: AgentRegistry;
  providers: { get(provider: string): ModelProvider };
  cache: ConversationCache;
  client: Client;
  /** Specs runs recorded, by fingerprint, fetched once per worker. */
  specs?: Map<string, AgentSpec>;
}

export function createModelTurn(deps: ModelTurnDeps) {
  return async function modelTurn(input: ModelTurnInput): Promise<ModelTurnResult> {
    const ctx = Context.current();
    const agent = deps.registry.serving(input.agent);
    const spec = await recordedSpec(deps, agent, input.spec);
    const messages = await conversation(deps, input.messageCount);
    try {
      const { provider: providerName, model } = parseModelName(spec.model);
      const provider = deps.providers.get(providerName);
      const response = await provider.generate({
        model,
        system: spec.instructions,
        messages,
        tools: spec.tools,
        outputSchema: spec.outputSchema,
        settings: spec.modelSettings,
        signal: ctx.cancellationSignal,
      });
      const result: ModelTurnResult = { message: response.message, usage: response.usage, stopReason: response.stopReason };
      if (spec.outputSchema && !response.message.toolCalls?.length) {
        result.output = checkOutput(outputSchema(agent, spec), response.message.content);
      }
      return result;
    } catch (err) {
      throw toFailure(err, ctx.info.attempt);
    }
  };
}

function execution(): { workflowId: string; runId: string } {
  const execution = Context.current().info.workflowExecution;
  if (!execution) throw ApplicationFailure.nonRetryable('modelTurn runs only as part of an agentRun workflow.');
  return execution;
}

/**
 * The spec the run recorded for the agent: one run, one spec, whatever the worker's code says
 * today. The worker's own when the fingerprints match; else asked of the run, once per worker.
 */
async function recordedSpec(deps: ModelTurnDeps, agent: AgentDefinition, hash: string | undefined): Promise<AgentSpec> {
  if (hash === undefined || specHash(agent.spec) === hash) return agent.spec;
  const known = deps.specs?.get(hash);
  if (known) return known;
  const { workflowId, runId } = execution();
  const spec = await deps.client.workflow.getHandle(workflowId, runId).query(specQuery, hash);
  if (!spec) {
    throw ApplicationFailure.nonRetryable(`Run ${workflowId} recorded no agent spec with fingerprint ${hash}.`, ErrorTypes.Config);
  }
  deps.specs?.set(hash, spec);
  return spec;
}

/**
 * The schema a final answer is checked against: the agent's zod schema when the run recorded
 * the same JSON Schema (zod keeps refinements that JSON Schema loses), else the recorded one.
 */
function outputSchema(agent: AgentDefinition, spec: AgentSpec): z.ZodType {
  if (agent.output && agent.spec.outputSchema && stableJson(agent.spec.outputSchema) === stableJson(spec.outputSchema)) {
    return agent.output;
  }
  return z.fromJSONSchema(spec.outputSchema as Parameters<typeof z.fromJSONSchema>[0]);
}

/** The run's first `count` messages: from the worker's cache, or by querying the run. */
async function conversation(deps: ModelTurnDeps, count: number): Promise<Message[]> {
  const { workflowId, runId } = execution();
  const key = runKey(workflowId, runId);
  const cached = deps.cache.read(key, count);
  if (cached) return cached;
  const from = deps.cache.size(key);
  const missing = await readMessages(deps.client.workflow, workflowId, runId, from, count);
  deps.cache.append(key, from, missing);
  const all = deps.cache.read(key, count);
  if (!all) {
    throw ApplicationFailure.retryable(
      `Could not read the first ${count} messages of run ${workflowId}; the run answered with ${from + missing.length}.`,
    );
  }
  return all;
}

function checkOutput(schema: z.ZodType, text: string): OutputCheck {
  const parsed = parseJsonAnswer(text);
  if (!parsed.ok) return { valid: false, error: parsed.error };
  const checked = schema.safeParse(parsed.value);
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
