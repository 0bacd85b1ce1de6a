import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_RETRY_AFTER_MS,
  MAX_MALFORMED_ANSWERS,
  attemptMemory,
  modelFailure,
  retryDelay,
} from '../src/activities/model-failure.js';
import { ProviderError } from '../src/core/errors.js';
import { MalformedResponseError, ProviderConfigError } from '../src/providers/errors.js';

/** The model activity's default policy, as the server hands it to the activity (milliseconds). */
const policy = { initialInterval: 1_000, backoffCoefficient: 2, maximumInterval: 60_000 };

const transient = (retryAfterMs?: number) =>
  new ProviderError('Anthropic is overloaded (529 Overloaded); the model turn will be retried.', {
    provider: 'anthropic',
    retryable: true,
    status: 529,
    ...(retryAfterMs !== undefined && { retryAfterMs }),
  });

function failureOf(result: { failure: unknown }): ApplicationFailure {
  expect(result.failure).toBeInstanceOf(ApplicationFailure);
  return result.failure as ApplicationFailure;
}

describe('Retry-After and the retry policy', () => {
  it('waits as long as the provider asks when that is longer than the policy', () => {
    expect(retryDelay(5_000, policy, 1)).toEqual({ delayMs: 5_000 });
    const failure = failureOf(modelFailure(transient(5_000), { attempt: 1, retryPolicy: policy, memory: {} }));
    expect(failure.nextRetryDelay).toBe(5_000);
    expect(failure.nonRetryable).toBeFalsy();
    expect(failure.message).toContain('(attempt 1; will retry in 5 s, as Anthropic asked (Retry-After))');
  });

  it('never hurries the policy: a shorter Retry-After leaves the delay to it', () => {
    // Attempt 4 of the default policy waits 8 s.
    expect(retryDelay(3_000, policy, 4)).toEqual({});
    const failure = failureOf(modelFailure(transient(3_000), { attempt: 4, retryPolicy: policy, memory: {} }));
    expect(failure.nextRetryDelay).toBeUndefined();
    expect(failure.message).toContain('(attempt 4; will retry)');
  });

  it('never passes a delay that is not positive', () => {
    for (const ms of [0, -1, NaN, undefined]) {
      expect(retryDelay(ms, policy, 1)).toEqual({});
      expect(retryDelay(ms, undefined, 1)).toEqual({});
      expect(failureOf(modelFailure(transient(ms), { attempt: 1, memory: {} })).nextRetryDelay).toBeUndefined();
    }
  });

  it("may wait past the policy's maximumInterval, as Temporal allows", () => {
    expect(retryDelay(90_000, policy, 1)).toEqual({ delayMs: 90_000 });
    expect(retryDelay(2_000, { initialInterval: '100ms', maximumInterval: '500ms' }, 1)).toEqual({ delayMs: 2_000 });
  });

  it('caps a long Retry-After at 5 minutes, and says so', () => {
    expect(retryDelay(3_600_000, policy, 1)).toEqual({ delayMs: DEFAULT_MAX_RETRY_AFTER_MS, cappedFromMs: 3_600_000, capMs: 300_000 });
    expect(retryDelay(1e15, undefined, 1)).toEqual({ delayMs: DEFAULT_MAX_RETRY_AFTER_MS, cappedFromMs: 1e15, capMs: 300_000 });
    const failure = failureOf(modelFailure(transient(3_600_000), { attempt: 2, retryPolicy: policy, memory: {} }));
    expect(failure.nextRetryDelay).toBe(300_000);
    expect(failure.message).toContain(
      '(attempt 2; will retry in 5 min: Anthropic asked to wait 60 min (Retry-After), capped at 5 min (modelSettings.maxRetryAfterMs))',
    );
  });

  it('caps at modelSettings.maxRetryAfterMs, and never below what the policy waits anyway', () => {
    const failure = failureOf(modelFailure(transient(3_600_000), { attempt: 1, retryPolicy: policy, maxRetryAfterMs: 2_000, memory: {} }));
    expect(failure.nextRetryDelay).toBe(2_000);
    expect(failure.message).toContain('will retry in 2 s: Anthropic asked to wait 60 min (Retry-After), capped at 2 s');
    // Attempt 4 of the policy waits 8 s: longer than the cap, so the policy decides.
    expect(retryDelay(3_600_000, policy, 4, 2_000)).toEqual({ cappedFromMs: 3_600_000, capMs: 2_000 });
  });
});

