/**
 * Hooks in Claude Code's format: the same settings shape, the same JSON on stdin, the same exit
 * codes and JSON output, so a project's `.claude/settings.json` hooks run under keel unchanged.
 * Reference: https://code.claude.com/docs/en/hooks ("Hooks reference").
 *
 * Pure: the workflow imports it to decide which hooks an event has and to read their verdicts;
 * the runner that spawns commands and posts to URLs is src/activities/hooks.ts.
 */
import type { StateChanges } from './state.js';
import { oneLine } from './text.js';

export type HookEvent =
  | 'PreToolUse'
  | 'PostToolUse'
  | 'PostToolUseFailure'
  | 'UserPromptSubmit'
  | 'Stop'
  | 'SessionStart'
  | 'SessionEnd'
  | 'SubagentStart'
  | 'SubagentStop';

export const HOOK_EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'UserPromptSubmit',
  'Stop',
  'SessionStart',
  'SessionEnd',
  'SubagentStart',
  'SubagentStop',
] as const satisfies readonly HookEvent[];

export interface CommandHook {
  type: 'command';
  /** Run by `sh -c` in the run's directory; with `args`, the executable spawned directly (Claude Code's exec form). */
  command: string;
  /** Exec form: the argument vector, no shell. `${CLAUDE_PROJECT_DIR}` is replaced in `command` and in each argument. */
  args?: string[];
  /** Seconds before the hook is killed. Default: Claude Code's, see hookTimeoutSeconds. */
  timeout?: number;
  /** keel's own: a hook that fails (crash, timeout, bad output) denies or blocks instead of being ignored. */
  failClosed?: boolean;
}

export interface HttpHook {
  type: 'http';
  /** Receives the hook input as a JSON POST. */
  url: string;
  /** Extra headers; `$VAR` and `${VAR}` in values are replaced from the environment, for variables in `allowedEnvVars` only. */
  headers?: Record<string, string>;
  /** The environment variables header values may use; any other reference becomes an empty string. */
  allowedEnvVars?: string[];
  timeout?: number;
  failClosed?: boolean;
}

export type HookHandler = CommandHook | HttpHook;

export interface HookMatcher {
  /** Which occurrences of the event run the hooks; absent, '' or '*' = all. See hookMatches. */
  matcher?: string;
  hooks: HookHandler[];
}

export type HooksConfig = Partial<Record<HookEvent, HookMatcher[]>>;

/** Claude Code's default timeouts: 600 s for command and http hooks, 30 s on UserPromptSubmit (it holds up every prompt). */
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 600;
export const USER_PROMPT_SUBMIT_TIMEOUT_SECONDS = 30;

export function hookTimeoutSeconds(event: HookEvent, handler: HookHandler): number {
  return handler.timeout ?? (event === 'UserPromptSubmit' ? USER_PROMPT_SUBMIT_TIMEOUT_SECONDS : DEFAULT_HOOK_TIMEOUT_SECONDS);
}

/** The input field each event's matcher is compared with; UserPromptSubmit and Stop have no matcher (it is ignored). */
const MATCHED_FIELD: Partial<Record<HookEvent, string>> = {
  PreToolUse: 'tool_name',
  PostToolUse: 'tool_name',
  PostToolUseFailure: 'tool_name',
  SessionStart: 'source',
  SessionEnd: 'reason',
  SubagentStart: 'agent_type',
  SubagentStop: 'agent_type',
};

/**
 * What a hook can decide on each event:
 * - permission: PreToolUse; allow, ask or deny the call (exit 2 denies).
 * - block: exit 2 or `decision: "block"` blocks the prompt (UserPromptSubmit), keeps the agent
 *   going (Stop, SubagentStop), or puts the reason next to the tool result (PostToolUse*: the tool already ran).
 * - context: may add context, cannot block (exit 2 is only an error the user sees).
 * - none: output is discarded (SessionEnd).
 */
type Control = 'permission' | 'block' | 'context' | 'none';
const CONTROL: Record<HookEvent, Control> = {
  PreToolUse: 'permission',
  PostToolUse: 'block',
  PostToolUseFailure: 'block',
  UserPromptSubmit: 'block',
  Stop: 'block',
  SubagentStop: 'block',
  SessionStart: 'context',
  SubagentStart: 'context',
  SessionEnd: 'none',
};

