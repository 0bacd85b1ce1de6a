/**
 * No payload a client sends can wedge a keel run.
 *
 * The SDK decodes a signal's, query's or Update's arguments (`arrayFromPayloads` in
 * `@temporalio/workflow`'s `internals.ts`: `signalWorkflow`, `queryWorkflow`, `doUpdate`) before
 * any interceptor or handler runs; a payload it cannot decode (invalid JSON under `json/plain`,
 * an encoding it does not know, no encoding at all) throws there, so a bad signal fails the
 * workflow task on every attempt and the run is stuck for good. Two of Temporal's facilities,
 * both in this one module so they share state in the workflow sandbox:
 *
 * - `payloadConverter` (the worker's `payloadConverterPath`, bundled into the workflow code): in
 *   a keel workflow, a payload that the default converter cannot decode becomes an
 *   `Undecodable` marker instead of an exception. Other workflows on the same worker (a user's,
 *   beside keel's plugin) keep the SDK's behaviour.
 * - `interceptors` (a workflow interceptor module): a signal with a marker among its arguments is
 *   recorded as a rejection (`approval.rejected` for `approve`, else `signal.rejected`) and not
 *   delivered; a query fails alone; an Update is rejected by its validator, before it is accepted.
 */
import { ApplicationFailure, defaultPayloadConverter, type Payload, type PayloadConverter } from '@temporalio/common';
import { decode } from '@temporalio/common/lib/encoding.js';
import {
  inWorkflowContext,
  workflowInfo,
  type Next,
  type QueryInput,
  type SignalInput,
  type UpdateInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptorsFactory,
} from '@temporalio/workflow';
import { ErrorTypes } from '../core/errors.js';
import { AGENT_MONITOR_WORKFLOW, AGENT_RUN_WORKFLOW, AGENT_SESSION_WORKFLOW } from './api.js';
import { rejectSignal, undecodableProblem, type Undecodable } from './payloads.js';

/** Found in a workflow bundle only when this module is its payload converter or interceptor module. */
export const PAYLOAD_GUARD_MARK = 'keel-payload-guard/1';

const KEEL_WORKFLOWS: readonly string[] = [AGENT_RUN_WORKFLOW, AGENT_MONITOR_WORKFLOW, AGENT_SESSION_WORKFLOW];

function inKeelWorkflow(): boolean {
  return inWorkflowContext() && KEEL_WORKFLOWS.includes(workflowInfo().workflowType);
}

function encodingOf(payload: Payload): string {
  const encoding = payload.metadata?.encoding;
  if (!encoding) return '(none)';
  return decode(encoding);
}

/**
 * Wraps a payload converter so that, in a keel workflow, what it cannot decode becomes an
 * `Undecodable` marker. A worker with a payload converter of its own composes it this way (its
 * module exports `payloadConverter = tolerantPayloadConverter(theirs)`, see `keelPlugin`).
 */
export function tolerantPayloadConverter(inner: PayloadConverter): PayloadConverter {
  return {
    toPayload: (value) => inner.toPayload(value),
    fromPayload<T>(payload: Payload): T {
      try {
        return inner.fromPayload<T>(payload);
      } catch (err) {
        if (!inKeelWorkflow()) throw err;
        const marker: Undecodable = { keelUndecodable: { encoding: encodingOf(payload), error: (err as Error)?.message ?? String(err) } };
        return marker as T;
      }
    },
  };
}

/** keel's converter: Temporal's default (undefined, binary, JSON), tolerant in keel's workflows. */
export const payloadConverter: PayloadConverter = tolerantPayloadConverter(defaultPayloadConverter);

class UndecodableArguments implements WorkflowInboundCallsInterceptor {
  readonly name = PAYLOAD_GUARD_MARK;

  // Not async, as handleUpdate below: the handler runs exactly when it would without the interceptor.
  handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>): Promise<void> {
    const problem = undecodableProblem('signal', input.signalName, input.args);
    if (problem === undefined) return next(input);
    // A signal cannot be refused: it is recorded, and the run goes on.
    rejectSignal(input.signalName, problem);
    return Promise.resolve();
  }

  // async: a query that throws fails alone (the SDK's failQuery), a synchronous throw would fail the task.
  async handleQuery(input: QueryInput, next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>): Promise<unknown> {
    const problem = undecodableProblem('query', input.queryName, input.args);
    if (problem !== undefined) throw new Error(problem);
    return next(input);
  }

  validateUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>): void {
    const problem = undecodableProblem('Update', input.name, input.args);
    if (problem !== undefined) throw new Error(problem);
    next(input);
  }

  // Not async: the handler's promise is passed through as it is, so its completion is recorded in
  // the same order relative to the run's other commands as without the interceptor (an extra await
  // here let the main loop's next command come first, and earlier histories stopped replaying).
  handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>): Promise<unknown> {
    // An Update without a validator: an ApplicationFailure fails the Update, not the task.
    const problem = undecodableProblem('Update', input.name, input.args);
    if (problem !== undefined) return Promise.reject(ApplicationFailure.nonRetryable(problem, ErrorTypes.InvalidInput));
    return next(input);
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => ({ inbound: [new UndecodableArguments()] });
