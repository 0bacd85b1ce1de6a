/**
 * Serving a run's client tools from a client: watch the run for calls that wait for a client,
 * run each once with the handler of its tool, and send its result by the `clientToolResult`
 * Update (with an Update ID per call, so a retried send applies once). Watches by polling the
 * run's events; `keel run --tools` and the future `keel chat --tools` serve through here.
 */
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import type { ClientToolHandlers, ClientToolReceipt, ClientToolResult, PendingClientCall } from '../core/client-tools.js';
import { innermostError } from '../core/errors.js';
import type { JsonValue } from '../core/json.js';
import { clientToolCallsQuery, clientToolResultUpdate } from '../workflows/api.js';
import type { RunHandle } from './run-handle.js';

/** The run refused a client's answer (the call is not waiting, or the output fails the tool's output schema). Nothing changed. */
export class ClientToolRejectedError extends Error {
  constructor(
    readonly workflowId: string,
    readonly callId: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ClientToolRejectedError';
  }
}

/** One call a client served, and what became of it. */
export interface ServedCall {
  callId: string;
  tool: string;
  /**
   * `output`: the handler's output was recorded; `error`: its error was (it threw, or this client
   * has no handler for the tool); `refused`: the run refused the output (the model was then sent
   * the refusal as an error); `unsent`: the answer could not be sent (the run ended).
   */
  outcome: 'output' | 'error' | 'refused' | 'unsent';
  /** The error the model reads, or why the answer was refused or not sent. */
  detail?: string;
}

export interface ServeClientToolsOptions {
  /** Stops serving (handlers still running get an aborted `ctx.signal`). */
  signal?: AbortSignal;
  /** How often the run's events are read. Default 250 ms. */
  intervalMs?: number;
  /** Told about each call as it is served. */
  onCall?(served: ServedCall): void;
}

/** The Update ID of the answer to a call: the same for every retry of one answer, so it applies once. */
export const clientToolUpdateId = (callId: string, attempt: 'answer' | 'refused' = 'answer') =>
  attempt === 'answer' ? `clientToolResult:${callId}` : `clientToolResult:${callId}:refused`;

/** Sends a client's answer to a call of the run `workflow`; a refused answer throws ClientToolRejectedError with the run's reason. */
export async function sendClientToolResult(workflow: WorkflowHandle, result: ClientToolResult, updateId = clientToolUpdateId(result.callId)): Promise<ClientToolReceipt> {
  try {
    return await workflow.executeUpdate(clientToolResultUpdate, { args: [result], updateId });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) throw new ClientToolRejectedError(workflow.workflowId, result.callId, innermostError(err).message, { cause: err });
    throw err;
  }
}

/**
 * Serves the run's client tools until the run ends (or `signal` aborts): each call that waits
 * for a client is run once, with the handler named after its tool. Calls waiting in the run's
 * sub-agents' runs are listed on it too, and answered in the run they wait in. Returns the calls served.
 */
export async function serveClientTools(handle: RunHandle, handlers: ClientToolHandlers, options: ServeClientToolsOptions = {}): Promise<ServedCall[]> {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) stop.abort();
  const seen = new Set<string>();
  const served: ServedCall[] = [];
  const running = new Set<Promise<void>>();
  const report = (call: ServedCall) => {
    served.push(call);
    options.onCall?.(call);
  };
  const serveWaiting = async () => {
    let calls: PendingClientCall[];
    try {
      calls = await handle.workflow.query(clientToolCallsQuery);
    } catch {
      // Not answering yet (before its first workflow task) or closed: the events say when to look again.
      return;
    }
    for (const call of calls) {
      if (seen.has(call.callId)) continue;
      seen.add(call.callId);
      const work = serveOne(handle, handlers, call, stop.signal).then(report);
      running.add(work);
      void work.finally(() => running.delete(work));
    }
  };
  try {
    await serveWaiting();
    for await (const event of handle.follow({ signal: stop.signal, ...(options.intervalMs !== undefined && { intervalMs: options.intervalMs }) })) {
      if (event.type === 'client_tool.requested' && !seen.has(event.callId)) await serveWaiting();
    }
  } finally {
    // The run ended (or the caller stopped): handlers still running are told to stop.
    stop.abort();
    options.signal?.removeEventListener('abort', onAbort);
    await Promise.allSettled([...running]);
  }
  return served;
}

async function serveOne(handle: RunHandle, handlers: ClientToolHandlers, call: PendingClientCall, signal: AbortSignal): Promise<ServedCall> {
  const { callId, tool } = call;
  // A sub-agent's call is answered in its own run, which checks it against its own state.
  const workflow = call.run ? handle.workflow.client.getHandle(call.run) : handle.workflow;
  const handler = Object.hasOwn(handlers, tool) ? handlers[tool] : undefined;
  let result: ClientToolResult;
  if (!handler) {
    const known = Object.keys(handlers);
    result = { callId, error: `this client has no handler for ${tool} (it serves: ${known.length ? known.join(', ') : 'none'})` };
  } else {
    try {
      const value = await handler(call.arguments, { workflowId: workflow.workflowId, callId, tool, turn: call.turn, signal });
      result = { callId, output: asJson(value) };
    } catch (err) {
      result = { callId, error: (err as Error)?.message ?? String(err) };
    }
  }
  try {
    await sendClientToolResult(workflow, result);
    return 'output' in result ? { callId, tool, outcome: 'output' } : { callId, tool, outcome: 'error', detail: result.error };
  } catch (err) {
    if (!(err instanceof ClientToolRejectedError)) return { callId, tool, outcome: 'unsent', detail: (err as Error)?.message ?? String(err) };
    // An output the run refused (it fails the tool's output schema): the model learns why instead of waiting for the timeout.
    if ('output' in result) {
      await sendClientToolResult(workflow, { callId, error: `the client's output was refused: ${err.message}` }, clientToolUpdateId(callId, 'refused')).catch(() => undefined);
    }
    return { callId, tool, outcome: 'refused', detail: err.message };
  }
}

/** A handler's return value as the JSON the Update carries (undefined is null). */
function asJson(value: unknown): JsonValue {
  if (value === undefined) return null;
  const text = JSON.stringify(value);
  if (text === undefined) throw new Error('the handler returned something that is not JSON (a function or a symbol)');
  return JSON.parse(text) as JsonValue;
}
