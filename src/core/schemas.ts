/**
 * What crosses a workflow boundary from outside, as zod schemas in one place: the input of
 * `agentRun` and `agentMonitor`, approval decisions, inject messages, permission modes, hook
 * configuration. Any Temporal client in any language may send anything, so each schema carries
 * the sentence that names what is wrong (`x-message`, `{got}` standing for the value).
 *
 * Workflows do not load zod (it costs every cached run about 0.5 MB, src/core/schema-check.ts):
 * `npm run contract` writes these schemas as JSON Schema into boundary-schemas.ts, and the
 * workflows' checks (boundary.ts) read those with schema-check.ts. Hook configuration is checked
 * here, with zod, where agents are defined. The types in run.ts, monitor.ts, approval.ts and
 * hooks.ts are checked against these schemas at the end of this file, so neither can change
 * without the other; test/contract.test.ts fails when boundary-schemas.ts lags.
 */
import { msToNumber } from '@temporalio/common/lib/time.js';
import { z } from 'zod';
import type { ApprovalDecision } from './approval.js';
import type { BackgroundReport, ParentLink } from './background.js';
import { HOOK_EVENTS, unsupportedHookReason, type CommandHook, type HookEvent, type HookMatcher, type HttpHook, type HooksConfig } from './hooks.js';
import type { JsonValue } from './json.js';
import { CONTEXT_BYTES, utf8Bytes } from './limits.js';
import { STATE_BYTES } from './state.js';
import { normalizePath, parseRule, type PermissionSettings } from './permissions/index.js';
import type { MonitorBudgets, MonitorCarried, MonitorInput, MonitorOptions, TurnRetryRule } from './monitor.js';
import type { AgentRunInput, ContinuedState, ParentRun, RunOptions, RunOverrides } from './run.js';
import type { EndInput, NewSessionInput, RewindInput, SendInput, SessionCarried, SessionInput, SessionOptions, SessionOrigin } from './session.js';

/** permissions.ts's PermissionMode, reached through run.ts. */
type PermissionMode = NonNullable<RunOverrides['permissionMode']>;

// ---------------------------------------------------------------------------------------------
// Problems, in words

/** A path as a person reads it: `"agent"` at the top, `budgets.maxTurns` and `tools[1]` below. */
function pathText(path: readonly PropertyKey[], root?: string): string {
  let text = root ?? '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else text += text === '' ? String(key) : `.${String(key)}`;
  }
  return root === undefined && path.length === 1 && typeof path[0] === 'string' ? `"${text}"` : text;
}

/**
 * Each issue as one sentence: the field's path, then what is wrong with it (the schema's own
 * message), one per unknown key. `root` prefixes every path and puts a colon after it (hooks are
 * reported as `hooks.PreToolUse[0].timeout: must be ...`).
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], root?: string): string[] {
  const out: string[] = [];
  const say = (path: readonly PropertyKey[], message: string) => {
    if (path.length === 0 && root === undefined) out.push(message);
    else out.push(`${pathText(path, root)}${root === undefined ? ' ' : ': '}${message}`);
  };
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const custom = !issue.message.startsWith('Unrecognized key');
      for (const key of issue.keys) say([...issue.path, key], custom ? issue.message : 'is not a field keel knows; remove it');
    } else if (issue.code === 'invalid_union' && issue.errors.length > 0 && issue.message === 'Invalid input') {
      // No option matched: the option closest to matching says best what is wrong.
      const closest = [...issue.errors].sort((a, b) => a.length - b.length)[0]!;
      out.push(...describeIssues(closest.map((i) => ({ ...i, path: [...issue.path, ...i.path] })), root));
    } else {
      say(issue.path, issue.message);
    }
  }
  return out;
}

type Checked<T> = { ok: true; value: T } | { ok: false; problems: string[] };

function check<T>(schema: z.ZodType<T>, value: unknown, root?: string): Checked<T> {
  const parsed = schema.safeParse(value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, problems: describeIssues(parsed.error.issues, root) };
}

// ---------------------------------------------------------------------------------------------
// Pieces

/** The sentence a check says when a value does not fit (after the field's path); `{got}` is the value. */
const said = <T extends z.ZodType>(schema: T, message: string): T => schema.meta({ 'x-message': message });
const nonBlank = (message: string) => said(z.string({ error: message }).regex(/\S/, { error: message }), message);
const nonEmpty = (message: string) => said(z.string({ error: message }).min(1, { error: message }), message);
const count = (message: string) => said(z.number({ error: message }).min(0, { error: message }), message);
const positiveInt = (message: string) => said(z.number({ error: message }).int({ error: message }).min(1, { error: message }), message);
const strings = (message: string) => said(z.array(z.string({ error: message }), { error: message }), message);
const text = (message: string) => said(z.string({ error: message }), message);

