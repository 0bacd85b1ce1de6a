/**
 * The workflows' checks of what a client sends: the run's and the monitor's input, approval
 * decisions, inject messages, permission modes. Each reads the JSON Schema that `npm run contract`
 * made from the zod schemas of schemas.ts (boundary-schemas.ts) with schema-check.ts, so the
 * workflow loads no zod, and says what is wrong in the schemas' own words (`x-message`); what JSON
 * Schema cannot say (a duration's length, the size of the context, who may continue a run,
 * which fields go with a deny) is checked here.
 */
import { ApplicationFailure } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time.js';
import type { ApprovalDecision } from './approval.js';
import type { ClientToolResult } from './client-tools.js';
import { BOUNDARY_SCHEMAS } from './boundary-schemas.js';
import { ErrorTypes } from './errors.js';
import type { JsonSchema } from './json-schema.js';
import type { JsonValue } from './json.js';
import { CONTEXT_BYTES, utf8Bytes } from './limits.js';
import type { MonitorInput } from './monitor.js';
import type { PermissionMode } from './permissions/index.js';
import type { AgentRunInput } from './run.js';
import type { EndInput, NewSessionInput, RewindInput, SendInput, SessionInput } from './session.js';
import { schemaIssues, type SchemaIssue } from './schema-check.js';
import { STATE_BYTES } from './state.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A path as a person reads it: `"agent"` at the top, `budgets.maxTurns` and `tools[1]` below. */
function pathText(path: readonly (string | number)[]): string {
  let text = '';
  for (const key of path) text += typeof key === 'number' ? `[${key}]` : text === '' ? key : `.${key}`;
  return path.length === 1 && typeof path[0] === 'string' ? `"${text}"` : text;
}

function sentences(issues: SchemaIssue[]): string[] {
  return issues.map((i) => (i.path.length === 0 ? i.message : `${pathText(i.path)} ${i.message}`));
}

/** The issues in the order of the schema's fields (then as found), so a message reads like the input's documentation. */
function ordered(schema: JsonSchema, issues: SchemaIssue[]): SchemaIssue[] {
  const fields = Object.keys((schema.properties ?? {}) as object);
  const rank = (i: SchemaIssue) => {
    const at = fields.indexOf(String(i.path[0]));
    return i.path.length === 0 ? -1 : at < 0 ? fields.length : at;
  };
  return issues.map((issue, n) => ({ issue, n })).sort((a, b) => rank(a.issue) - rank(b.issue) || a.n - b.n).map((x) => x.issue);
}

function problems(schema: JsonSchema, value: unknown): string[] {
  return sentences(ordered(schema, schemaIssues(schema, value)));
}

function contextProblem(input: Record<string, unknown>): string | undefined {
  if (input.context === undefined) return undefined;
  if (utf8Bytes(JSON.stringify(input.context) ?? '') <= CONTEXT_BYTES) return undefined;
  return `"context" must be at most ${CONTEXT_BYTES / 1024} KB of JSON (pass references, such as IDs, not data)`;
}

function stateProblem(input: Record<string, unknown>): string | undefined {
  if (!isObject(input.state)) return undefined;
  const bytes = utf8Bytes(JSON.stringify(input.state) ?? '');
  if (bytes <= STATE_BYTES) return undefined;
  return `"state" must be at most ${STATE_BYTES / 1024} KB of JSON, got ${bytes} bytes (keep references, such as IDs, in the state, not data)`;
}

function invalidInput(workflow: string, found: string[], expected: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: ErrorTypes.InvalidInput,
    nonRetryable: true,
    message: `Invalid ${workflow} input: ${found.join('; ')}. Expected ${expected}.`,
  });
}

/**
 * Checks an `agentRun` input; throws a non-retryable `KeelInvalidInput` failure naming every
 * problem. `continuing`: this execution continues an earlier one (only then may `continued` be set).
 */
export function checkAgentRunInput(input: unknown, continuing: boolean): asserts input is AgentRunInput {
  const found = problems(BOUNDARY_SCHEMAS.AgentRunInput, input);
  if (isObject(input)) {
    const context = contextProblem(input);
    if (context) found.push(context);
    const state = stateProblem(input);
    if (state) found.push(state);
    // Only the workflow itself continues a run; a caller cannot hand it a state.
    if (input.continued !== undefined && !continuing) found.push('"continued" is set by keel when a run continues as new, never by a caller');
  }
  if (found.length > 0) throw invalidInput('agentRun', found, '{"agent": "<name>", "input": "<prompt>"}');
}

function durationMs(value: unknown): number {
  try {
    return msToNumber(value as never);
  } catch {
    return Number.NaN;
  }
}

/** Checks an `agentMonitor` input, as checkAgentRunInput does a run's: budgets' durations included. */
export function checkMonitorInput(input: unknown, continuing: boolean): asserts input is MonitorInput {
  const issues = schemaIssues(BOUNDARY_SCHEMAS.MonitorInput, input);
  if (isObject(input) && isObject(input.budgets)) {
    const durations = BOUNDARY_SCHEMAS.MonitorInput.$defs.MonitorBudgets.properties;
    for (const key of ['wallclock', 'turnTimeout'] as const) {
      const v = input.budgets[key];
      const ms = durationMs(v);
      const reported = issues.some((i) => i.path[0] === 'budgets' && i.path[1] === key);
      if (v !== undefined && !reported && !(Number.isFinite(ms) && ms > 0)) issues.push({ path: ['budgets', key], message: durations[key]['x-message'] });
    }
  }
  const found = sentences(ordered(BOUNDARY_SCHEMAS.MonitorInput, issues));
  if (isObject(input)) {
    const context = contextProblem(input);
    if (context) found.push(context);
    const state = stateProblem(input);
    if (state) found.push(state);
    if (input.continued !== undefined && !continuing) found.push('"continued" is set by keel when a monitor continues as new, never by a caller');
  }
  if (found.length > 0) throw invalidInput('agentMonitor', found, '{"agent": "<name>", "goal": "<first prompt>", "budgets"?: {...}}');
}

