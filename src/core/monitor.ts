/**
 * The vocabulary and pure decisions of monitors: agents that run turn after turn without a
 * person, sleeping on a durable timer between turns. The workflow (src/workflows/agent-monitor.ts)
 * orchestrates; what can be decided from plain data is decided here.
 */
import type { StreamSetting } from './stream.js';
import type { ToolSpec } from './agent-spec.js';
import type { PendingApproval } from './approval.js';
import type { PendingClientCall } from './client-tools.js';
import type { ParentLink } from './background.js';
import type { JsonValue } from './json.js';
import type { ContinuedState, RunOverrides } from './run.js';
import type { StateValues } from './state.js';
import type { Usage } from './usage.js';

/** Why a monitor ended. `failed` ends the workflow with a failure; the others are its result. */
export type MonitorStopReason =
  | 'completed'
  | 'max_turns'
  | 'max_tokens'
  | 'max_cost'
  | 'wallclock'
  | 'cancelled'
  | 'retry_aborted'
  /** A guardrail tripped. */
  | 'blocked'
  | 'failed';

export type MonitorPhase = 'running' | 'sleeping' | 'paused' | 'awaiting_approval' | MonitorStopReason;

export interface MonitorBudgets {
  /** Monitor turns (each a full agent loop). Default 50; 0 means no limit. */
  maxTurns?: number;
  maxInputTokens?: number;
  maxOutputTokens?: number;
  /** US dollars, from `prices`. */
  maxCostUsd?: number;
  /** Milliseconds, or a string such as '2h', from the monitor's start. */
  wallclock?: number | string;
  /** One monitor turn's limit; a turn over it is cancelled and counts as failed. */
  turnTimeout?: number | string;
}

/** US dollars per million tokens, by `provider:model`. */
export type PriceTable = Record<string, { input: number; output: number }>;

export type TurnRetryAction = 'retry' | 'skip' | 'abort';

/** What to do with a failed turn whose error type matches (all types when absent), until `maxAttempts`. */
export interface TurnRetryRule {
  errorType?: string;
  action: TurnRetryAction;
  /** Attempts of one turn, the first included, before the run aborts. Default 3. */
  maxAttempts?: number;
}

export interface MonitorOptions {
  /** Live streaming, as a run's `options.stream`: deltas and events published as they happen. */
  stream?: StreamSetting;
  /** The prompt of a turn the model did not schedule. Default 'continue'. */
  continuePrompt?: string;
  doneTool?: { name?: string; description?: string };
  scheduleTool?: {
    name?: string;
    description?: string;
    /** The tool refuses (an error result the model can adapt to) a wake further ahead than this. */
    maxDelaySeconds?: number;
  };
  /** The driver clamps, silently but with a warning event, a wake further ahead than this. */
  maxDeferSeconds?: number;
  prices?: PriceTable;
  /** Failed turns: matched in order; default: retry up to 3 attempts, then abort. */
  turnRetry?: TurnRetryRule[];
  /** Continue as new after this many turns of one execution (or when Temporal suggests it). Default 100. */
  continueAsNewEveryTurns?: number;
  /** The model sees the goal and the most recent turns that fit in about this many tokens. Default 50,000. */
  contextTokens?: number;
}

/** Input of the `agentMonitor` workflow: plain JSON, from any Temporal client. */
export interface MonitorInput {
  agent: string;
  goal: string;
  context?: JsonValue;
  /** The run's state at its start (see AgentRunInput.state). */
  state?: StateValues;
  overrides?: RunOverrides;
  budgets?: MonitorBudgets;
  options?: MonitorOptions;
  /** Set by the workflow itself when it continues as new; rejected from any other caller. */
  continued?: MonitorCarried;
  /** Set for a background agent: the run that spawned it, which hears its reports. */
  parent?: ParentLink;
  /** When to take the first turn (epoch milliseconds); default now. */
  startAt?: number;
}

/** A monitor's own state across continue-as-new (the run's state is carried beside it). */
export interface MonitorCarried {
  run: ContinuedState;
  turns: number;
  cost: number;
  startedAt: number;
  inbox: string[];
  nextPrompt: string | null;
  paused: boolean;
  episodes: Episode[];
  viewFrom: number;
  lastTurn: LastTurn | null;
  /** Reports sent to the parent so far (a background agent's). */
  reportSeq?: number;
}