function durationMs(value: number | string): number {
  try {
    return msToNumber(value as never);
  } catch {
    return Number.NaN;
  }
}

/** Milliseconds, or a string such as `'2h'`, `'30m'`, `'1 day'`: more than zero (boundary.ts checks that part). */
const duration = (message: string) =>
  z
    .union([z.number(), z.string()], { error: message })
    .refine((v) => {
      const ms = durationMs(v);
      return Number.isFinite(ms) && ms > 0;
    }, { error: message })
    .meta({ description: "A positive duration: milliseconds, or a string such as '90s', '30m', '2h', '1 day'.", 'x-message': message, 'x-duration': true });

/** Any JSON value: a payload that reached the workflow is JSON already, so only its type is stated. */
export const jsonValueSchema = z.custom<JsonValue>(() => true).meta({ description: 'Any JSON value.' });

export const permissionModeSchema = z
  .enum(['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'], {
    error: (iss) => `must be one of default, acceptEdits, plan, dontAsk, bypassPermissions, got ${JSON.stringify(iss.input)}`,
  })
  .meta({ 'x-message': 'must be one of default, acceptEdits, plan, dontAsk, bypassPermissions, got {got}' });

/** Plain JSON that the run's tools and instructions see; at most 64 KB. */
const contextSchema = jsonValueSchema
  .refine((v) => utf8Bytes(JSON.stringify(v) ?? '') <= CONTEXT_BYTES, {
    error: `must be at most ${CONTEXT_BYTES / 1024} KB of JSON (pass references, such as IDs, not data)`,
  })
  .meta({ description: `Plain JSON the run's tools (ctx.context) and instructions see, at most ${CONTEXT_BYTES / 1024} KB.` });

const STATE_MESSAGE = 'must be a JSON object of keys and values, such as { "user": "ada", "plan": "pro" }';

/** A run's state: a JSON object (any values), at most STATE_BYTES (boundary.ts checks the size). */
export const stateValuesSchema = z
  .record(z.string(), jsonValueSchema, { error: STATE_MESSAGE })
  .meta({ description: `A run's state: plain JSON values by key, at most ${STATE_BYTES / 1024} KB. Tools, hooks and middleware read and write it (ctx.state); it fills {key} placeholders in static instructions.`, 'x-message': STATE_MESSAGE });

const object = (message: string) => (iss: { code: string }) => (iss.code === 'invalid_type' ? message : undefined);
/** An object's sentences: when it is not an object, and for a field it does not take. */
const objectSaid = (message: string, unknown = 'is not a field keel knows; remove it') => ({ 'x-message': message, 'x-unknown': unknown });

export const runOverridesSchema = z
  .object(
    {
      model: nonEmpty('must be "provider:model", such as "openai:gpt-4.1"').optional(),
      maxTurns: positiveInt('must be a whole number of at least 1').optional(),
      permissionMode: permissionModeSchema.optional(),
      instructions: text('must be a string (the system prompt)').optional(),
      tools: strings('must be an array of tool names').optional(),
    },
    { error: object('must be an object such as { "model": "openai:gpt-4.1", "maxTurns": 5 }') },
  )
  .meta({ description: "Per-run changes to the agent, recorded in the run's spec.", ...objectSaid('must be an object such as { "model": "openai:gpt-4.1", "maxTurns": 5 }') });

const STREAM_SAID = 'must be true, false or an object such as { "batchMs": 100 }';
/** Live streaming: on, off, or on with the model activity's batch interval. */
export const streamSettingSchema = said(
  z.union([z.boolean(), z.strictObject({ batchMs: positiveInt('must be a whole number of milliseconds, at least 1').optional() })], { error: STREAM_SAID }),
  STREAM_SAID,
).meta({ description: 'Live streaming: deltas and events published to the run\'s stream as they happen. { "batchMs" } sets how long deltas are gathered into one batch (default 100).' });

export const runOptionsSchema = z
  .object(
    {
      continueAsNewAfterEvents: positiveInt('must be a whole number of history events, at least 1').optional(),
      stream: streamSettingSchema.optional(),
    },
    { error: object('must be an object such as { "continueAsNewAfterEvents": 10000 }') },
  )
  .meta(objectSaid('must be an object such as { "continueAsNewAfterEvents": 10000 }'));

const parentRunSchema = z
  .object({
    workflowId: z.string(),
    callId: z.string(),
    depth: z.number().int().min(1),
    maxDepth: z.number().int().min(0),
    forwardEvents: z.boolean().optional(),
    remembered: z.array(z.string()).optional(),
  })
  .meta({ description: "Set by keel for a sub-agent's run: the run and call it answers, and how deep it is." });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** State a run carries into its next execution: keel's own, checked only for being an object. */
