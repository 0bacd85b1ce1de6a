import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { parseModelName, type AgentSpec } from '../core/agent-spec.js';
import { cutOffOutputError } from '../core/cut-off.js';
import { filterForHandoff } from '../core/handoff.js';
import type { AgentDefinition } from '../core/define.js';
import { MODEL_ANSWER_BYTES, boundText } from '../core/limits.js';
import type { Message } from '../core/messages.js';
import type { ModelDelta, ModelProvider, ModelResponse } from '../core/model.js';
import { parseJsonAnswer } from '../core/output.js';
import { stableJson } from '../core/spec-hash.js';
import type { ModelTurnInput, ModelTurnResult, OutputCheck } from '../workflows/activity-types.js';
import { workerProblemSignal, type WorkerProblem } from '../workflows/api.js';
import { ProviderConfigError } from '../providers/errors.js';
import { runKey, type ConversationCache } from './conversation-cache.js';
import type { ConversationReader } from './conversation-reader.js';
import { execution, recordedSpec } from './recorded-spec.js';
import { keepAlive } from './keep-alive.js';
import { deltaPublisher } from './stream-publisher.js';
import { attemptMemory, modelFailure } from './model-failure.js';
import type { AgentRegistry } from './registry.js';

export interface ModelTurnDeps {
  registry: AgentRegistry;
  providers: { get(provider: string): ModelProvider };
  cache: ConversationCache;
  /** Reads what the cache lacks from the run's history (or, on a first attempt, by a query). */
  reader: ConversationReader;
  client: Client;
  /** Specs runs recorded, by fingerprint, fetched once per worker. */
  specs?: Map<string, AgentSpec>;
}

export function createModelTurn(deps: ModelTurnDeps) {
  return async function modelTurn(input: ModelTurnInput): Promise<ModelTurnResult> {
    const ctx = Context.current();
    const memory = attemptMemory(ctx.info.heartbeatDetails);
    // Heartbeats carry what the next attempt must know (see model-failure.ts).
    const stopHeartbeats = keepAlive(ctx, () => memory);
    let spec: AgentSpec | undefined;
    const publisher = deltaPublisher(input.turn, input.stream);
    try {
      const agent = deps.registry.serving(input.agent);
      spec = await recordedSpec(deps, agent, input.spec);
      const all = input.from ? await compacted(deps, input.from, input.messageCount) : await conversation(deps, input.messageCount);
      // After a handoff with an input filter, the agent in charge sees the earlier conversation through it.
      const messages = input.handoff && !input.from ? filterForHandoff(all, input.handoff.at, input.handoff.filter) : all;
      const { provider: providerName, model } = modelName(spec.model);
      const provider = deps.providers.get(providerName);
      const response = await provider.generate({
        model,
        system: spec.instructions,
        messages,
        tools: spec.tools,
        outputSchema: spec.outputSchema,
        // A streaming run asks the provider to stream, whatever the agent's setting: the answer is the same.
        settings: publisher ? { ...spec.modelSettings, stream: true } : spec.modelSettings,
        signal: ctx.cancellationSignal,
        ...(publisher && { onDelta: (delta: ModelDelta) => publisher.add(delta) }),
      });
      await publisher?.close();
      return turnResult(agent, spec, response);
    } catch (err) {
      publisher?.abandon();
      // Cancelled (the run was cancelled, or the attempt is gone): report it as a cancellation.
      if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? err;
      const failed = modelFailure(err, {
        attempt: ctx.info.attempt,
        retryPolicy: ctx.info.retryPolicy,
        maxRetryAfterMs: spec?.modelSettings.maxRetryAfterMs,
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

function turnResult(agent: AgentDefinition, spec: AgentSpec, response: ModelResponse): ModelTurnResult {
  // Far above any model's output limit; bounded all the same, so no answer can fail the run.
  const content = boundText(response.message.content, MODEL_ANSWER_BYTES, 'answer').text;
  const message = content === response.message.content ? response.message : { ...response.message, content };
  const result: ModelTurnResult = { message, usage: response.usage, stopReason: response.stopReason };
  if (response.stopReason === 'max_tokens') result.truncated = true;
  if (spec.outputSchema && !message.toolCalls?.length) {
    result.output = result.truncated
      ? { valid: false, error: cutOffOutputError(spec.modelSettings.maxTokens) }
      : checkOutput(outputSchema(agent, spec), message.content);
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

/** The run's first `count` messages: from the worker's cache, or read from the run (across continue-as-new). */
async function conversation(deps: ModelTurnDeps, count: number): Promise<Message[]> {
  const [all] = await messages(deps, [[0, count]]);
  return all!;
}

/**
 * The conversation with the turns between the first message and `from` left out: the first
 * message (a monitor's goal), then message `from` on, which says how much was left out.
 */
async function compacted(deps: ModelTurnDeps, from: number, count: number): Promise<Message[]> {
  const [[first], recent] = (await messages(deps, [[0, 1], [from, count]])) as [Message[], Message[]];
  const [head, ...rest] = recent;
  if (!first || !head || head.role !== 'user') return [...(first ? [first] : []), ...recent];
  const marker = `[${from - 1} earlier messages are left out to keep the conversation within its budget.]\n\n`;
  return [first, { ...head, content: marker + head.content }, ...rest];
}

/**
 * Messages `from..to` of this activity's run for each range: from the worker's cache; what it
 * lacks is read (conversation-reader.ts) and kept. Only a first attempt may ask the run by query:
 * a retried one may follow a lost worker, whose sticky queue would hold the query up.
 */
async function messages(deps: ModelTurnDeps, ranges: [number, number][]): Promise<Message[][]> {
  const { workflowId, runId } = execution();
  const key = runKey(workflowId, runId);
  const lacking = [...new Set(ranges.flatMap(([from, to]) => deps.cache.missing(key, from, to)))];
  if (lacking.length > 0) {
    const found = await deps.reader.read(workflowId, runId, lacking, { query: Context.current().info.attempt === 1 });
    for (const [i, m] of found) deps.cache.fill(key, i, [m]);
  }
  return ranges.map(([from, to]) => {
    const read = deps.cache.read(key, from, to);
    if (!read) {
      const missing = deps.cache.missing(key, from, to);
      throw ApplicationFailure.retryable(
        `Could not read messages ${from}..${to - 1} of run ${workflowId}: ${missing.length} of them (from ${missing[0]}) were found neither in the cache nor in the run.`,
      );
    }
    return read;
  });
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