describe('what fails the run, and what is retried', () => {
  it('a request the provider refuses fails at once', () => {
    const err = new ProviderError('OpenAI rejected the request as invalid (400 Bad Request).', {
      provider: 'openai',
      retryable: false,
      status: 400,
    });
    const failure = failureOf(modelFailure(err, { attempt: 1, memory: {} }));
    expect(failure).toMatchObject({ type: 'KeelProviderRequestError', nonRetryable: true });
  });

  it("a worker's configuration problem is retried, and reported to the run once per problem", () => {
    const err = new ProviderConfigError("OPENAI_API_KEY is not set in the worker's environment: set it.", 'openai');
    const first = modelFailure(err, { attempt: 1, memory: {} });
    expect(failureOf(first)).toMatchObject({ type: 'KeelConfigError', nonRetryable: false });
    expect(failureOf(first).message).toContain('OPENAI_API_KEY is not set');
    expect(failureOf(first).message).toContain('fix it and restart the worker');
    expect(first.workerProblem).toEqual({ type: 'KeelConfigError', message: err.message });
    expect(first.memory).toEqual({ problem: err.message });

    const second = modelFailure(err, { attempt: 2, memory: attemptMemory(first.memory) });
    expect(failureOf(second).nonRetryable).toBe(false);
    expect(second.workerProblem).toBeUndefined();

    const other = new ProviderConfigError('Unknown model provider "gemini".', 'gemini');
    expect(modelFailure(other, { attempt: 3, memory: second.memory }).workerProblem).toEqual({
      type: 'KeelConfigError',
      message: other.message,
    });
  });

  it('malformed answers are retried a few times, then fail naming the base URL', () => {
    const malformed = () =>
      new ProviderError('OpenAI sent a malformed response from http://proxy.local/v1 (the chat completion has no choices).', {
        provider: 'openai',
        retryable: true,
        malformed: true,
        baseURL: 'http://proxy.local/v1',
        cause: new MalformedResponseError('the chat completion has no choices'),
      });
    let memory = attemptMemory(undefined);
    for (let attempt = 1; attempt < MAX_MALFORMED_ANSWERS; attempt++) {
      const result = modelFailure(malformed(), { attempt, memory });
      expect(failureOf(result).nonRetryable).toBeFalsy();
      expect(failureOf(result).message).toContain(`malformed answer ${attempt} of at most ${MAX_MALFORMED_ANSWERS}`);
      memory = attemptMemory(JSON.parse(JSON.stringify(result.memory)));
      // Other errors in between do not reset the count.
      memory = modelFailure(transient(), { attempt, memory }).memory;
    }
    const last = failureOf(modelFailure(malformed(), { attempt: 9, memory }));
    expect(last).toMatchObject({ type: 'KeelMalformedResponse', nonRetryable: true });
    expect(last.message).toBe(
      'OpenAI answered 5 times with something that is not an answer of its API, from http://proxy.local/v1 ' +
        '(last: the chat completion has no choices). Check that http://proxy.local/v1 is the base URL of an ' +
        "OpenAI-compatible Chat Completions API (OPENAI_BASE_URL in the worker's environment, or providers.openai.baseURL of createWorker).",
    );
  });

  it('anything else is left to Temporal, which retries it', () => {
    const err = new Error('socket closed');
    expect(modelFailure(err, { attempt: 1, memory: {} }).failure).toBe(err);
    const nonRetryable = ApplicationFailure.nonRetryable('Unknown agent', 'KeelUnknownAgent');
    expect(modelFailure(nonRetryable, { attempt: 1, memory: {} }).failure).toBe(nonRetryable);
  });

  it('reads only what it wrote from heartbeat details', () => {
    expect(attemptMemory(undefined)).toEqual({});
    expect(attemptMemory('x')).toEqual({});
    expect(attemptMemory({ malformed: 2, problem: 'p', other: 1 })).toEqual({ malformed: 2, problem: 'p' });
    expect(attemptMemory({ malformed: '2' })).toEqual({});
  });
});