const continuedStateSchema = z
  .custom<ContinuedState>(isObject, { error: "is keel's own state for continue-as-new, an object" })
  .meta({ description: 'Set by keel when a run continues as new; refused from any other caller.', type: 'object' });

export const agentRunInputSchema = z
  .strictObject(
    {
      agent: nonEmpty('must be a non-empty string').meta({ description: 'Name of a registered agent.' }),
      input: text('must be a string (the prompt)').meta({ description: "The user's prompt." }),
      context: contextSchema.optional(),
      state: stateValuesSchema.optional(),
      overrides: runOverridesSchema.optional(),
      options: runOptionsSchema.optional(),
      continued: continuedStateSchema.optional(),
      parent: parentRunSchema.optional(),
    },
    { error: (iss) => (iss.code === 'invalid_type' ? 'the input must be a JSON object' : undefined) },
  )
  .meta({ title: 'agentRun input', ...objectSaid('the input must be a JSON object') });

/** Budgets of a monitor: counts 0 or more, durations positive. */
export const monitorBudgetsSchema = z
  .object(
    {
      maxTurns: count('must be a number, 0 or more').optional().meta({ description: 'Monitor turns; default 50; 0 means no limit.' }),
      maxInputTokens: count('must be a number, 0 or more').optional(),
      maxOutputTokens: count('must be a number, 0 or more').optional(),
      maxCostUsd: count('must be a number, 0 or more').optional(),
      wallclock: duration("must be a positive duration (milliseconds, or a string such as '2h')").optional(),
      turnTimeout: duration("must be a positive duration (milliseconds, or a string such as '10m')").optional(),
    },
    { error: object('must be an object such as { "maxTurns": 20, "wallclock": "2h" }') },
  )
  .meta(objectSaid('must be an object such as { "maxTurns": 20, "wallclock": "2h" }'));

const turnRetryRuleSchema = z.object({
  errorType: text('must be an error type such as "KeelProviderTransientError"').optional(),
  action: said(z.enum(['retry', 'skip', 'abort'], { error: 'must be "retry", "skip" or "abort"' }), 'must be "retry", "skip" or "abort"'),
  maxAttempts: positiveInt('must be a whole number of at least 1').optional(),
});

const toolNaming = z.object({
  name: nonEmpty('must be a non-empty tool name').optional(),
  description: text('must be a string').optional(),
});

export const monitorOptionsSchema = z
  .object(
    {
      stream: streamSettingSchema.optional(),
      continuePrompt: text('must be a string').optional(),
      doneTool: toolNaming.optional(),
      scheduleTool: toolNaming
        .extend({ maxDelaySeconds: said(z.number({ error: 'must be a number of seconds, more than 0' }).positive({ error: 'must be a number of seconds, more than 0' }), 'must be a number of seconds, more than 0').optional() })
        .optional(),
      maxDeferSeconds: said(z.number({ error: 'must be a number of seconds, more than 0' }).positive({ error: 'must be a number of seconds, more than 0' }), 'must be a number of seconds, more than 0').optional(),
      prices: said(
        z.record(z.string(), z.object({ input: z.number(), output: z.number() }), { error: 'must map "provider:model" to { "input": <$ per million tokens>, "output": <...> }' }),
        'must map "provider:model" to { "input": <$ per million tokens>, "output": <...> }',
      ).optional(),
      turnRetry: said(
        z.array(turnRetryRuleSchema, { error: 'must be an array of rules such as { "action": "retry", "maxAttempts": 3 }' }),
        'must be an array of rules such as { "action": "retry", "maxAttempts": 3 }',
      ).optional(),
      continueAsNewEveryTurns: positiveInt('must be a whole number of turns, at least 1').optional(),
      contextTokens: positiveInt('must be a whole number of tokens, at least 1').optional(),
    },
    { error: object('must be an object') },
  )
  .meta(objectSaid('must be an object'));

const parentLinkSchema = z
  .object({ workflowId: z.string(), name: z.string(), depth: z.number().int().min(1), maxDepth: z.number().int().min(0) })
  .meta({ description: 'Set by keel for a background agent: the run that spawned it, which hears its reports.' });

const monitorCarriedSchema = z
  .custom<MonitorCarried>(isObject, { error: "is keel's own state for continue-as-new, an object" })
  .meta({ description: 'Set by keel when a monitor continues as new; refused from any other caller.', type: 'object' });