/** Where a monitor turn's messages start, and their size, for compaction. */
export interface Episode {
  start: number;
  chars: number;
}

export interface LastTurn {
  turn: number;
  at: string;
  outcome: 'answered' | 'scheduled' | 'done' | 'failed' | 'skipped';
  text?: string;
  error?: string;
}

/**
 * Answer of a monitor's `status` query: the fields every run's status has (`kind`, `agent`,
 * `status`, `turns`, `usage`, `messages`, `lastSeq`, `pending`), then the monitor's own.
 */
export interface MonitorState {
  kind: 'monitor';
  agent: string;
  /** Where the monitor is; also its `KeelStatus`. */
  status: MonitorPhase;
  /** @deprecated The same as `status`, its name before every run had one status shape. */
  phase: MonitorPhase;
  /** Messages in the transcript (across continue-as-new). */
  messages: number;
  /** Sequence number of the last event. */
  lastSeq: number;
  nextWakeAt: string | null;
  wakeReason: string | null;
  turns: number;
  usage: Usage;
  cost: number;
  lastTurn: LastTurn | null;
  inbox: number;
  budgets: MonitorBudgets;
  /** Calls waiting for a decision (phase `awaiting_approval`). */
  pending?: PendingApproval[];
  /** Client tools' calls waiting for a client to answer them. */
  clientCalls?: PendingClientCall[];
}

export interface MonitorResult {
  kind: 'monitor';
  status: Exclude<MonitorStopReason, 'failed'>;
  /** report_done's detail, or why it stopped: the run's output, as a plain run names it. */
  output: string | null;
  /** @deprecated The same as `output`, its name before every run had one result shape. */
  detail: string | null;
  turns: number;
  usage: Usage;
  cost: number;
  agent: string;
  /** The monitor's state at its end, when it had any. */
  state?: StateValues;
}

export const DEFAULT_MONITOR_MAX_TURNS = 50;
export const DEFAULT_CONTINUE_PROMPT = 'continue';

export const DONE_TOOL = 'report_done';
export const SCHEDULE_TOOL = 'schedule_next_turn';

/** The monitor's own tools, as the model sees them. */
export function monitorTools(options: MonitorOptions = {}): ToolSpec[] {
  const cap = options.scheduleTool?.maxDelaySeconds;
  return [
    {
      name: options.doneTool?.name ?? DONE_TOOL,
      description:
        options.doneTool?.description ??
        'Call when the goal is reached and no further turns are needed. The run ends with your detail as its result.',
      parameters: {
        type: 'object',
        properties: { detail: { type: 'string', description: 'What was achieved, for the person who set the goal.' } },
        required: ['detail'],
        additionalProperties: false,
      },
      readOnly: false,
    },
    {
      name: options.scheduleTool?.name ?? SCHEDULE_TOOL,
      description:
        options.scheduleTool?.description ??
        'Schedule your next turn: you will sleep until then and wake with `next_prompt`. Give exactly one of ' +
          '`delay_seconds` or `at` (an ISO 8601 time). Finish your answer for this turn after calling it.' +
          (cap !== undefined ? ` You may schedule at most ${cap} seconds ahead.` : ''),
      parameters: {
        type: 'object',
        properties: {
          delay_seconds: { type: 'number', minimum: 0, description: 'Seconds from now.' },
          at: { type: 'string', description: 'An ISO 8601 time, for example 2026-12-01T09:00:00Z.' },
          next_prompt: { type: 'string', description: 'What to do when you wake: specific, self-contained.' },
          reason: { type: 'string', description: 'Why then: shown while you sleep.' },
        },
        required: ['next_prompt', 'reason'],
        additionalProperties: false,
      },
      readOnly: false,
    },
  ];
}

export interface ScheduleIntent {
  wakeAt: number;
  nextPrompt: string;
  reason: string;
}

/**
 * A schedule_next_turn call's arguments, checked: the intent, or an error the model reads.
 * `now` is the workflow's time.
 */
