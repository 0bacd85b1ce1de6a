/**
 * Guardrails: checks whose failure must stop a run, not just refuse a call. A guardrail is a
 * function on the worker (it may call a model); keel runs it as an activity, so its verdict is
 * recorded in history and a replay never runs it again. A tripped guardrail ends the run with
 * status `blocked`.
 */
import type { JsonValue } from './json.js';
import type { StateAccess } from './state.js';

/** Where a guardrail looks: the run's input, its final answer, a tool call's arguments or its result. */
export type GuardrailKind = 'input' | 'output' | 'toolInput' | 'toolOutput';
export const GUARDRAIL_KINDS: readonly GuardrailKind[] = ['input', 'output', 'toolInput', 'toolOutput'];

/** What a guardrail checks. */
export type GuardrailSubject =
  | { kind: 'input'; text: string }
  | { kind: 'output'; text: string; output: unknown }
  | { kind: 'toolInput'; tool: string; callId: string; arguments: Record<string, unknown> }
  | { kind: 'toolOutput'; tool: string; callId: string; arguments: Record<string, unknown>; result: string; isError: boolean };

export interface GuardrailContext {
  /** The agent in charge. */
  agent: string;
  workflowId: string;
  /** The run's `context`, as given at start. */
  context: JsonValue | undefined;
  /** The run's state (see ToolContext.state). */
  state: StateAccess;
  /** Aborted when the activity is cancelled (the run was cancelled). */
  signal: AbortSignal;
}

export interface GuardrailVerdict {
  tripped: boolean;
  /** Why it tripped: shown in the run's result, events and the CLI. */
  reason?: string;
}

export interface GuardrailOptions {
  name: string;
  check(subject: GuardrailSubject, ctx: GuardrailContext): GuardrailVerdict | Promise<GuardrailVerdict>;
}

export interface GuardrailDefinition extends GuardrailOptions {
  readonly kind: 'guardrail';
}

/** What ended a blocked run. */
export interface Tripwire {
  guardrail: string;
  kind: GuardrailKind;
  reason: string;
  /** The tool call it tripped on, for tool guardrails. */
  callId?: string;
  tool?: string;
}

const NAME = /^[a-zA-Z0-9_.-]{1,64}$/;

export function defineGuardrail(options: GuardrailOptions): GuardrailDefinition {
  if (!NAME.test(options.name)) {
    throw new Error(`Invalid guardrail name "${options.name}": use 1 to 64 letters, digits, "_", "." or "-".`);
  }
  if (typeof options.check !== 'function') throw new Error(`Guardrail "${options.name}": check must be a function.`);
  return { ...options, kind: 'guardrail' };
}

/** The names of guardrails by kind, as an agent's spec records them. */
export type GuardrailNames = Partial<Record<GuardrailKind, string[]>>;