export const monitorInputSchema = z
  .strictObject(
    {
      agent: nonEmpty('must be a non-empty string').meta({ description: 'Name of a registered agent.' }),
      goal: nonBlank('must be a non-empty string (the first prompt)').meta({ description: "The monitor's goal: its first turn's prompt." }),
      context: contextSchema.optional(),
      state: stateValuesSchema.optional(),
      overrides: runOverridesSchema.optional(),
      budgets: monitorBudgetsSchema.optional(),
      options: monitorOptionsSchema.optional(),
      continued: monitorCarriedSchema.optional(),
      parent: parentLinkSchema.optional(),
      startAt: said(z.number({ error: 'must be a time in epoch milliseconds' }), 'must be a time in epoch milliseconds').optional().meta({ description: 'When to take the first turn (epoch milliseconds); default now.' }),
    },
    { error: (iss) => (iss.code === 'invalid_type' ? 'the input must be a JSON object' : undefined) },
  )
  .meta({ title: 'agentMonitor input', ...objectSaid('the input must be a JSON object') });

const sessionCarriedSchema = z
  .custom<SessionCarried>(isObject, { error: "is keel's own state for continue-as-new, an object" })
  .meta({ description: 'Set by keel when a session continues as new; refused from any other caller.', type: 'object' });

const sessionOriginSchema = z
  .custom<SessionOrigin>(isObject, { error: "is keel's own, set for a session made by fork or clear: an object" })
  .meta({ description: 'Set by keel for a session made by fork or clear of another.', type: 'object' });

/** A session's state: a JSON object of keys and values, at most 64 KB. */
const sessionStateSchema = said(
  z.record(z.string(), jsonValueSchema, { error: 'must be a JSON object of keys and values' }),
  'must be a JSON object of keys and values',
)
  .refine((v) => utf8Bytes(JSON.stringify(v) ?? '') <= CONTEXT_BYTES, { error: `must be at most ${CONTEXT_BYTES / 1024} KB of JSON` })
  .meta({ description: `The session's state: a JSON key-value map, at most ${CONTEXT_BYTES / 1024} KB, handed to each run and carried through fork, clear and continue-as-new.` });

export const sessionOptionsSchema = z
  .object(
    {
      contextTokens: positiveInt('must be a whole number of tokens, at least 1').optional().meta({ description: 'The model sees at most about this many tokens of the conversation; default 50,000.' }),
      continueAsNewAfterEvents: positiveInt('must be a whole number of history events, at least 1').optional(),
      continueAsNewAfterUpdates: said(
        z.number({ error: 'must be a whole number of Updates, from 1 to 1800' }).int({ error: 'must be a whole number of Updates, from 1 to 1800' }).min(1, { error: 'must be a whole number of Updates, from 1 to 1800' }).max(1800, { error: 'must be a whole number of Updates, from 1 to 1800' }),
        'must be a whole number of Updates, from 1 to 1800',
      )
        .optional()
        .meta({ description: 'Continue as new once an execution has accepted this many Updates (default and most 1,800: Temporal accepts 2,000).' }),
      stream: streamSettingSchema.optional(),
    },
    { error: object('must be an object such as { "contextTokens": 50000 }') },
  )
  .meta(objectSaid('must be an object such as { "contextTokens": 50000 }'));

export const sessionInputSchema = z
  .strictObject(
    {
      agent: nonEmpty('must be a non-empty string').meta({ description: 'Name of a registered agent: the one that answers the first message.' }),
      state: sessionStateSchema.optional(),
      options: sessionOptionsSchema.optional(),
      origin: sessionOriginSchema.optional(),
      continued: sessionCarriedSchema.optional(),
    },
    { error: (iss) => (iss.code === 'invalid_type' ? 'the input must be a JSON object' : undefined) },
  )
  .meta({ title: 'agentSession input', ...objectSaid('the input must be a JSON object') });

export const sendInputSchema = z
  .strictObject(
    {
      message: nonBlank('must be a non-empty string (the message)').meta({ description: 'The user message.' }),
      wait: said(z.boolean({ error: 'must be true or false' }), 'must be true or false').optional().meta({ description: "Answer with the run's result (default), or with its ID at once." }),
    },
    { error: (iss) => (iss.code === 'invalid_type' ? 'send takes { "message": "..." }' : iss.code === 'unrecognized_keys' ? 'is not a field of send' : undefined) },
  )
  .meta({ title: 'send (Update)', ...objectSaid('send takes { "message": "..." }', 'is not a field of send') });

export const rewindInputSchema = z
  .strictObject(
    { checkpoint: nonEmpty('must be the ID of a checkpoint, as the status query lists them').meta({ description: 'The checkpoint whose message and everything after it are removed.' }) },
    { error: (iss) => (iss.code === 'invalid_type' ? 'rewind takes { "checkpoint": "<id>" }' : iss.code === 'unrecognized_keys' ? 'is not a field of rewind' : undefined) },
  )
  .meta({ title: 'rewind (Update)', ...objectSaid('rewind takes { "checkpoint": "<id>" }', 'is not a field of rewind') });

