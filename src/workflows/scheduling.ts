/** How the loop schedules its activities: options, summaries for the UI, parallel read-only tools. */
import { proxyActivities, type ActivityOptions, type RetryPolicy } from '@temporalio/workflow';
import type { AgentSpec, RetrySettings } from '../core/agent-spec.js';
import { ErrorTypes } from '../core/errors.js';
import type { ToolCall, ToolResultMessage } from '../core/messages.js';
import { oneLine } from '../core/text.js';
import type { AgentActivities } from './activity-types.js';

const DEFAULT_MODEL_TIMEOUT_MS = 120_000;
/** A lost worker is noticed this long after its last heartbeat (the model activity beats every second). */
const DEFAULT_MODEL_HEARTBEAT_TIMEOUT_MS = 10_000;
const DEFAULT_TOOL_TIMEOUT_MS = 60_000;

/** Provider outages are waited out: unlimited attempts, at most a minute apart. */
const DEFAULT_MODEL_RETRY: RetryPolicy = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '60s' };

export function modelActivity(spec: AgentSpec, turn: number): Pick<AgentActivities, 'modelTurn'> {
  const settings = spec.modelSettings;
  return proxyActivities<AgentActivities>({
    // A little over the HTTP timeout, so the provider's own timeout is the one that fires.
    startToCloseTimeout: (settings.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS) + 5_000,
    heartbeatTimeout: settings.heartbeatTimeoutMs ?? DEFAULT_MODEL_HEARTBEAT_TIMEOUT_MS,
    retry: {
      ...DEFAULT_MODEL_RETRY,
      ...retryPolicy(settings.retry),
      // Not KeelConfigError: a worker's configuration problem is retried until the worker is fixed.
      nonRetryableErrorTypes: [ErrorTypes.ProviderRequest, ErrorTypes.UnknownAgent],
    },
    summary: `turn ${turn} · ${spec.model}`,
  });
}

function toolActivity(spec: AgentSpec, call: ToolCall): Pick<AgentActivities, 'toolCall'> {
  const tool = spec.tools.find((t) => t.name === call.name);
  const options: ActivityOptions = {
    startToCloseTimeout: tool?.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    // Parallel calls of one tool differ by their arguments: show them, in short.
    summary: `tool ${call.name} ${oneLine(call.arguments, 60)}`.trimEnd(),
  };
  // Without a retry setting a throwing tool returns an error result at once; the default policy
  // still retries what is not the tool's fault: a lost worker, a timeout.
  if (tool?.retry) options.retry = retryPolicy(tool.retry);
  return proxyActivities<AgentActivities>(options);
}

export interface ToolProgress {
  started(call: ToolCall): void;
  finished(result: ToolResultMessage): void;
}

/**
 * Runs one turn's tool calls. Consecutive read-only calls run in parallel; a call that may
 * change something runs alone, in the order the model gave. Results keep the model's order.
 */
export async function runToolCalls(
  spec: AgentSpec,
  turn: number,
  calls: ToolCall[],
  progress: ToolProgress,
): Promise<ToolResultMessage[]> {
  const readOnly = (call: ToolCall) => spec.tools.find((t) => t.name === call.name)?.readOnly ?? false;
  const results: ToolResultMessage[] = [];
  let i = 0;
  while (i < calls.length) {
    const batch = [calls[i]!];
    if (readOnly(calls[i]!)) {
      while (i + batch.length < calls.length && readOnly(calls[i + batch.length]!)) batch.push(calls[i + batch.length]!);
    }
    i += batch.length;
    const done = await Promise.all(
      batch.map(async (call) => {
        progress.started(call);
        const result = await toolActivity(spec, call).toolCall({ agent: spec.name, turn, call });
        progress.finished(result);
        return result;
      }),
    );
    results.push(...done);
  }
  return results;
}

function retryPolicy(retry: RetrySettings | undefined): RetryPolicy {
  if (!retry) return {};
  const policy: RetryPolicy = {};
  if (retry.initialInterval !== undefined) policy.initialInterval = retry.initialInterval as RetryPolicy['initialInterval'];
  if (retry.backoffCoefficient !== undefined) policy.backoffCoefficient = retry.backoffCoefficient;
  if (retry.maximumInterval !== undefined) policy.maximumInterval = retry.maximumInterval as RetryPolicy['maximumInterval'];
  if (retry.maximumAttempts !== undefined) policy.maximumAttempts = retry.maximumAttempts;
  return policy;
}
