/**
 * Provider errors are classified once, here, for every adapter. Following Temporal's
 * convention, everything is retried (no earlier than a usable \`Retry-After\`) except what is
 * known to be the request's own fault (400, 401, 403, 404, 413, 422, an exhausted quota or
 * billing): those fail the run at once with a message that says what to fix.
 */
import { STATUS_CODES } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { ProviderError } from '../core/errors.js';
import { apiKeyVariable, IncompleteStreamError, MalformedResponseError, providerDisplayName, type ErrorContext } from './error-names.js';
import { readRetryAfter } from './retry-after.js';

function statusText(status: number): string {
  if (status === 529) return 'Overloaded';
  return STATUS_CODES[status] ?? 'Error';
}

type AnyRecord = Record<string, unknown>;

function isRecord(v: unknown): v is AnyRecord {
  return typeof v === 'object' && v !== null;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The SDKs' APIError shape (both are Stainless SDKs), read by duck typing. */
interface ApiErrorLike {
  status?: number;
  headers?: { get(name: string): string | null };
  error?: unknown;
  code?: unknown;
  type?: unknown;
  message: string;
}

function asApiError(err: unknown): ApiErrorLike | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as unknown as AnyRecord;
  if (!('status' in e) || !('error' in e)) return undefined;
  return err as unknown as ApiErrorLike;
}

/**
 * The provider's own error message: OpenAI puts `{message, type, code}` in `error`, Anthropic
 * keeps the whole body `{type: 'error', error: {type, message}}`.
 */
function providerMessage(err: ApiErrorLike): string {
  const body = err.error;
  if (isRecord(body)) {
    const inner = body['error'];
    if (isRecord(inner)) {
      const m = str(inner['message']);
      if (m) return m;
    }
    const m = str(body['message']);
    if (m) return m;
    if (typeof body['message'] !== 'undefined') return JSON.stringify(body['message']);
  } else if (typeof body === 'string' && body.trim() !== '') {
    return body.trim().slice(0, 500);
  }
  // The SDK's message is "<status> <text>"; drop the status it repeats.
  return err.message.replace(/^\d{3}\s+/, '');
}

function errorCodeAndType(err: ApiErrorLike): { code?: string; type?: string } {
  const body = err.error;
  let code = str(err.code);
  let type = str(err.type);
  if (isRecord(body)) {
    code ??= str(body['code']);
    type ??= str(body['type']) === 'error' ? undefined : str(body['type']);
    const inner = body['error'];
    if (isRecord(inner)) {
      code ??= str(inner['code']);
      type ??= str(inner['type']);
      const details = inner['details'];
      if (isRecord(details)) code ??= str(details['error_code']);
    }
  }
  return { ...(code !== undefined && { code }), ...(type !== undefined && { type }) };
}

function causeChain(err: unknown): unknown[] {
  const out: unknown[] = [];
  let cur: unknown = err;
  for (let i = 0; i < 8 && isRecord(cur); i++) {
    out.push(cur);
    cur = cur['cause'];
  }
  return out;
}

const CONNECTION_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

function isConnectionProblem(err: unknown): boolean {
  for (const e of causeChain(err)) {
    const r = e as AnyRecord;
    const name = str(r['name']) ?? '';
    const code = str(r['code']) ?? '';
    const message = str(r['message']) ?? '';
    if (name === 'APIConnectionError' || name === 'APIConnectionTimeoutError') return true;
    if (CONNECTION_CODES.has(code)) return true;
    if (name === 'TypeError' && (message === 'terminated' || message === 'fetch failed')) return true;
    if (name === 'SocketError' || /other side closed|socket hang up/i.test(message)) return true;
  }
  return false;
}