export const newSessionInputSchema = z
  .strictObject(
    { workflowId: nonEmpty('must be a non-empty workflow ID').optional().meta({ description: "The new session's workflow ID; default: derived from this one's." }) },
    { error: (iss) => (iss.code === 'invalid_type' ? 'takes nothing, or { "workflowId": "<id>" }' : iss.code === 'unrecognized_keys' ? 'is not a field; it takes workflowId' : undefined) },
  )
  .meta({ title: 'fork and clear (Updates)', ...objectSaid('takes nothing, or { "workflowId": "<id>" }', 'is not a field; it takes workflowId') });

export const endInputSchema = z
  .strictObject(
    {
      reason: said(z.enum(['logout', 'prompt_input_exit', 'other'], { error: (iss) => `must be logout, prompt_input_exit or other, got ${JSON.stringify(iss.input)}` }), 'must be logout, prompt_input_exit or other, got {got}')
        .optional()
        .meta({ description: "The SessionEnd hooks' reason; default other." }),
    },
    { error: (iss) => (iss.code === 'invalid_type' ? 'end takes nothing, or { "reason": "logout" }' : iss.code === 'unrecognized_keys' ? 'is not a field of end' : undefined) },
  )
  .meta({ title: 'end (Update)', ...objectSaid('end takes nothing, or { "reason": "logout" }', 'is not a field of end') });

// ---------------------------------------------------------------------------------------------
// Signals and Updates

export const approvalDecisionSchema = z
  .strictObject(
    {
      callId: nonEmpty('must be the ID of a pending call').meta({ description: "The pending call's ID, as the status query lists it." }),
      decision: said(z.enum(['allow', 'deny'], { error: (iss) => `must be "allow" or "deny", got ${JSON.stringify(iss.input)}` }), 'must be "allow" or "deny", got {got}'),
      reason: text('must be a string').optional().meta({ description: "Why: the model reads a deny's reason as the call's result." }),
      arguments: said(z.record(z.string(), z.unknown(), { error: 'must be a JSON object (the edited arguments of the call)' }), 'must be a JSON object (the edited arguments of the call)')
        .optional()
        .meta({ description: 'Edited arguments to run the call with instead; checked again (schema, policy, guardrails).' }),
      remember: said(z.boolean({ error: 'must be true or false' }), 'must be true or false').optional().meta({ description: 'Allow calls like this one again for the rest of the run (an allow rule is added).' }),
    },
    {
      error: (iss) =>
        iss.code === 'invalid_type' ? 'it must be a JSON object' : iss.code === 'unrecognized_keys' ? 'is not a field of a decision' : undefined,
    },
  )
  .superRefine((d, ctx) => {
    if (d.arguments !== undefined && d.decision === 'deny') {
      ctx.addIssue({ code: 'custom', path: ['arguments'], message: 'can only be edited when the decision is "allow"' });
    }
    if (d.remember === true && d.decision === 'deny') ctx.addIssue({ code: 'custom', path: ['remember'], message: 'only applies to "allow"' });
  })
  .meta({ title: 'approve (Update and Signal)', ...objectSaid('it must be a JSON object', 'is not a field of a decision') });

export const clientToolResultSchema = z
  .strictObject(
    {
      callId: nonEmpty('must be the ID of a call waiting for a client').meta({ description: "The call's ID, as the clientToolCalls query lists it." }),
      output: jsonValueSchema.optional().meta({ description: "The call's output (any JSON; checked against the tool's output schema, when it has one)." }),
      error: nonBlank('must be a non-empty message (the model reads it as the call\'s result)').optional().meta({ description: 'Why the call failed on the client: the model reads it as the call\'s result.' }),
    },
    {
      error: (iss) =>
        iss.code === 'invalid_type' ? 'it must be a JSON object' : iss.code === 'unrecognized_keys' ? 'is not a field of a client tool result' : undefined,
    },
  )
  .superRefine((r, ctx) => {
    const given = ['output', 'error'].filter((k) => k in r && (r as Record<string, unknown>)[k] !== undefined);
    if (given.length !== 1) ctx.addIssue({ code: 'custom', path: [], message: 'give either "output" or "error", not both and not neither' });
  })
  .meta({ title: 'clientToolResult (Update)', ...objectSaid('it must be a JSON object', 'is not a field of a client tool result') });

export const injectInputSchema = z
  .union([nonBlank('must be a non-empty message'), z.object({ message: nonBlank('must be a non-empty message') })], {
    error: 'inject takes a non-empty message: a string, or { "message": "..." }',
  })
  .meta({
    title: 'inject (Update and Signal)',
    description: 'A message for the next turn: a string, or { "message": "..." }.',
    'x-message': 'inject takes a non-empty message: a string, or { "message": "..." }',
  });

