/**
 * How the model activity fails: provider errors (classified once, by the adapter) become
 * Temporal's retry decisions. Retry by default; fail the run only for what is known to be the
 * request's fault; a worker's own configuration problem is retried until the worker is fixed;
 * an answer that is not the API's is retried a few times, then fails naming the base URL.
 *
 * What one attempt must tell the next (how many malformed answers so far, the worker problem
 * already reported) travels in the activity's heartbeat details: Temporal hands the last ones
 * of an attempt to the next attempt, and no history event is written for them.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { RetryPolicy } from '@temporalio/common';
import { msOptionalToNumber } from '@temporalio/common/lib/time.js';
import { ErrorTypes, ProviderError } from '../core/errors.js';
import { ProviderConfigError, malformedGiveUpMessage, providerDisplayName } from '../providers/errors.js';
import type { WorkerProblem } from '../workflows/api.js';

/** A model turn whose answers are malformed this many times fails the run. */
export const MAX_MALFORMED_ANSWERS = 5;

/** The longest wait a provider's `Retry-After` can impose, unless `modelSettings.maxRetryAfterMs` says. */
export const DEFAULT_MAX_RETRY_AFTER_MS = 5 * 60_000;

/** What an attempt leaves to the next one, in its heartbeat details. Plain JSON. */
export interface AttemptMemory {
  /** Malformed answers so far, over all attempts of this model turn. */
  malformed?: number;
  /** The worker problem already reported to the run (by signal), so it is reported once. */
  problem?: string;
}

/** The memory an attempt starts with: what the previous attempt left, when it is one. */
export function attemptMemory(heartbeatDetails: unknown): AttemptMemory {
  if (typeof heartbeatDetails !== 'object' || heartbeatDetails === null) return {};
  const d = heartbeatDetails as Record<string, unknown>;
  return {
    ...(typeof d['malformed'] === 'number' && { malformed: d['malformed'] }),
    ...(typeof d['problem'] === 'string' && { problem: d['problem'] }),
  };
}

export interface FailureContext {
  /** This attempt's number, from 1. */
  attempt: number;
  /** The activity's retry policy, as the server gave it (undefined when it did not). */
  retryPolicy?: RetryPolicy;
  /** The longest wait a `Retry-After` may impose (`modelSettings.maxRetryAfterMs`). Default 5 minutes. */
  maxRetryAfterMs?: number;
  memory: AttemptMemory;
}

export interface ModelFailure {
  /** What the activity throws. */
  failure: unknown;
  /** What the next attempt should know. */
  memory: AttemptMemory;
  /** A worker problem the run has not been told about yet: signal it. */
  workerProblem?: WorkerProblem;
}

/** The model activity's failure for an error thrown by a model turn. */
export function modelFailure(err: unknown, context: FailureContext): ModelFailure {
  const { attempt, memory } = context;
  if (err instanceof ApplicationFailure || !(err instanceof ProviderError)) {
    // Anything else that is not an ApplicationFailure is retried by Temporal by default.
    return { failure: err, memory };
  }
  const details = [{ provider: err.provider, status: err.status ?? null }];

  if (err instanceof ProviderConfigError) {
    const problem: WorkerProblem = { type: ErrorTypes.Config, message: err.message };
    return {
      failure: ApplicationFailure.create({
        type: ErrorTypes.Config,
        message:
          `${err.message} This is the worker's configuration, not the run's: fix it and restart the worker; ` +
          `the run waits and resumes with this model turn (attempt ${attempt}; will retry).`,
        details,
      }),
      memory: { ...memory, problem: err.message },
      ...(memory.problem !== err.message && { workerProblem: problem }),
    };
  }

  if (!err.retryable) {
    return {
      failure: ApplicationFailure.create({ type: ErrorTypes.ProviderRequest, nonRetryable: true, message: err.message, details }),
      memory,
    };
  }

  if (err.malformed) {
    const malformed = (memory.malformed ?? 0) + 1;
    const next = { ...memory, malformed };
    if (malformed >= MAX_MALFORMED_ANSWERS) {
      return {
        failure: ApplicationFailure.create({
          type: ErrorTypes.MalformedResponse,
          nonRetryable: true,
          message: malformedGiveUpMessage(err, malformed),
          details,
        }),
        memory: next,
      };
    }
    return {
      failure: ApplicationFailure.create({
        type: ErrorTypes.ProviderTransient,
        message: `${err.message} (attempt ${attempt}; malformed answer ${malformed} of at most ${MAX_MALFORMED_ANSWERS}; will retry)`,
        details,
      }),
      memory: next,
    };
  }

  const delay = retryDelay(err.retryAfterMs, context.retryPolicy, attempt, context.maxRetryAfterMs);
  const P = providerDisplayName(err.provider);
  let when = '';
  if (delay.cappedFromMs !== undefined) {
    when =
      `${delay.delayMs !== undefined ? ` in ${duration(delay.delayMs)}` : ''}: ${P} asked to wait ` +
      `${duration(delay.cappedFromMs)} (Retry-After), capped at ${duration(delay.capMs!)} (modelSettings.maxRetryAfterMs)`;
  } else if (delay.delayMs !== undefined) {
    when = ` in ${duration(delay.delayMs)}, as ${P} asked (Retry-After)`;
  }
  return {
    failure: ApplicationFailure.create({
      type: ErrorTypes.ProviderTransient,
      message: `${err.message} (attempt ${attempt}; will retry${when})`,
      details,
      // Never 0: Temporal takes a zero delay for "no retry" and fails the activity.
      ...(delay.delayMs !== undefined && { nextRetryDelay: delay.delayMs }),
    }),
    memory,
  };
}

export interface RetryDelay {
  /** The next attempt's delay to give Temporal (positive); undefined: the retry policy decides. */
  delayMs?: number;
  /** The provider's longer wait, when it was capped; then `capMs` is the cap. */
  cappedFromMs?: number;
  capMs?: number;
}

/**
 * When the next attempt may start, given a provider's `Retry-After`: no earlier than it says,
 * and never earlier than the retry policy would (a Retry-After never hurries the policy, and
 * may delay an attempt past its `maximumInterval`, as Temporal allows), but at most `capMs`.
 */
export function retryDelay(
  retryAfterMs: number | undefined,
  policy: RetryPolicy | undefined,
  attempt: number,
  capMs: number = DEFAULT_MAX_RETRY_AFTER_MS,
): RetryDelay {
  if (retryAfterMs === undefined || !Number.isFinite(retryAfterMs) || retryAfterMs <= 0) return {};
  let policyMs = 0;
  if (policy) {
    const initial = msOptionalToNumber(policy.initialInterval) ?? 1_000;
    const coefficient = policy.backoffCoefficient ?? 2;
    const maximum = msOptionalToNumber(policy.maximumInterval) ?? 100 * initial;
    policyMs = Math.min(initial * coefficient ** Math.max(0, attempt - 1), maximum);
  }
  const cap = Math.max(1, Math.ceil(capMs));
  if (retryAfterMs > cap) {
    return { ...(cap > policyMs && { delayMs: cap }), cappedFromMs: retryAfterMs, capMs: cap };
  }
  if (retryAfterMs > policyMs) return { delayMs: Math.ceil(retryAfterMs) };
  return {};
}

/** `250 ms`, `2 s`, `1.5 s`, `5 min`, `2 h`. */
function duration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${Math.round(ms / 100) / 10} s`;
  if (ms < 2 * 3_600_000) return `${Math.round(ms / 6_000) / 10} min`;
  return `${Math.round(ms / 360_000) / 10} h`;
}
