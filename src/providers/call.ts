/** One provider call: a deadline over the whole response, and anything it throws classified once. */
import { ProviderError } from '../core/errors.js';
import { classifyProviderError } from './classify.js';
import { MalformedResponseError, providerDisplayName, type ErrorContext } from './error-names.js';

export interface CallOptions extends ErrorContext {
  provider: string;
  timeoutMs: number;
  /** The caller's signal: when it aborts, the error is rethrown as it is, unclassified. */
  signal?: AbortSignal;
}

/**
 * Run one provider call with a deadline covering the whole response (streamed bodies too),
 * classifying anything it throws. `fn` gets a signal that aborts on the caller's abort and on the
 * deadline; a call that ends early because that signal fired must throw (any error).
 */
export async function callProvider<T>(options: CallOptions, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const { provider, timeoutMs, signal } = options;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onAbort = () => controller.abort(signal?.reason);
  if (signal?.aborted) controller.abort(signal.reason);
  else signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await fn(controller.signal);
  } catch (err) {
    if (signal?.aborted) throw err;
    if (timedOut) {
      throw new ProviderError(
        `${providerDisplayName(provider)} did not answer within ${timeoutMs} ms (request timed out); the model turn will be retried.`,
        { provider, retryable: true, cause: err, ...(options.baseURL !== undefined && { baseURL: options.baseURL }) },
      );
    }
    throw classifyProviderError(provider, err, options);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** For stream loops: the SDKs end a stream quietly when its signal aborts; make that an error. */
export function throwIfAborted(signal: AbortSignal, what: string): void {
  if (signal.aborted) throw signal.reason ?? new MalformedResponseError(`${what} was interrupted`);
}