export const backgroundReportSchema = z
  .object({
    name: z.string(),
    seq: z.number().int().min(1),
    kind: z.enum(['alert', 'completed', 'failed', 'stopped']),
    text: z.string(),
    at: z.string(),
  })
  .meta({ description: 'From a background agent to the run that spawned it.' });

// ---------------------------------------------------------------------------------------------
// Hook configuration (Claude Code's settings shape)

const HOOK_EVENT_NAMES = HOOK_EVENTS;

const COMMAND_EXAMPLE = '{ "type": "command", "command": "./.claude/hooks/check.sh", "timeout": 30 }';
const HTTP_EXAMPLE = '{ "type": "http", "url": "http://localhost:8080/hook", "timeout": 30 }';
const GROUP_EXAMPLE = `{ "matcher": "Bash|Edit", "hooks": [${COMMAND_EXAMPLE}] }`;

/** Fields Claude Code accepts that change nothing here (they drive its UI): accepted, dropped. */
const UI_ONLY = { statusMessage: z.unknown().optional(), once: z.unknown().optional() };

const hookCommon = <T extends 'command' | 'http'>(type: T) => ({
  timeout: z
    .number({ error: (iss) => `must be a positive number of seconds (got ${JSON.stringify(iss.input)})` })
    .positive({ error: (iss) => `must be a positive number of seconds (got ${JSON.stringify(iss.input)})` })
    .optional(),
  failClosed: z.boolean({ error: 'must be true or false' }).optional(),
  type: z.literal(type),
});

const unknownHandlerField = (type: 'command' | 'http', fields: string) => (iss: { code: string }) =>
  iss.code === 'unrecognized_keys' ? `unknown field for a ${type} hook; it takes ${fields}` : undefined;

const commandHookSchema = z.strictObject(
  {
    ...hookCommon('command'),
    command: nonBlank(`is missing: a command hook needs the shell command to run, like ${COMMAND_EXAMPLE}`),
    args: strings('must be an array of strings (the arguments of "command", run without a shell)').optional(),
    // Only "bash" gets this far (unsupportedHookReason); keel runs shell-form hooks with sh -c.
    shell: z.unknown().optional(),
    ...UI_ONLY,
  },
  { error: unknownHandlerField('command', 'type, command, args, timeout, failClosed, shell') },
);

const httpHookSchema = z.strictObject(
  {
    ...hookCommon('http'),
    url: z
      .string({ error: (iss) => `must be an http:// or https:// URL (got ${JSON.stringify(iss.input)}), like ${HTTP_EXAMPLE}` })
      .regex(/^https?:\/\/[^\s/]+/i, { error: (iss) => `must be an http:// or https:// URL (got ${JSON.stringify(iss.input)}), like ${HTTP_EXAMPLE}` }),
    headers: z.record(z.string(), z.string(), { error: 'must be an object of string values, like { "Authorization": "Bearer $MY_TOKEN" }' }).optional(),
    allowedEnvVars: strings('must be an array of environment variable names, like ["MY_TOKEN"]').optional(),
    ...UI_ONLY,
  },
  { error: unknownHandlerField('http', 'type, url, headers, allowedEnvVars, timeout, failClosed') },
);

/** Claude Code's exact-match alphabet (see hookMatches); anything else must be a regular expression. */
const EXACT_MATCHER = /^[A-Za-z0-9_\- ,|]+$/;

function matcherProblem(matcher: string): string | undefined {
  if (matcher === '' || matcher === '*' || EXACT_MATCHER.test(matcher)) return undefined;
  try {
    new RegExp(matcher);
    return undefined;
  } catch (err) {
    return `is not a valid regular expression (${(err as Error).message}); use a tool name, names separated by "|", or a pattern such as "mcp__memory__.*"`;
  }
}

function hookGroupSchema(event: HookEvent, unsupported: (event: HookEvent, handler: unknown) => string | undefined) {
  const handler = z
    .unknown()
    .superRefine((h, ctx) => {
      if (!isObject(h)) {
        ctx.addIssue({ code: 'custom', message: `must be a hook handler, like ${COMMAND_EXAMPLE} or ${HTTP_EXAMPLE}` });
        return;
      }
      const why = unsupported(event, h);
      if (why) ctx.addIssue({ code: 'custom', message: `keel cannot run ${why}` });
    })
    .pipe(
      z.discriminatedUnion('type', [commandHookSchema, httpHookSchema], {
        error: (iss) => `must be "command" or "http" (got ${JSON.stringify((iss.input as { type?: unknown } | undefined)?.type)}), like ${COMMAND_EXAMPLE}`,
      }),
    );
  return z.strictObject(
    {
      matcher: z
        .string({ error: 'must be a string: a tool name, names separated by "|", or a regular expression such as "mcp__.*"' })
        .superRefine((m, ctx) => {
          const problem = matcherProblem(m);
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        })
        .optional(),
      hooks: z.array(handler, { error: `must be an array of hook handlers, like [${COMMAND_EXAMPLE}]` }),
    },
    {
      error: (iss) =>
        iss.code === 'invalid_type'
          ? `must be a matcher group, like ${GROUP_EXAMPLE}`
          : iss.code === 'unrecognized_keys'
            ? `unknown field; a matcher group has "matcher" and "hooks", like ${GROUP_EXAMPLE}`
            : undefined,
    },
  );
}