function isTimeout(err: unknown): boolean {
  if (err instanceof OpenAI.APIConnectionTimeoutError || err instanceof Anthropic.APIConnectionTimeoutError) return true;
  for (const e of causeChain(err)) {
    const r = e as AnyRecord;
    const name = str(r['name']) ?? '';
    const code = str(r['code']) ?? '';
    if (name === 'APIConnectionTimeoutError' || name === 'TimeoutError') return true;
    if (code === 'ETIMEDOUT' || code.endsWith('_TIMEOUT')) return true;
    // The OpenAI SDK's classes keep the name "Error": recognise its constructor by name.
    if (r.constructor?.name === 'APIConnectionTimeoutError') return true;
  }
  return false;
}

function isConnectionClass(err: unknown): boolean {
  if (err instanceof OpenAI.APIConnectionError || err instanceof Anthropic.APIConnectionError) return true;
  const ctor = isRecord(err) ? err.constructor?.name : undefined;
  return ctor === 'APIConnectionError' || ctor === 'APIConnectionTimeoutError';
}

/** True for the SDKs' "request was aborted by the caller" error and for DOM AbortErrors. */
export function isAbortError(err: unknown): boolean {
  if (err instanceof OpenAI.APIUserAbortError || err instanceof Anthropic.APIUserAbortError) return true;
  if (!isRecord(err)) return false;
  const name = str(err['name']);
  return name === 'AbortError' || name === 'APIUserAbortError' || err.constructor?.name === 'APIUserAbortError';
}

function quote(text: string): string {
  const t = text.trim();
  return t.endsWith('.') || t.endsWith('!') || t.endsWith('?') ? t : `${t}.`;
}

/** Streaming error events carry no HTTP status, only the error type. */
const TYPE_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  server_error: 500,
  overloaded_error: 529,
  timeout_error: 504,
  billing_error: 402,
};

/**
 * Classify any error thrown while calling a provider. Already classified errors are returned
 * as they are. Aborts are not this function's business: see `callProvider`.
 */
export function classifyProviderError(provider: string, err: unknown, context: ErrorContext = {}): ProviderError {
  if (err instanceof ProviderError) return err;
  const P = providerDisplayName(provider);
  const baseURL = context.baseURL;
  const transient = (message: string, extra: { malformed?: boolean } = {}) =>
    new ProviderError(message, { provider, retryable: true, cause: err, ...(baseURL !== undefined && { baseURL }), ...extra });

  if (isTimeout(err)) {
    const within = context.timeoutMs !== undefined ? ` within ${context.timeoutMs} ms` : ' in time';
    return transient(`${P} did not answer${within} (request timed out); the model turn will be retried.`);
  }

  const api = asApiError(err);
  if (api && typeof api.status === 'number') {
    return classifyStatus(provider, api.status, api, err, context);
  }
  if (api && !isConnectionClass(err) && !isConnectionProblem(err)) {
    // An error event inside a stream: no status, but an error type.
    const { type } = errorCodeAndType(api);
    const status = type ? TYPE_STATUS[type] : undefined;
    if (status !== undefined) return classifyStatus(provider, status, api, err, context, true);
    return transient(`${P} reported an error while streaming: ${quote(providerMessage(api))}`);
  }

  if (isConnectionProblem(err) || isConnectionClass(err)) {
    const detail = causeChain(err)
      .map((e) => str((e as AnyRecord)['message']))
      .filter((m): m is string => m !== undefined)
      .map((m) => m.replace(/\.$/, ''))
      .join(': ');
    return transient(`Could not reach ${P}, or the connection was lost (${detail || 'connection error'}); the model turn will be retried.`);
  }

  if (err instanceof IncompleteStreamError) {
    return transient(`${P}'s stream ended before the model finished its answer (${err.message}); the model turn will be retried.`);
  }

  if (err instanceof SyntaxError || err instanceof MalformedResponseError) {
    const from = baseURL !== undefined ? ` from ${baseURL}` : '';
    return transient(`${P} sent a malformed response${from} (${err.message}); the model turn will be retried.`, {
      malformed: true,
    });
  }

  // Not recognized: retried (Temporal's convention), so a surprise never loses a run.
  const message = err instanceof Error ? `${err.name && err.name !== 'Error' ? `${err.name}: ` : ''}${err.message}` : String(err);
  return transient(`Unexpected error calling ${P}: ${message}; the model turn will be retried.`);
}

