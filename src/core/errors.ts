/**
 * Every error type keel raises, in one place. They appear as the `type` of Temporal
 * ApplicationFailures (a failed run's failure, a failed activity attempt), so a caller in any
 * language can tell them apart; `turnRetry` rules of a monitor match them by `errorType`.
 * The contract (contract/errors.json, docs/contract.md) is generated from this list.
 */
export const ErrorTypes = {
  /** The agent named in the run's input is not registered with the worker. Fails the run. */
  UnknownAgent: 'KeelUnknownAgent',
  /** The provider refused the request and retrying cannot help (400, 401, 403, 404, quota). Fails the run. */
  ProviderRequest: 'KeelProviderRequestError',
  /** A transient provider failure (429, 5xx, 529, timeout, connection): the model turn is retried. */
  ProviderTransient: 'KeelProviderTransientError',
  /** The model's final answer did not match the output schema after all retries. Fails the run. */
  InvalidOutput: 'KeelInvalidOutput',
  /**
   * The worker's own configuration is wrong (a missing API key, an unknown provider, a bad model
   * name, an agent or a function the worker lacks): retried, so that fixing the worker and
   * restarting it resumes the run.
   */
  Config: 'KeelConfigError',
  /** The run's input is not what the workflow takes (a missing agent name, a bad override, a bad budget). Fails the run. */
  InvalidInput: 'KeelInvalidInput',
  /** The provider answered 200 with something that is not its API's answer, several times in a row. Fails the run. */
  MalformedResponse: 'KeelMalformedResponse',
  /** A tool with a `retry` setting threw: its activity is retried, until the last attempt answers the model with the error. */
  Tool: 'KeelToolError',
  /** A worker-side check of a call (a hook, a middleware, a guardrail, the approver) failed: its activity is retried. */
  Check: 'KeelCheckError',
  /** A monitor turn ran past its `turnTimeout` (the `errorType` a `turnRetry` rule matches; never a workflow failure). */
  TurnTimeout: 'KeelTurnTimeout',
  /** The run refused a decision sent by the `approve` Update (its shape, its call, its edit): nothing changed; sending it again cannot help. */
  ApprovalRejected: 'KeelApprovalRejected',
  /** A session refused an Update (a message while a run is in progress or waits for approval, an unknown checkpoint, nothing to resume): nothing changed. */
  SessionRefused: 'KeelSessionRefused',
  /** The run refused a client tool's answer sent by the `clientToolResult` Update (its shape, its call, its output): nothing changed. */
  ClientToolResultRejected: 'KeelClientToolResultRejected',
} as const;

export type ErrorType = (typeof ErrorTypes)[keyof typeof ErrorTypes];

/**
 * A provider error, classified once in the provider adapter. The activity layer turns it
 * into a Temporal ApplicationFailure: retryable (no earlier than `retryAfterMs`), or not.
 */
export class ProviderError extends Error {
  readonly retryable: boolean;
  readonly status?: number;
  /** How long the provider asked to wait (`Retry-After`): always positive; unusable values are dropped. */
  readonly retryAfterMs?: number;
  readonly provider: string;
  /** The answer arrived but is not what the API promises: retried only a few times. */
  readonly malformed: boolean;
  /** The API's base URL, for messages about answers that do not come from the API one expects. */
  readonly baseURL?: string;

  constructor(
    message: string,
    opts: {
      provider: string;
      retryable: boolean;
      status?: number;
      retryAfterMs?: number;
      malformed?: boolean;
      baseURL?: string;
      cause?: unknown;
    },
  ) {
    super(message, { cause: opts.cause });
    this.name = 'ProviderError';
    this.provider = opts.provider;
    this.retryable = opts.retryable;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
    this.malformed = opts.malformed ?? false;
    this.baseURL = opts.baseURL;
  }
}

/** The innermost cause of an error: the one that says what went wrong (Temporal wraps it in layers). */
export function innermostError(err: unknown): Error {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e : new Error(String(err));
}