let hooksSchemaCache: z.ZodType | undefined;

function hooksConfigSchema(unsupported: (event: HookEvent, handler: unknown) => string | undefined): z.ZodType {
  return (hooksSchemaCache ??= z.strictObject(
    Object.fromEntries(
      HOOK_EVENT_NAMES.map((e) => [e, z.array(hookGroupSchema(e, unsupported), { error: `must be an array of matcher groups, like [${GROUP_EXAMPLE}]` }).optional()]),
    ),
    {
      error: (iss) => {
        if (iss.code === 'invalid_type') return `must be an object mapping event names to matcher groups, like { "PreToolUse": [${GROUP_EXAMPLE}] }`;
        if (iss.code !== 'unrecognized_keys') return undefined;
        const key = iss.keys.length === 1 ? iss.keys[0]!.toLowerCase() : undefined;
        const near = HOOK_EVENT_NAMES.find((e) => e.toLowerCase() === key);
        return `unknown event${near ? ` (did you mean "${near}"?)` : ''}; keel supports ${HOOK_EVENT_NAMES.join(', ')}`;
      },
    },
  ));
}

/** Drops what keel accepts and ignores (UI-only fields, `shell: "bash"`), keeping the order of fields. */
function normalizeHooks(config: Record<string, HookMatcher[] | undefined>): HooksConfig {
  const out: HooksConfig = {};
  for (const [event, groups] of Object.entries(config)) {
    if (groups === undefined) continue;
    out[event as HookEvent] = groups.map((g) => ({
      ...(g.matcher !== undefined && { matcher: g.matcher }),
      hooks: g.hooks.map((h) => {
        const { statusMessage: _s, once: _o, shell: _sh, ...kept } = h as HookHandlerParsed;
        return kept as CommandHook | HttpHook;
      }),
    }));
  }
  return out;
}

type HookHandlerParsed = (CommandHook | HttpHook) & { statusMessage?: unknown; once?: unknown; shell?: unknown };

/**
 * Checks hooks written in Claude Code's settings shape and returns them normalized (UI-only
 * fields dropped). Throws an Error naming `where` and each bad field, with what a valid entry
 * looks like. Unlike loadClaudeSettings, which skips what keel does not support, this refuses
 * it (unsupportedHookReason): a hook written for keel should run exactly as written.
 */
export function checkHooksConfig(config: unknown, where: string): HooksConfig {
  if (config === undefined || config === null) return {};
  const checked = check(hooksConfigSchema(unsupportedHookReason), config, 'hooks');
  if (!checked.ok) throw new Error(`${where}: ${checked.problems.join('; ')}`);
  return normalizeHooks(checked.value as Record<string, HookMatcher[] | undefined>);
}

// ---------------------------------------------------------------------------------------------
// Permission settings (recorded in an agent's spec)

/** How a value reads in a message: `"proj"`, `number 3`, `an array`. */
function shown(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

const SETTINGS_KEYS = ['mode', 'allow', 'ask', 'deny', 'cwd', 'home'];

const ruleList = (list: 'allow' | 'ask' | 'deny') =>
  z
    .array(
      z.string({ error: (iss) => `must be a rule string, got ${shown(iss.input)}.` }).transform((rule, ctx) => {
        try {
          return parseRule(rule).text;
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: `${(err as Error).message}`, params: { rule: true } });
          return z.NEVER;
        }
      }),
      { error: (iss) => `must be an array of rule strings, got ${shown(iss.input)}.` },
    )
    .optional()
    .describe(`${list} rules in Claude Code's syntax, such as "Bash(npm test)" or "Read(./.env)".`);

const absolutePath = z
  .string({ error: (iss) => `must be an absolute POSIX path such as "/home/me/project", got ${shown(iss.input)}.` })
  .refine((p) => p.startsWith('/'), { error: (iss) => `must be an absolute POSIX path such as "/home/me/project", got ${shown(iss.input)}.` })
  .transform(normalizePath)
  .optional();

