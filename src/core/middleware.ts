/**
 * Tool middleware: policies and execution concerns written as functions on the worker. A
 * middleware may decide a call before it runs (`beforeCall`: allow, ask, deny, or rewrite the
 * arguments), wrap its execution (`wrapCall`: timeouts, retries of its own, output shaping),
 * and see or rewrite its result (`afterCall`). keel runs them inside activities, with the other
 * worker-side stages of the same call, so a call costs one activity before it and none extra
 * after it.
 */
import type { JsonValue } from './json.js';
import type { StateAccess } from './state.js';

export interface MiddlewareCall {
  /** The agent in charge. */
  agent: string;
  workflowId: string;
  turn: number;
  callId: string;
  tool: string;
  /** The arguments as the earlier stages left them. */
  arguments: Record<string, unknown>;
  context: JsonValue | undefined;
  /** The run's state, to read and write (the tool's call sees what beforeCall wrote). */
  state: StateAccess;
}

export interface MiddlewareVerdict {
  decision?: 'allow' | 'ask' | 'deny';
  reason?: string;
  /** Rewritten arguments: later stages and the tool see these. */
  arguments?: Record<string, unknown>;
}

export interface ToolResultView {
  content: string;
  isError: boolean;
}

export interface MiddlewareOptions {
  name: string;
  /** Before the call: decide it, or rewrite its arguments. Returning nothing leaves it alone. */
  beforeCall?(call: MiddlewareCall): MiddlewareVerdict | void | Promise<MiddlewareVerdict | void>;
  /** Around the tool's execution, the first middleware outermost. `next` runs the rest and the tool. */
  wrapCall?(call: MiddlewareCall, next: () => Promise<unknown>): Promise<unknown>;
  /** After the call: rewrite the result the model sees. Middleware run in reverse order here. */
  afterCall?(call: MiddlewareCall, result: ToolResultView): Partial<ToolResultView> | void | Promise<Partial<ToolResultView> | void>;
}

export interface MiddlewareDefinition extends MiddlewareOptions {
  readonly kind: 'middleware';
}

const NAME = /^[a-zA-Z0-9_.-]{1,64}$/;

export function defineMiddleware(options: MiddlewareOptions): MiddlewareDefinition {
  if (!NAME.test(options.name)) {
    throw new Error(`Invalid middleware name "${options.name}": use 1 to 64 letters, digits, "_", "." or "-".`);
  }
  if (!options.beforeCall && !options.wrapCall && !options.afterCall) {
    throw new Error(`Middleware "${options.name}" does nothing: give it beforeCall, wrapCall or afterCall.`);
  }
  return { ...options, kind: 'middleware' };
}