export function parseScheduleCall(
  args: unknown,
  now: number,
  maxDelaySeconds?: number,
): { intent: ScheduleIntent } | { error: string } {
  const a = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>;
  const nextPrompt = a['next_prompt'];
  const reason = a['reason'];
  if (typeof nextPrompt !== 'string' || nextPrompt.trim() === '') return { error: 'Error: next_prompt must be a non-empty string.' };
  if (typeof reason !== 'string' || reason.trim() === '') return { error: 'Error: reason must be a non-empty string.' };
  const hasDelay = a['delay_seconds'] !== undefined;
  const hasAt = a['at'] !== undefined;
  if (hasDelay === hasAt) return { error: 'Error: give exactly one of delay_seconds or at.' };
  let wakeAt: number;
  if (hasDelay) {
    const delay = a['delay_seconds'];
    if (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0) {
      return { error: 'Error: delay_seconds must be a number of seconds, 0 or more.' };
    }
    wakeAt = now + Math.round(delay * 1000);
  } else {
    const at = typeof a['at'] === 'string' ? Date.parse(a['at']) : Number.NaN;
    if (!Number.isFinite(at)) return { error: `Error: at must be an ISO 8601 time such as 2026-12-01T09:00:00Z, got ${JSON.stringify(a['at'])}.` };
    wakeAt = Math.max(now, at);
  }
  if (maxDelaySeconds !== undefined && wakeAt - now > maxDelaySeconds * 1000) {
    return {
      error: `Error: that is ${Math.round((wakeAt - now) / 1000)} seconds ahead; you may schedule at most ${maxDelaySeconds} seconds ahead. Schedule an earlier turn.`,
    };
  }
  return { intent: { wakeAt, nextPrompt, reason } };
}

/** The cost of some usage of a model, in US dollars; 0 for a model without a price. */
export function costOf(model: string, usage: Usage, prices: PriceTable = {}): number {
  const price = prices[model];
  if (!price) return 0;
  return (usage.inputTokens * price.input + usage.outputTokens * price.output) / 1_000_000;
}

/** The first budget the totals have reached, if any. */
export function budgetReached(
  budgets: MonitorBudgets,
  totals: { turns: number; usage: Usage; cost: number; elapsedMs: number },
  wallclockMs: number | undefined,
): Extract<MonitorStopReason, 'max_turns' | 'max_tokens' | 'max_cost' | 'wallclock'> | undefined {
  const maxTurns = budgets.maxTurns ?? DEFAULT_MONITOR_MAX_TURNS;
  if (maxTurns > 0 && totals.turns >= maxTurns) return 'max_turns';
  if (budgets.maxInputTokens !== undefined && totals.usage.inputTokens >= budgets.maxInputTokens) return 'max_tokens';
  if (budgets.maxOutputTokens !== undefined && totals.usage.outputTokens >= budgets.maxOutputTokens) return 'max_tokens';
  if (budgets.maxCostUsd !== undefined && totals.cost >= budgets.maxCostUsd) return 'max_cost';
  if (wallclockMs !== undefined && totals.elapsedMs >= wallclockMs) return 'wallclock';
  return undefined;
}

/** What to do with a failed turn: the first matching rule decides; past its attempts, abort. */
export function turnRetryAction(rules: TurnRetryRule[] | undefined, errorType: string | undefined, attempt: number): TurnRetryAction {
  const list = rules && rules.length > 0 ? rules : [{ action: 'retry' as const, maxAttempts: 3 }];
  const rule = list.find((r) => r.errorType === undefined || r.errorType === errorType);
  if (!rule) return 'abort';
  if (rule.action === 'retry' && attempt >= (rule.maxAttempts ?? 3)) return 'abort';
  return rule.action;
}

/** The prompt of a turn: the inbox's messages first, as an `[Inbox]` block, then the prompt. */
export function turnPrompt(prompt: string, inbox: string[]): string {
  if (inbox.length === 0) return prompt;
  return `[Inbox]\n${inbox.map((m) => `- ${m}`).join('\n')}\n\n${prompt}`;
}

/**
 * Compaction: the first message the model sees after the goal, so that the most recent turns
 * that fit in `budgetChars` are kept whole. Older turns are left out with a marker.
 */
export function viewStart(episodes: Episode[], budgetChars: number): number {
  let total = 0;
  let from = 0;
  for (let i = episodes.length - 1; i >= 0; i--) {
    total += episodes[i]!.chars;
    // The most recent turn is always kept, however big.
    if (total > budgetChars && i < episodes.length - 1) break;
    from = episodes[i]!.start;
  }
  return from;
}