/** Events whose plain-text stdout (exit 0) becomes context for the model, as in Claude Code. */
const PLAIN_STDOUT_IS_CONTEXT: ReadonlySet<HookEvent> = new Set(['UserPromptSubmit', 'SessionStart']);

// ---------------------------------------------------------------------------------------------
// Config

/**
 * Why keel cannot run a handler Claude Code can: its type (prompt, agent, mcp_tool need a model
 * or an MCP client inside the hook runner) or a field whose meaning keel does not implement.
 * Undefined when keel runs it. loadClaudeSettings skips such handlers; checkHooksConfig (schemas.ts) refuses them.
 */
export function unsupportedHookReason(event: HookEvent, handler: unknown): string | undefined {
  if (!isObject(handler)) return undefined;
  const type = handler.type;
  if (type === 'prompt' || type === 'agent' || type === 'mcp_tool') {
    return `a "${type}" hook: keel runs "command" and "http" hooks only`;
  }
  if (type === 'http' && event === 'SessionStart') return `an http hook on SessionStart: Claude Code runs only command hooks there`;
  if (handler.if !== undefined) {
    return `a hook with an "if" condition: keel does not evaluate permission-rule conditions; narrow it with the matcher or in the script`;
  }
  if (handler.async === true || handler.asyncRewake === true) {
    return `an async hook: keel runs every hook to completion before going on`;
  }
  if (handler.shell !== undefined && handler.shell !== 'bash') {
    return `a hook with "shell": ${JSON.stringify(handler.shell)}: keel runs shell-form hooks with sh -c`;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Matching

/** Claude Code's exact-match alphabet: such a matcher is a name, or names separated by "|" or ",". */
const EXACT_MATCHER = /^[A-Za-z0-9_\- ,|]+$/;

function isMatchAll(matcher: string | undefined): boolean {
  return matcher === undefined || matcher === '' || matcher === '*';
}

/**
 * Whether a matcher selects `target`, by Claude Code's rules: absent, '' or '*' match all; a
 * matcher of letters, digits, '_', '-', spaces, ',' and '|' only is an exact name or a list of
 * them ("Bash", "Edit|Write", "Edit, Write"); anything else is a JavaScript regular expression
 * tested anywhere in the value ("mcp__.*", "^Notebook"). So "mcp__memory" matches no tool:
 * it is an exact name. Without a target only match-all matchers match.
 */
export function hookMatches(matcher: string | undefined, target: string | undefined): boolean {
  if (isMatchAll(matcher)) return true;
  if (target === undefined) return false;
  const m = matcher as string;
  if (EXACT_MATCHER.test(m)) {
    return m
      .split(/[|,]/)
      .map((name) => name.trim())
      .some((name) => name !== '' && name === target);
  }
  try {
    return new RegExp(m).test(target);
  } catch {
    // checkHooksConfig refuses such a matcher; an unchecked config matches nothing with it.
    return false;
  }
}

/**
 * The handlers to run for an event, in config order. `target` is what the event's matcher
 * selects on: the tool name (Pre/PostToolUse*), the session's source (SessionStart), the end
 * reason (SessionEnd), the agent type (Subagent*). UserPromptSubmit and Stop have no matcher;
 * one there is ignored, as Claude Code does. The same handler listed twice runs once.
 */
export function hooksFor(config: HooksConfig | undefined, event: HookEvent, target?: string): HookHandler[] {
  const groups = config?.[event] ?? [];
  const usesMatcher = MATCHED_FIELD[event] !== undefined;
  const seen = new Set<string>();
  const handlers: HookHandler[] = [];
  for (const group of groups) {
    if (usesMatcher && !hookMatches(group.matcher, target)) continue;
    for (const handler of group.hooks) {
      const key = handlerKey(handler);
      if (seen.has(key)) continue;
      seen.add(key);
      handlers.push(handler);
    }
  }
  return handlers;
}

/** Claude Code runs a handler defined twice once: command hooks are the same by command, http hooks by URL. */
function handlerKey(handler: HookHandler): string {
  return handler.type === 'command' ? JSON.stringify(['command', handler.command, handler.args ?? null]) : JSON.stringify(['http', handler.url]);
}

/** A short label for a handler in events and errors: its command (cut to 80 characters) or its URL. */
export function hookLabel(handler: HookHandler): string {
  if (handler.type === 'http') return handler.url;
  return oneLine([handler.command, ...(handler.args ?? [])].join(' '), 80);
}

// ---------------------------------------------------------------------------------------------
// Input

/** The JSON a hook receives on stdin, or as the body of the POST: Claude Code's field names. */
export type HookInput = Record<string, unknown>;

/** Fields each event's hooks are sure to receive (snake_case, as sent). */
const REQUIRED_FIELDS: Record<HookEvent, readonly string[]> = {
  PreToolUse: ['tool_name', 'tool_input', 'tool_use_id'],
  PostToolUse: ['tool_name', 'tool_input', 'tool_response', 'tool_use_id'],
  PostToolUseFailure: ['tool_name', 'tool_input', 'tool_use_id', 'error'],
  UserPromptSubmit: ['prompt'],
  Stop: ['stop_hook_active'],
  SessionStart: ['source'],
  SessionEnd: ['reason'],
  SubagentStart: ['agent_id', 'agent_type'],
  SubagentStop: ['stop_hook_active', 'agent_id', 'agent_type'],
};

/** Claude Code's examples for these events carry no permission_mode. */
const NO_PERMISSION_MODE: ReadonlySet<HookEvent> = new Set(['SessionStart', 'SessionEnd', 'SubagentStart']);

export type HookInputFields = { sessionId: string; cwd: string; permissionMode?: string; transcriptPath?: string } & Record<string, unknown>;

/**
 * The input for one event's hooks, in Claude Code's shape: session_id, transcript_path, cwd,
 * permission_mode, hook_event_name, then the event's fields. Event fields may be given in
 * camelCase (toolName, toolInput, toolUseId, toolResponse, stopHookActive, lastAssistantMessage,
 * agentId, agentType, ...) or as Claude Code spells them; they are sent in snake_case. Throws
 * when a field the event's hooks rely on is missing (tool_name on PreToolUse, prompt on
 * UserPromptSubmit...): that is a bug in the caller, not in a hook.
 */
export function hookInput(event: HookEvent, fields: HookInputFields): HookInput {
  const { sessionId, cwd, permissionMode, transcriptPath, ...rest } = fields;
  const input: HookInput = { session_id: sessionId };
  if (transcriptPath !== undefined) input.transcript_path = transcriptPath;
  input.cwd = cwd;
  if (permissionMode !== undefined && !NO_PERMISSION_MODE.has(event)) input.permission_mode = permissionMode;
  input.hook_event_name = event;
  if (event === 'Stop' || event === 'SubagentStop') input.stop_hook_active = false;
  for (const [key, value] of Object.entries(rest)) {
    if (value !== undefined) input[snakeCase(key)] = value;
  }
  const missing = REQUIRED_FIELDS[event].filter((f) => input[f] === undefined);
  if (missing.length) throw new Error(`hookInput(${event}): missing ${missing.join(', ')}`);
  return input;
}

function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

// ---------------------------------------------------------------------------------------------
// Output

/** One handler's raw outcome, as the runner observed it. */
export type HookRaw =
  | { kind: 'exit'; code: number; stdout: string; stderr: string }
  | { kind: 'http'; status: number; body: string }
  | { kind: 'failed'; error: string; timedOut: boolean };

export type HookDecision = 'allow' | 'ask' | 'deny' | 'block';

/** What one handler said, read by Claude Code's rules for the event. */
export interface HookVerdict {
  /** The handler's label: its command cut to 80 characters, or its URL. */
  handler: string;
  /** PreToolUse: allow, ask or deny (exit 2 and the legacy decision "block" deny). Other events: block. */
  decision?: HookDecision;
  /** Why: permissionDecisionReason, `reason`, or the stderr of an exit 2. */
  reason?: string;
  /** PreToolUse: the tool's whole new input. */
  updatedInput?: Record<string, unknown>;
  additionalContext?: string;
  /** For the user, not the model. */
  systemMessage?: string;
  /** `"continue": false`: the run should stop, whatever else was decided. */
  stop?: { reason?: string };
  /** keel's own: `"state": { "set"?: {...}, "delete"?: [...] }` writes the run's state. */
  state?: StateChanges;
  /**
   * A non-blocking error (a status other than 0 or 2 without valid JSON, a 2 where the event
   * cannot block, unusable output, a non-2xx answer, a timeout, a crash): reported, decides
   * nothing, unless the handler is fail-closed; then `decision` denies or blocks too.
   */
  error?: string;
}

/**
 * Reads one handler's outcome. `failClosed` applies to handlers that do not set their own: a
 * fail-closed hook that errs denies (PreToolUse) or blocks (events that can block); on events
 * that cannot block (SessionStart, SessionEnd, SubagentStart) it is only an error.
 */
export function interpretHook(event: HookEvent, handler: HookHandler, raw: HookRaw, failClosed: boolean): HookVerdict {
  const label = hookLabel(handler);
  const closed = handler.failClosed ?? failClosed;
  const failed = (error: string): HookVerdict => failure(event, label, error, closed);

  switch (raw.kind) {
    case 'failed':
      return failed(raw.timedOut ? `timed out after ${hookTimeoutSeconds(event, handler)} s` : raw.error);

    case 'http': {
      // Claude Code: a non-2xx answer, like a refused connection, is a non-blocking error; an
      // http hook blocks only through a JSON body.
      if (raw.status < 200 || raw.status > 299) return failed(`answered HTTP ${raw.status}${raw.body.trim() ? `: ${oneLine(raw.body, 200)}` : ''}`);
      const body = raw.body.trim();
      if (body === '') return { handler: label };
      const json = parseObject(body);
      if (!json) return failed(`answered HTTP ${raw.status} with a body that is not a JSON object: ${oneLine(body, 200)}`);
      return fromJson(event, label, json, closed);
    }

    case 'exit': {
      const stdout = raw.stdout.trim();
      const stderr = raw.stderr.trim();
      // Stdout is JSON output when it starts with "{", plain text otherwise.
      const json = stdout.startsWith('{') ? parseObject(stdout) : undefined;
      const badJson = stdout.startsWith('{') && !json;
      if (raw.code === 2) return exit2(event, label, stderr, json, closed);
      if (raw.code === 0) {
        // Claude Code would read broken JSON as plain text; keel reports it, since a hook
        // that printed "{" meant to decide something.
        if (badJson) return failed(`printed output that starts with "{" but is not valid JSON: ${oneLine(stdout, 200)}`);
        if (json) return fromJson(event, label, json, closed);
        if (stdout && PLAIN_STDOUT_IS_CONTEXT.has(event)) return { handler: label, additionalContext: stdout };
        return { handler: label };
      }
      // Another status: valid JSON output alone decides; without it, a non-blocking error.
      if (json && !outputProblem(event, json)) return fromJson(event, label, json, closed);
      return failed(`exited with status ${raw.code}${stderr ? `: ${oneLine(stderr, 300)}` : ''}`);
    }
  }
}

function failure(event: HookEvent, label: string, error: string, failClosed: boolean): HookVerdict {
  const verdict: HookVerdict = { handler: label, error };
  if (!failClosed) return verdict;
  const control = CONTROL[event];
  if (control !== 'permission' && control !== 'block') return verdict;
  return {
    ...verdict,
    decision: control === 'permission' ? 'deny' : 'block',
    reason: `The hook ${label} failed (${error}), and it is fail-closed.`,
  };
}

/** Exit 2: a block on events that can block, with the JSON's own blocking reason or else stderr; an error elsewhere. */
function exit2(event: HookEvent, label: string, stderr: string, json: Record<string, unknown> | undefined, failClosed: boolean): HookVerdict {
  const control = CONTROL[event];
  if (control === 'none' || control === 'context') {
    return { handler: label, error: `exited with status 2, which cannot block ${event}${stderr ? `: ${oneLine(stderr, 300)}` : ''}` };
  }
  // The JSON still counts (context, messages, continue: false); it cannot turn the block into an allow.
  const fromOutput = json && !outputProblem(event, json) ? fromJson(event, label, json, failClosed) : { handler: label };
  const blocking = control === 'permission' ? 'deny' : 'block';
  const ownReason = fromOutput.decision === blocking ? fromOutput.reason : undefined;
  const { updatedInput: _notForABlockedCall, ...kept } = fromOutput;
  return {
    ...kept,
    decision: blocking,
    reason: ownReason ?? (stderr || `The hook ${label} exited with status 2 and gave no reason.`),
  };
}

/** The fields Claude Code reads from a hook's JSON output for this event; a malformed output is a non-blocking error. */
function fromJson(event: HookEvent, label: string, json: Record<string, unknown>, failClosed: boolean): HookVerdict {
  const problem = outputProblem(event, json);
  if (problem) return failure(event, label, `printed invalid output: ${problem}`, failClosed);
  const control = CONTROL[event];
  // SessionEnd: Claude Code discards the output, systemMessage included.
  if (control === 'none') return { handler: label };

  const verdict: HookVerdict = { handler: label };
  if (typeof json.systemMessage === 'string') verdict.systemMessage = json.systemMessage;
  if (json.continue === false) verdict.stop = typeof json.stopReason === 'string' ? { reason: json.stopReason } : {};
  if (isObject(json.state)) verdict.state = json.state as StateChanges;
  const specific = isObject(json.hookSpecificOutput) ? json.hookSpecificOutput : {};
  if (typeof specific.additionalContext === 'string') verdict.additionalContext = specific.additionalContext;

  if (control === 'permission') {
    const decision = specific.permissionDecision;
    if (decision === 'defer') {
      // Claude Code honors "defer" only in `claude -p`, to resume the call later; elsewhere it ignores the result.
      return failure(event, label, `permissionDecision "defer" is not supported by keel; the hook's answer is ignored`, failClosed);
    }
    if (decision === 'allow' || decision === 'ask' || decision === 'deny') {
      verdict.decision = decision;
      if (typeof specific.permissionDecisionReason === 'string') verdict.reason = specific.permissionDecisionReason;
    } else if (json.decision === 'approve' || json.decision === 'block') {
      // Deprecated top-level form: approve = allow, block = deny.
      verdict.decision = json.decision === 'approve' ? 'allow' : 'deny';
      if (typeof json.reason === 'string') verdict.reason = json.reason;
    }
    if (isObject(specific.updatedInput) && verdict.decision !== 'deny') verdict.updatedInput = specific.updatedInput;
  } else if (control === 'block' && json.decision === 'block') {
    verdict.decision = 'block';
    verdict.reason = typeof json.reason === 'string' && json.reason.trim() ? json.reason : `Blocked by the hook ${label}.`;
  }
  return verdict;
}

/** What is wrong with a hook's JSON output for this event (types of the fields keel reads), or undefined. */
function outputProblem(event: HookEvent, json: Record<string, unknown>): string | undefined {
  const notString = (field: string, value: unknown) => value !== undefined && typeof value !== 'string' && `"${field}" must be a string`;
  const problem =
    (json.continue !== undefined && typeof json.continue !== 'boolean' && `"continue" must be true or false`) ||
    notString('stopReason', json.stopReason) ||
    notString('systemMessage', json.systemMessage) ||
    notString('reason', json.reason) ||
    (json.decision !== undefined &&
      json.decision !== 'block' &&
      json.decision !== 'approve' &&
      `"decision" must be "block" (or omitted), got ${JSON.stringify(json.decision)}`);
  if (problem) return problem;
  if (json.state !== undefined) {
    const s = json.state;
    const ok = isObject(s) && (s.set === undefined || isObject(s.set)) && (s.delete === undefined || (Array.isArray(s.delete) && s.delete.every((k) => typeof k === 'string')));
    if (!ok) return `"state" must be an object such as { "set": { "key": "value" }, "delete": ["other"] }`;
  }
  const specific = json.hookSpecificOutput;
  if (specific === undefined) return undefined;
  if (!isObject(specific)) return `"hookSpecificOutput" must be an object`;
  // Claude Code requires hookEventName; one that names another event is surely a mistake.
  if (specific.hookEventName !== undefined && specific.hookEventName !== event) {
    return `hookSpecificOutput.hookEventName is ${JSON.stringify(specific.hookEventName)}, but this is a ${event} hook`;
  }
  const decision = specific.permissionDecision;
  return (
    notString('additionalContext', specific.additionalContext) ||
    notString('permissionDecisionReason', specific.permissionDecisionReason) ||
    (decision !== undefined &&
      !['allow', 'ask', 'deny', 'defer'].includes(decision as string) &&
      `"permissionDecision" must be "allow", "ask" or "deny", got ${JSON.stringify(decision)}`) ||
    (specific.updatedInput !== undefined && !isObject(specific.updatedInput) && `"updatedInput" must be an object (the tool's whole input)`) ||
    undefined
  );
}

// ---------------------------------------------------------------------------------------------
// Combining

/** What all of one event's handlers said together. */
export interface HookResult {
  /** The most restrictive decision: deny > block > ask > allow (see combineHookVerdicts). */
  decision?: HookDecision;
  /** The reasons of the handlers that made that decision, one per line. */
  reason?: string;
  /** PreToolUse: the tool's new input, unless the call is denied. */
  updatedInput?: Record<string, unknown>;
  /** Every handler's context, one per line. On Stop and SubagentStop it keeps the agent going, like a block. */
  additionalContext?: string;
  /** Every handler's message for the user, one per line. */
  systemMessage?: string;
  /** Some handler said `"continue": false`: stop the run; this wins over any decision. */
  stop?: { reason?: string };
  /** What the handlers wrote to the run's state, in config order (a later handler's write of a key wins). */
  state?: StateChanges;
  /** Non-blocking errors, each as "<handler>: <error>", to log. */
  errors: string[];
  verdicts: HookVerdict[];
}

const RANK: Record<HookDecision, number> = { allow: 1, ask: 2, block: 3, deny: 4 };

/**
 * Combines the verdicts of one event's handlers (they ran in parallel), in config order.
 * - decision: the most restrictive. Claude Code orders PreToolUse's deny > ask > allow; a
 *   PreToolUse verdict is never "block" and other events' are never deny/ask/allow, so where
 *   "block" ranks only matters to mixed lists: with deny, as a refusal.
 * - reason: those of the handlers that made the winning decision.
 * - updatedInput: dropped when the call is denied; otherwise that of the last handler in config
 *   order that rewrote the input (Claude Code takes whichever finishes last, a race); rewrites
 *   that disagree are reported in `errors`, since only one of them can apply.
 * - additionalContext, systemMessage: all of them, in order, joined with newlines.
 */
export function combineHookVerdicts(verdicts: HookVerdict[]): HookResult {
  const result: HookResult = { errors: [], verdicts };
  for (const v of verdicts) {
    if (v.error) result.errors.push(`${v.handler}: ${v.error}`);
    if (v.decision && (!result.decision || RANK[v.decision] > RANK[result.decision])) result.decision = v.decision;
  }
  const join = (texts: (string | undefined)[]) => {
    const kept = texts.filter((t): t is string => typeof t === 'string' && t !== '');
    return kept.length ? kept.join('\n') : undefined;
  };
  if (result.decision) result.reason = join(verdicts.filter((v) => v.decision === result.decision).map((v) => v.reason));
  result.additionalContext = join(verdicts.map((v) => v.additionalContext));
  result.systemMessage = join(verdicts.map((v) => v.systemMessage));
  const stops = verdicts.filter((v) => v.stop);
  if (stops.length) result.stop = { reason: join(stops.map((v) => v.stop?.reason)) };
  const writes = verdicts.filter((v) => v.state);
  if (writes.length) result.state = mergeChanges(writes.map((v) => v.state!));

  if (result.decision !== 'deny' && result.decision !== 'block') {
    const rewrites = verdicts.filter((v) => v.updatedInput);
    const last = rewrites.at(-1);
    if (last) {
      result.updatedInput = last.updatedInput;
      const others = rewrites.filter((v) => JSON.stringify(v.updatedInput) !== JSON.stringify(last.updatedInput));
      if (others.length) {
        result.errors.push(`${others.map((v) => v.handler).join(', ')}: rewrote the input differently from ${last.handler}, whose rewrite applies (the last in config order)`);
      }
    }
  }
  return dropUndefined(result);
}

// ---------------------------------------------------------------------------------------------

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function dropUndefined<T extends object>(value: T): T {
  for (const key of Object.keys(value) as (keyof T)[]) if (value[key] === undefined) delete value[key];
  return value;
}

/** Change sets one after another, as one: a later set or delete of a key replaces an earlier one. */
function mergeChanges(list: StateChanges[]): StateChanges {
  const last = new Map<string, { value: unknown } | null>();
  for (const c of list) {
    for (const [key, value] of Object.entries(c.set ?? {})) last.set(key, { value });
    for (const key of c.delete ?? []) last.set(key, null);
  }
  const set = Object.fromEntries([...last].filter(([, v]) => v !== null).map(([k, v]) => [k, v!.value])) as StateChanges['set'];
  const deleted = [...last].filter(([, v]) => v === null).map(([k]) => k);
  return { ...(Object.keys(set ?? {}).length > 0 && { set }), ...(deleted.length > 0 && { delete: deleted }) };
}
