/**
 * The provider errors' vocabulary: the errors the adapters raise beside \`ProviderError\`, the
 * context a classification may use, and the names a message gives (display names, environment
 * variables, API names).
 */
import { ErrorTypes, ProviderError } from '../core/errors.js';

/** What the classifier may use to make its message precise. */
export interface ErrorContext {
  /** The model's name within its provider, for "model not found" messages. */
  model?: string;
  /** The per-request timeout in force, for timeout messages. */
  timeoutMs?: number;
  /** The API's base URL, for messages about answers that are not the API's. */
  baseURL?: string;
}

/**
 * A problem of the worker's own configuration (a missing API key, an unknown provider, a bad
 * model name). Retryable: the run waits until a worker that is set up right takes the turn.
 */
export class ProviderConfigError extends ProviderError {
  /** The ApplicationFailure type the activity layer should use. */
  readonly errorType = ErrorTypes.Config;

  constructor(message: string, provider: string) {
    super(message, { provider, retryable: true });
    this.name = 'ProviderConfigError';
  }
}

/**
 * Thrown by adapters when a response arrived but is not what the API promises (not JSON, no
 * choices, a stream that ended early). Classified as retryable.
 */
export class MalformedResponseError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MalformedResponseError';
  }
}

/**
 * Thrown by adapters when a stream that had started ends (without an error) before the model
 * finished its answer: a dropped connection rather than a wrong answer, so retried as such.
 */
export class IncompleteStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IncompleteStreamError';
  }
}

const DISPLAY_NAMES: Record<string, string> = { openai: 'OpenAI', anthropic: 'Anthropic', demo: 'Demo' };

export function providerDisplayName(provider: string): string {
  return DISPLAY_NAMES[provider] ?? (provider.charAt(0).toUpperCase() + provider.slice(1));
}

const API_KEY_VARS: Record<string, string> = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' };

export function apiKeyVariable(provider: string): string {
  return API_KEY_VARS[provider] ?? `${provider.toUpperCase()}_API_KEY`;
}

const BASE_URL_VARS: Record<string, string> = { openai: 'OPENAI_BASE_URL', anthropic: 'ANTHROPIC_BASE_URL' };

export function baseUrlVariable(provider: string): string {
  return BASE_URL_VARS[provider] ?? `${provider.toUpperCase()}_BASE_URL`;
}

const API_NAMES: Record<string, string> = { openai: 'OpenAI-compatible Chat Completions API', anthropic: 'Anthropic Messages API' };

/**
 * The message of a model turn that gave up after `attempts` malformed answers: where they came
 * from and what to check.
 */
export function malformedGiveUpMessage(err: ProviderError, attempts: number): string {
  const P = providerDisplayName(err.provider);
  const cause = err.cause instanceof Error ? err.cause.message : err.message;
  const where = err.baseURL ?? `${P}'s default base URL`;
  return (
    `${P} answered ${attempts} times with something that is not an answer of its API, from ${where} (last: ${cause}). ` +
    `Check that ${where} is the base URL of an ${API_NAMES[err.provider] ?? `${P} API`} ` +
    `(${baseUrlVariable(err.provider)} in the worker's environment, or providers.${err.provider}.baseURL of createWorker).`
  );
}