export const permissionSettingsSchema = z.strictObject(
  {
    mode: z.enum(['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'], { error: (iss) => `must be one of default, acceptEdits, plan, dontAsk, bypassPermissions, got ${shown(iss.input)}.` }).optional(),
    allow: ruleList('allow'),
    ask: ruleList('ask'),
    deny: ruleList('deny'),
    cwd: absolutePath,
    home: absolutePath,
  },
  {
    error: (iss) =>
      iss.code === 'invalid_type'
        ? `expected an object such as { mode: 'default', allow: ['Bash(npm test)'], deny: ['Read(./.env)'] }, got ${shown(iss.input)}.`
        : iss.code === 'unrecognized_keys'
          ? `unknown key "${iss.keys[0]}"; the keys are ${SETTINGS_KEYS.join(', ')}.`
          : undefined,
  },
);

/** Validates settings (types, rule syntax, mode, absolute cwd and home); the error names `where`. Returns them normalized. */
export function checkPermissionSettings(settings: unknown, where: string): PermissionSettings {
  const parsed = permissionSettingsSchema.safeParse(settings);
  if (parsed.success) {
    return Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined)) as PermissionSettings;
  }
  const issue = parsed.error.issues[0]!;
  const path = issue.path.map((k) => (typeof k === 'number' ? `[${k}]` : String(k))).join('').replace(/^\./, '');
  // A rule's own syntax error reads "allow[1]: Invalid permission rule ..."; the others "allow[1] must be ...".
  const sep = issue.code === 'custom' && (issue as { params?: { rule?: boolean } }).params?.rule ? ': ' : ' ';
  if (issue.code === 'unrecognized_keys' || issue.path.length === 0) throw new Error(`${where}: ${issue.message}`);
  throw new Error(`${where}: ${path}${sep}${issue.message}`);
}

// ---------------------------------------------------------------------------------------------
// The types, checked against the schemas: a field added to one and not the other fails `tsc`.

/** True when A and B are the same type (not merely assignable to each other). */
export type Same<A, B> = (<T>() => T extends Flat<A> ? 1 : 2) extends <T>() => T extends Flat<B> ? 1 : 2 ? true : false;
/** Object types compared field by field, however they were written (interface, intersection, inferred). */
type Flat<T> = T extends readonly (infer E)[] ? Flat<E>[] : T extends object ? { [K in keyof T]: Flat<T[K]> } : T;
type Expect<T extends true> = T;
/** Each is `true`, or `tsc` fails: the schema and the type it checks have parted. */
export type SchemaChecks = [
  Expect<Same<z.input<typeof runOverridesSchema>, RunOverrides>>,
  Expect<Same<z.output<typeof runOptionsSchema>, RunOptions>>,
  Expect<Same<z.output<typeof parentRunSchema>, ParentRun>>,
  Expect<Same<z.output<typeof agentRunInputSchema>, AgentRunInput>>,
  Expect<Same<z.output<typeof turnRetryRuleSchema>, TurnRetryRule>>,
  Expect<Same<z.output<typeof monitorBudgetsSchema>, MonitorBudgets>>,
  Expect<Same<z.output<typeof monitorOptionsSchema>, MonitorOptions>>,
  Expect<Same<z.output<typeof parentLinkSchema>, ParentLink>>,
  Expect<Same<z.output<typeof monitorInputSchema>, MonitorInput>>,
  Expect<Same<z.output<typeof sessionOptionsSchema>, SessionOptions>>,
  Expect<Same<z.output<typeof sessionInputSchema>, SessionInput>>,
  Expect<Same<z.output<typeof sendInputSchema>, SendInput>>,
  Expect<Same<z.output<typeof rewindInputSchema>, RewindInput>>,
  Expect<Same<z.output<typeof newSessionInputSchema>, NewSessionInput>>,
  Expect<Same<z.output<typeof endInputSchema>, EndInput>>,
  Expect<Same<z.output<typeof approvalDecisionSchema>, ApprovalDecision>>,
  Expect<Same<z.output<typeof clientToolResultSchema>, { callId: string; output?: JsonValue; error?: string }>>,
  Expect<Same<z.output<typeof permissionModeSchema>, PermissionMode>>,
  Expect<Same<z.output<typeof backgroundReportSchema>, BackgroundReport>>,
  Expect<Same<z.output<typeof permissionSettingsSchema>, PermissionSettings>>,
  Expect<Same<(typeof HOOK_EVENT_NAMES)[number], HookEvent>>,
  Expect<Same<Omit<z.output<typeof commandHookSchema>, keyof typeof UI_ONLY | 'shell'>, CommandHook>>,
  Expect<Same<Omit<z.output<typeof httpHookSchema>, keyof typeof UI_ONLY>, HttpHook>>,
];
