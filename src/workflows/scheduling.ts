/** How the loop schedules its activities: timeouts, heartbeats, retries, cancellation, summaries for the UI. */
import { ActivityCancellationType, proxyActivities, type ActivityOptions, type RetryPolicy } from '@temporalio/workflow';
import type { AgentSpec, RetrySettings, ToolSpec } from '../core/agent-spec.js';
import { ErrorTypes } from '../core/errors.js';
import type { ToolCall } from '../core/messages.js';
import { oneLine } from '../core/text.js';
import type { AgentActivities } from './activity-types.js';

const DEFAULT_MODEL_TIMEOUT_MS = 120_000;
const DEFAULT_TOOL_TIMEOUT_MS = 60_000;
/**
 * Model and tool activities heartbeat every second: a lost worker is noticed this long after its
 * last heartbeat, and a cancel reaches the activity about as soon.
 */
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 10_000;

/** Provider outages are waited out: unlimited attempts, at most a minute apart. */
const DEFAULT_MODEL_RETRY: RetryPolicy = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '60s' };

export function modelActivity(spec: AgentSpec, turn: number): Pick<AgentActivities, 'modelTurn'> {
  const settings = spec.modelSettings;
  return proxyActivities<AgentActivities>({
    // A little over the HTTP timeout, so the provider's own timeout is the one that fires.
    startToCloseTimeout: (settings.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS) + 5_000,
    heartbeatTimeout: settings.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS,
    // A cancelled run waits until the model call has stopped.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: {
      ...DEFAULT_MODEL_RETRY,
      ...retryPolicy(settings.retry),
      // Not KeelConfigError: a worker's configuration problem is retried until the worker is fixed.
      nonRetryableErrorTypes: [ErrorTypes.ProviderRequest, ErrorTypes.UnknownAgent],
    },
    summary: `turn ${turn} · ${spec.model}`,
  });
}

export function toolActivity(tool: ToolSpec | undefined, call: ToolCall): Pick<AgentActivities, 'toolCall'> {
  const options: ActivityOptions = {
    startToCloseTimeout: tool?.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    heartbeatTimeout: tool?.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS,
    // A cancelled run waits until the tool has stopped (or its grace period passed).
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    // Parallel calls of one tool differ by their arguments: show them, in short.
    summary: `tool ${call.name} ${oneLine(call.arguments, 60)}`.trimEnd(),
  };
  // Without a retry setting a throwing tool returns an error result at once; the default policy
  // still retries what is not the tool's fault: a lost worker, a timeout.
  if (tool?.retry) options.retry = retryPolicy(tool.retry);
  return proxyActivities<AgentActivities>(options);
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

/**
 * The worker-side checks of a call or a run (hooks, middleware, guardrails): a hook may take a
 * minute, a guardrail may call a model. They heartbeat, so a lost worker is noticed at once; a
 * check that keeps throwing fails the run after a few attempts, with its error, rather than
 * letting a call through unchecked.
 */
export function checkActivities(summary: string): Pick<AgentActivities, 'checkToolCall' | 'checkGuardrails' | 'runHooks'> {
  return proxyActivities<AgentActivities>({
    // Longer than the longest hook may take (Claude Code's default hook timeout is 10 minutes).
    startToCloseTimeout: '15 minutes',
    heartbeatTimeout: DEFAULT_HEARTBEAT_TIMEOUT_MS,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5, nonRetryableErrorTypes: [ErrorTypes.InvalidInput] },
    summary,
  });
}

/** The worker's approver function: it may ask someone, so it has time; it heartbeats meanwhile. */
export function approverActivity(call: ToolCall): Pick<AgentActivities, 'approveCall'> {
  return proxyActivities<AgentActivities>({
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: DEFAULT_HEARTBEAT_TIMEOUT_MS,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 3 },
    summary: `approver · ${call.name}`,
  });
}

/** The agent's onTurnEnd: a function of the worker's; a few attempts, then the run fails with its error. */
export function turnEndActivity(): Pick<AgentActivities, 'turnEnd'> {
  return proxyActivities<AgentActivities>({
    startToCloseTimeout: '5 minutes',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 3 },
    summary: 'turn end',
  });
}

/** Reading a conversation of another session (a fork's source) or of an earlier execution: queries or replays, on the worker. */
export function conversationActivity(summary: string): Pick<AgentActivities, 'readConversation'> {
  return proxyActivities<AgentActivities>({
    startToCloseTimeout: '5 minutes',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 10 },
    summary,
  });
}