export const APPROVAL_DECISION_EXAMPLE = '{"callId": "<id>", "decision": "allow" | "deny", "reason"?: "...", "arguments"?: {...}, "remember"?: true}';

/**
 * Checks a decision from outside (any client may send any JSON). Returns the decision, or a
 * message saying what is wrong and what a valid one looks like.
 */
export function parseApprovalDecision(value: unknown): { ok: true; decision: ApprovalDecision } | { ok: false; error: string } {
  const found = problems(BOUNDARY_SCHEMAS.ApprovalDecision, value);
  const v = value as ApprovalDecision;
  if (found.length === 0 && v.decision === 'deny') {
    if (v.arguments !== undefined) found.push('"arguments" can only be edited when the decision is "allow"');
    if (v.remember === true) found.push('"remember" only applies to "allow"');
  }
  if (found.length > 0) return { ok: false, error: `Invalid approval decision: ${found.join('; ')}. Expected ${APPROVAL_DECISION_EXAMPLE}.` };
  const { remember, ...decision } = v;
  return { ok: true, decision: remember === true ? { ...decision, remember } : decision };
}

export const CLIENT_TOOL_RESULT_EXAMPLE = '{"callId": "<id>", "output": <any JSON>} or {"callId": "<id>", "error": "<what went wrong>"}';

/** Checks a client's answer to a call (its shape only: the run checks the call and the tool's output schema). */
export function parseClientToolResult(value: unknown): { ok: true; result: ClientToolResult } | { ok: false; error: string } {
  const found = problems(BOUNDARY_SCHEMAS.ClientToolResult, value);
  if (found.length === 0) {
    const v = value as Record<string, unknown>;
    const given = ['output', 'error'].filter((k) => v[k] !== undefined);
    if (given.length !== 1) found.push('give either "output" or "error", not both and not neither');
  }
  if (found.length > 0) return { ok: false, error: `Invalid client tool result: ${found.join('; ')}. Expected ${CLIENT_TOOL_RESULT_EXAMPLE}.` };
  const v = value as { callId: string; output?: JsonValue; error?: string };
  return { ok: true, result: v.error !== undefined ? { callId: v.callId, error: v.error } : { callId: v.callId, output: v.output as JsonValue } };
}

/** The message of an inject, or why there is none. */
export function parseInject(value: unknown): { ok: true; message: string } | { ok: false; error: string } {
  const found = schemaIssues(BOUNDARY_SCHEMAS.InjectInput, value);
  if (found.length > 0) return { ok: false, error: `${BOUNDARY_SCHEMAS.InjectInput['x-message']}.` };
  return { ok: true, message: typeof value === 'string' ? value : (value as { message: string }).message };
}

/** A permission mode from a signal, or why it is not one. */
export function parsePermissionMode(value: unknown): { ok: true; mode: PermissionMode } | { ok: false; error: string } {
  if (schemaIssues(BOUNDARY_SCHEMAS.PermissionMode, value).length === 0) return { ok: true, mode: value as PermissionMode };
  return { ok: false, error: `Unknown permission mode ${JSON.stringify(value)}: use one of ${BOUNDARY_SCHEMAS.PermissionMode.enum.join(', ')}.` };
}

/** Checks an `agentSession` input, as checkAgentRunInput does a run's. */
export function checkSessionInput(input: unknown, continuing: boolean): asserts input is SessionInput {
  const found = problems(BOUNDARY_SCHEMAS.SessionInput, input);
  if (isObject(input) && input.continued !== undefined && !continuing) {
    found.push('"continued" is set by keel when a session continues as new, never by a caller');
  }
  if (found.length > 0) throw invalidInput('agentSession', found, '{"agent": "<name>", "state"?: {...}}');
}

type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

function parseOperation<T>(schema: JsonSchema, value: unknown, what: string, example: string): Parsed<T> {
  const found = problems(schema, value);
  return found.length === 0 ? { ok: true, value: value as T } : { ok: false, error: `Invalid ${what}: ${found.join('; ')}. Expected ${example}.` };
}

/** A session's `send`: `{ "message": "...", "wait"?: boolean }`, or why it is not one. */
export const parseSend = (value: unknown): Parsed<SendInput> => parseOperation(BOUNDARY_SCHEMAS.SendInput, value, 'send', '{"message": "...", "wait"?: true | false}');
export const parseRewind = (value: unknown): Parsed<RewindInput> => parseOperation(BOUNDARY_SCHEMAS.RewindInput, value, 'rewind', '{"checkpoint": "<id from the status query>"}');
export const parseNewSession = (value: unknown, what: 'fork' | 'clear'): Parsed<NewSessionInput> =>
  value === undefined || value === null ? { ok: true, value: {} } : parseOperation(BOUNDARY_SCHEMAS.NewSessionInput, value, what, 'nothing, or {"workflowId": "<id>"}');
export const parseEnd = (value: unknown): Parsed<EndInput> =>
  value === undefined || value === null ? { ok: true, value: {} } : parseOperation(BOUNDARY_SCHEMAS.EndInput, value, 'end', 'nothing, or {"reason": "logout" | "prompt_input_exit" | "other"}');