function classifyStatus(
  provider: string,
  status: number,
  api: ApiErrorLike,
  err: unknown,
  context: ErrorContext,
  fromStream = false,
): ProviderError {
  const P = providerDisplayName(provider);
  const said = quote(providerMessage(api));
  const { code, type } = errorCodeAndType(api);
  const label = fromStream && type ? `${type} while streaming` : `${status} ${statusText(status)}`;
  const retryAfter = readRetryAfter(api.headers);
  const baseURL = context.baseURL;
  const transient = (message: string) =>
    new ProviderError(
      retryAfter.ignored === undefined
        ? message
        : `${message} Ignored ${retryAfter.ignored} (not a positive wait)${retryAfter.ms === undefined ? ': the retry policy decides when to try again' : ''}.`,
      {
        provider,
        retryable: true,
        status,
        cause: err,
        ...(retryAfter.ms !== undefined && { retryAfterMs: retryAfter.ms }),
        ...(baseURL !== undefined && { baseURL }),
      },
    );
  const fatal = (message: string) =>
    new ProviderError(message, { provider, retryable: false, status, cause: err, ...(baseURL !== undefined && { baseURL }) });
  const modelRef = `'${provider}:${context.model ?? '...'}'`;

  if (status === 429) {
    if (code === 'insufficient_quota' || type === 'insufficient_quota') {
      return fatal(
        `${P} quota exhausted (429 insufficient_quota): check your plan and billing; retrying will not help. ${P} said: ${said}`,
      );
    }
    return transient(`${P} is rate limiting requests (${label}); the model turn will be retried. ${P} said: ${said}`);
  }
  if (status === 402 || type === 'billing_error') {
    return fatal(`${P} refused the request for billing reasons (${label}): check your plan and billing; retrying will not help. ${P} said: ${said}`);
  }
  if (status === 408 || status === 409 || status >= 500) {
    const what =
      status === 529 || type === 'overloaded_error'
        ? 'is overloaded'
        : status === 408
          ? 'timed out the request'
          : status === 409
            ? 'reported a conflict'
            : 'had a server error';
    return transient(`${P} ${what} (${label}); the model turn will be retried. ${P} said: ${said}`);
  }
  switch (status) {
    case 401:
      return fatal(
        `${P} rejected the API key (${label}): set a valid ${apiKeyVariable(provider)} in the worker's environment. ${P} said: ${said}`,
      );
    case 403:
      return fatal(
        `${P} denied access (${label}): the API key is not allowed to use this model or resource; check the key's permissions and organization. ${P} said: ${said}`,
      );
    case 404:
      return fatal(
        `${P} says the model was not found (${fromStream ? label : '404'}): check the model name in the agent's \`model\` (${modelRef}).` +
          `${baseURL !== undefined ? ` If it is right, check that ${baseURL} is the API's base URL.` : ''} ${P} said: ${said}`,
      );
    case 413:
      return fatal(
        `${P} says the request is too large (${label}): shorten the conversation, the instructions or the tool results. ${P} said: ${said}`,
      );
    case 400:
    case 422: {
      const hint =
        code === 'context_length_exceeded' || /context (length|window)|too long|maximum context/i.test(said)
          ? 'the conversation no longer fits in the model\'s context window; shorten the input or tool results, or use a model with a larger context'
          : 'check the agent\'s tools (names and JSON schemas), output schema, model name and model settings';
      return fatal(`${P} rejected the request as invalid (${label}): ${hint}. ${P} said: ${said}`);
    }
    default:
      // A status keel does not know: retried, as Temporal retries any error it is not told about.
      return transient(`${P} answered with an unexpected status (${label}); the model turn will be retried. ${P} said: ${said}`);
  }
}

