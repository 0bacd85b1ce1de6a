/**
 * Error type names. They appear as the `type` of Temporal ApplicationFailures, so a caller
 * in any language can tell them apart.
 */
export const ErrorTypes = {
  /** The agent named in the run's input is not registered with the worker. */
  UnknownAgent: 'KeelUnknownAgent',
  /** The provider refused the request and retrying cannot help (400, 401, 403, 404, quota). */
  ProviderRequest: 'KeelProviderRequestError',
  /** A transient provider failure (429, 5xx, 529, timeout, connection): retried. */
  ProviderTransient: 'KeelProviderTransientError',
  /** The model's final answer did not match the output schema after all retries. */
  InvalidOutput: 'KeelInvalidOutput',
  /** A bad configuration: an unknown provider, a missing API key. */
  Config: 'KeelConfigError',
  /** The run's input is not what agentRun takes (a missing agent name, a bad override). */
  InvalidInput: 'KeelInvalidInput',
} as const;

/**
 * A provider error, classified once in the provider adapter. The activity layer turns it
 * into a Temporal ApplicationFailure: retryable with `retryAfterMs` as the next delay, or not.
 */
export class ProviderError extends Error {
  readonly retryable: boolean;
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly provider: string;

  constructor(
    message: string,
    opts: { provider: string; retryable: boolean; status?: number; retryAfterMs?: number; cause?: unknown },
  ) {
    super(message, { cause: opts.cause });
    this.name = 'ProviderError';
    this.provider = opts.provider;
    this.retryable = opts.retryable;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
  }
}
