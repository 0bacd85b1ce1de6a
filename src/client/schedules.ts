/**
 * Schedules: a Temporal Schedule that starts a run of an agent (a plain run or a monitor) on a
 * cron expression or at a fixed interval. Each run it starts is an ordinary run: the same
 * workflow type, input, search attributes and summary as one started by `AgentClient.start`,
 * so it reads the same in the CLI and the Temporal UI.
 *
 *   const client = await AgentClient.connect();
 *   await client.schedules.create('lisbon-weather', { agent: 'demo', prompt: 'Weather in Lisbon?', every: '1h' });
 *   const { recentActions } = await client.schedules.describe('lisbon-weather');
 */
import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
  type ScheduleExecutionResult,
  type ScheduleHandle,
  type ScheduleSummary,
} from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time.js';
import type { JsonValue } from '../core/json.js';
import { CONTEXT_BYTES, utf8Bytes } from '../core/limits.js';
import type { AgentRunInput } from '../core/run.js';
import { oneLine } from '../core/text.js';
import { AGENT_MONITOR_WORKFLOW, AGENT_RUN_WORKFLOW, DEFAULT_TASK_QUEUE, agentSearchAttribute, statusSearchAttribute } from '../workflows/api.js';

/** What each scheduled action starts: a plain run (`agentRun`) or a monitor (`agentMonitor`). */
export type ScheduleKind = 'run' | 'monitor';

/** What happens when a run is due while the previous one still runs (Temporal's overlap policies). */
export type OverlapPolicy = 'skip' | 'buffer_one' | 'allow_all' | 'cancel_other' | 'terminate_other';

/** keel's names of Temporal's overlap policies, with what each does (for errors and help). */
export const OVERLAP_POLICIES: Readonly<Record<OverlapPolicy, string>> = {
  skip: 'the default: no new run while one runs',
  buffer_one: 'start one more as soon as the running one ends',
  allow_all: 'start every run, even while others run',
  cancel_other: 'cancel the running one, then start the new one',
  terminate_other: 'terminate the running one and start the new one',
};

const TEMPORAL_OVERLAP: Record<OverlapPolicy, ScheduleOverlapPolicy> = {
  skip: ScheduleOverlapPolicy.SKIP,
  buffer_one: ScheduleOverlapPolicy.BUFFER_ONE,
  allow_all: ScheduleOverlapPolicy.ALLOW_ALL,
  cancel_other: ScheduleOverlapPolicy.CANCEL_OTHER,
  terminate_other: ScheduleOverlapPolicy.TERMINATE_OTHER,
};

export interface CreateScheduleOptions {
  /** Name of the agent to run (a worker on the task queue must serve it). */
  agent: string;
  /** The prompt of each run; for a monitor, its goal. */
  prompt: string;
  /**
   * When to start runs, as a cron expression (UTC unless it begins with `CRON_TZ=<zone>`), such
   * as `0 9 * * MON-FRI` (9:00 on weekdays). Exactly one of `cron` and `every`.
   */
  cron?: string;
  /** Start a run at this interval: a Temporal duration such as `'30s'`, `'15m'`, `'1h'` (at least 1 s, whole seconds). */
  every?: Duration;
  /** `run` (default): a plain run, `agentRun`; `monitor`: a monitor, `agentMonitor`. */
  kind?: ScheduleKind;
  /** Default `skip`: no new run starts while the previous one still runs. */
  overlap?: OverlapPolicy;
  /** Task queue of the workers that serve the agent (default: the client's). */
  taskQueue?: string;
  /** Plain JSON each run's tools and instructions see (`ctx.context`), at most 64 KB. */
  context?: JsonValue;
  /** A monitor's budgets, plain JSON passed to it as they are (monitors only). */
  budgets?: { [key: string]: JsonValue };
  /** Create the schedule paused: it starts no run until it is unpaused (a trigger still starts one). */
  paused?: boolean;
  /** A note on the schedule's state, such as why it is paused. */
  note?: string;
}

/** A run a schedule started. */
export interface ScheduledRun {
  /** `<schedule name>-<time>`, as Temporal names the runs of a schedule. */
  workflowId: string;
  /** The run ID of its first execution (a run that continues as new keeps its workflow ID). */
  firstExecutionRunId: string;
  /** When it was due. */
  scheduledAt: Date;
  /** When the schedule started it. */
  takenAt: Date;
  /** Still running, by the schedule's own record. */
  running: boolean;
}

/** When a schedule starts runs, as it was given: a cron expression or an interval. */
export interface ScheduleTiming {
  cron?: string;
  /** The interval in its largest exact unit (`90m`, `15m`, `2s`); runs fall on multiples of it since the Unix epoch. */
  every?: string;
  /** The time zone, when the spec names one. */
  timezone?: string;
}

/** A schedule, as `list()` shows it. */
export interface AgentScheduleSummary {
  name: string;
  /** `?` for a schedule of keel's workflow types that keel did not create. */
  agent: string;
  kind: ScheduleKind;
  prompt?: string;
  spec: ScheduleTiming;
  paused: boolean;
  note?: string;
  nextActionTimes: Date[];
  /** Most recent runs it started, oldest first (at most 10, as Temporal keeps them). */
  recentActions: Omit<ScheduledRun, 'running'>[];
}

/** A schedule in full, as `describe()` shows it. */
export interface AgentScheduleDescription {
  name: string;
  agent: string;
  kind: ScheduleKind;
  prompt: string;
  /** `agentRun` or `agentMonitor`. */
  workflowType: string;
  taskQueue: string;
  context?: JsonValue;
  budgets?: JsonValue;
  spec: ScheduleTiming;
  /** A keel overlap policy (or Temporal's name, lowercased, for one keel does not create). */
  overlap: OverlapPolicy | string;
  paused: boolean;
  note?: string;
  nextActionTimes: Date[];
  /** Most recent runs it started, oldest first (at most 10, as Temporal keeps them). */
  recentActions: ScheduledRun[];
  /** Runs it started that still run. */
  runningActions: { workflowId: string; firstExecutionRunId: string }[];
  /** Runs started so far, triggers included. */
  actionsTaken: number;
  /** Runs not started because one was still running (overlap `skip`). */
  actionsSkipped: number;
  /** Runs not started because the server was away for longer than the catch-up window. */
  actionsMissed: number;
  createdAt: Date;
  /** The schedule in the Temporal Web UI. */
  uiUrl: string;
}

/** What `AgentSchedules` needs of a client; an `AgentClient` is one. */
export interface AgentSchedulesOptions {
  client: Client;
  /** Default task queue of the runs (default `keel`). */
  taskQueue?: string;
  /** Base URL of the Temporal Web UI (default http://localhost:8233). */
  uiUrl?: string;
}

/** Input that cannot make a schedule: the message says what is wrong and what to do. */
export class ScheduleInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScheduleInputError';
  }
}

/** What the schedule remembers of how it was created, for `list()` (whose summaries carry no input). */
interface ScheduleMemo {
  agent: string;
  kind: ScheduleKind;
  prompt: string;
  cron?: string;
  every?: string;
}

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

const CRON_HELP =
  'A cron expression has 5 fields, minute hour day-of-month month day-of-week, in UTC: "*/15 * * * *" is every ' +
  '15 minutes, "0 9 * * MON-FRI" 9:00 on weekdays; @hourly, @daily and a CRON_TZ=Europe/Lisbon prefix work too.';

export class AgentSchedules {
  private readonly client: Client;
  private readonly taskQueue: string;
  private readonly uiUrl: string;

  constructor(options: AgentSchedulesOptions) {
    this.client = options.client;
    this.taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
    this.uiUrl = (options.uiUrl ?? 'http://localhost:8233').replace(/\/$/, '');
  }

  /**
   * Creates a schedule that starts a run of `agent` with `prompt` on `cron` or `every`. Its runs
   * get workflow IDs `<name>-<time>`. Throws ScheduleInputError for input that cannot work, and
   * Temporal's ScheduleAlreadyRunning when the name is taken.
   */
  async create(name: string, options: CreateScheduleOptions): Promise<AgentScheduleDescription> {
    const checked = validate(name, options);
    const kind = options.kind ?? 'run';
    const workflowType = kind === 'monitor' ? AGENT_MONITOR_WORKFLOW : AGENT_RUN_WORKFLOW;
    const input = kind === 'monitor' ? monitorInput(options) : runInput(options);
    const timing = checked.cron !== undefined ? `cron ${checked.cron}` : `every ${checked.every}`;
    const memo: ScheduleMemo = {
      agent: options.agent,
      kind,
      prompt: options.prompt,
      ...(checked.cron !== undefined && { cron: checked.cron }),
      ...(checked.every !== undefined && { every: checked.every }),
    };
    try {
      await this.client.schedule.create({
        scheduleId: name,
        spec: checked.cron !== undefined ? { cronExpressions: [checked.cron] } : { intervals: [{ every: checked.everyMs }] },
        action: {
          type: 'startWorkflow',
          workflowType,
          // Temporal appends the time each run is due: `<name>-2025-03-01T09:00:00Z`.
          workflowId: name,
          taskQueue: options.taskQueue ?? this.taskQueue,
          args: [input],
          // As AgentClient.start sets them, so the run is never upserted at start and lists with the others.
          typedSearchAttributes: [
            { key: agentSearchAttribute, value: options.agent },
            { key: statusSearchAttribute, value: 'running' },
          ],
          memo: { prompt: options.prompt, schedule: name },
          staticSummary: `${options.agent}${kind === 'monitor' ? ' (monitor)' : ''}: ${oneLine(options.prompt, 110)}`,
          staticDetails: `Started by the keel schedule **${name}** (${timing}).`,
        },
        policies: { overlap: TEMPORAL_OVERLAP[checked.overlap] },
        memo: { ...memo },
        state: {
          ...(options.paused !== undefined && { paused: options.paused }),
          ...(options.note !== undefined && { note: options.note }),
        },
      });
    } catch (err) {
      throw explainCreateFailure(err, name, checked);
    }
    return this.describe(name);
  }

  /**
   * keel's schedules (those that start `agentRun` or `agentMonitor`), from Temporal visibility:
   * a schedule just created or deleted may take a moment to show or to go.
   */
  async list(): Promise<AgentScheduleSummary[]> {
    const schedules: AgentScheduleSummary[] = [];
    for await (const summary of this.client.schedule.list()) {
      if (isKeelSchedule(summary)) schedules.push(summarize(summary));
    }
    return schedules.sort((a, b) => a.name.localeCompare(b.name));
  }

  async describe(name: string): Promise<AgentScheduleDescription> {
    const d = await this.call(name, (handle) => handle.describe());
    return describe(d, this.uiUrl, this.client.options.namespace);
  }

  /** Stops starting runs (runs already started go on) until `unpause`. */
  async pause(name: string, note = 'Paused with keel'): Promise<void> {
    await this.call(name, (handle) => handle.pause(note));
  }

  async unpause(name: string, note = 'Unpaused with keel'): Promise<void> {
    await this.call(name, (handle) => handle.unpause(note));
  }

  /**
   * Starts a run now, also when the schedule is paused and whatever its overlap policy (a person
   * asked for it; Temporal's default for a trigger). `describe()` lists it once it has started.
   */
  async trigger(name: string): Promise<void> {
    await this.call(name, (handle) => handle.trigger());
  }

  /** Deletes the schedule. The runs it started are ordinary runs: they go on, and stay readable. */
  async delete(name: string): Promise<void> {
    await this.call(name, (handle) => handle.delete());
  }

  /** Runs `fn` on the schedule's handle; an unknown name becomes an error that says so. */
  private async call<T>(name: string, fn: (handle: ScheduleHandle) => Promise<T>): Promise<T> {
    try {
      return await fn(this.client.schedule.getHandle(name));
    } catch (err) {
      // Temporal's message for an unknown schedule can be "workflow not found for ID: temporal-sys-scheduler:x".
      if (err instanceof ScheduleNotFoundError) {
        throw new ScheduleNotFoundError(`No schedule named "${name}" (list them with: keel schedule list).`, name);
      }
      throw err;
    }
  }
}

interface Checked {
  cron?: string;
  every?: string;
  everyMs: number;
  overlap: OverlapPolicy;
}

/** Everything that can be known wrong before asking the server (which then checks the cron expression). */
function validate(name: string, options: CreateScheduleOptions): Checked {
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    throw new ScheduleInputError(
      `The schedule name ${JSON.stringify(name)} will not do: use letters, digits, ".", "_" and "-" (at most 200, ` +
        'starting with a letter or digit), such as "nightly-report". Its runs are named <name>-<time>.',
    );
  }
  if (typeof options.agent !== 'string' || options.agent.trim() === '') {
    throw new ScheduleInputError('Name the agent each scheduled run runs (agent, or --agent).');
  }
  if (typeof options.prompt !== 'string' || options.prompt.trim() === '') {
    throw new ScheduleInputError('Give the prompt of each scheduled run (prompt, or --prompt).');
  }
  const kind = options.kind ?? 'run';
  if (kind !== 'run' && kind !== 'monitor') {
    throw new ScheduleInputError(`Unknown kind ${JSON.stringify(kind)}: use "run" (a plain run, the default) or "monitor".`);
  }
  const overlap = options.overlap ?? 'skip';
  if (!Object.hasOwn(OVERLAP_POLICIES, overlap)) {
    const known = Object.entries(OVERLAP_POLICIES).map(([policy, what]) => `${policy} (${what})`);
    throw new ScheduleInputError(`Unknown overlap policy ${JSON.stringify(overlap)}: use one of ${known.join(', ')}.`);
  }
  const hasCron = options.cron !== undefined;
  const hasEvery = options.every !== undefined;
  if (hasCron === hasEvery) {
    throw new ScheduleInputError(
      `${hasCron ? 'Both a cron expression and an interval were given' : 'Say when the schedule starts runs'}: give ` +
        'exactly one of cron (--cron "*/15 * * * *") and every (--every 1h).',
    );
  }
  if (hasCron && (typeof options.cron !== 'string' || options.cron.trim() === '')) {
    throw new ScheduleInputError(`The cron expression is empty. ${CRON_HELP}`);
  }
  const everyMs = hasEvery ? intervalMs(options.every as Duration) : 0;
  if (options.budgets !== undefined) {
    if (kind !== 'monitor') throw new ScheduleInputError('Budgets are for monitors: add kind "monitor" (--monitor), or drop the budgets.');
    if (typeof options.budgets !== 'object' || options.budgets === null || Array.isArray(options.budgets)) {
      throw new ScheduleInputError('A monitor\'s budgets are a JSON object, such as { "maxTurns": 20 }.');
    }
  }
  if (options.context !== undefined) checkContext(options.context);
  if (options.taskQueue !== undefined && (typeof options.taskQueue !== 'string' || options.taskQueue.trim() === '')) {
    throw new ScheduleInputError('The task queue is empty: name the task queue of the workers that serve the agent, or leave it out.');
  }
  return {
    ...(hasCron && { cron: (options.cron as string).trim() }),
    ...(hasEvery && { every: formatInterval(everyMs) }),
    everyMs,
    overlap,
  };
}

/** A Temporal duration as milliseconds: whole seconds, at least one (the server's own bounds). */
function intervalMs(every: Duration): number {
  let ms: number;
  try {
    ms = msToNumber(every);
  } catch {
    ms = NaN;
  }
  const what = `The interval ${JSON.stringify(every)}`;
  if (!Number.isFinite(ms)) {
    throw new ScheduleInputError(`${what} is not a duration: write it with a unit, such as "30s", "15m", "1h" or "1d".`);
  }
  if (ms < 1000) {
    const bare = typeof every === 'number' || /^\s*\d+(\.\d+)?\s*$/.test(every) ? ` (${ms} ms: a number without a unit is milliseconds)` : '';
    throw new ScheduleInputError(
      `${what} is shorter than a second${bare}, the shortest Temporal takes: give it with a unit, such as "30s", "15m" or "1h".`,
    );
  }
  if (ms % 1000 !== 0) {
    throw new ScheduleInputError(`${what} is not a whole number of seconds (Temporal would round it): use such as "90s" or "2m".`);
  }
  return ms;
}

/** The run checks its context too; a schedule checks it now, rather than fail every run it starts. */
function checkContext(context: JsonValue): void {
  let json: string | undefined;
  try {
    json = JSON.stringify(context);
  } catch (err) {
    throw new ScheduleInputError(`The context is not plain JSON (${(err as Error).message}): pass plain values, such as IDs.`);
  }
  if (json === undefined) throw new ScheduleInputError('The context is not plain JSON: pass plain values, such as IDs.');
  if (utf8Bytes(json) > CONTEXT_BYTES) {
    throw new ScheduleInputError(`The context is over ${CONTEXT_BYTES / 1024} KB of JSON: pass references, such as IDs, not data.`);
  }
}

function runInput(options: CreateScheduleOptions): AgentRunInput {
  return { agent: options.agent, input: options.prompt, ...(options.context !== undefined && { context: options.context }) };
}

/** The monitor's input, as its workflow takes it: `{ agent, goal, budgets?, context? }`. */
function monitorInput(options: CreateScheduleOptions): { [key: string]: JsonValue } {
  return {
    agent: options.agent,
    goal: options.prompt,
    ...(options.budgets !== undefined && { budgets: options.budgets }),
    ...(options.context !== undefined && { context: options.context }),
  };
}

/** The server checks the spec (its message says what is wrong); say which input and what to write. */
function explainCreateFailure(err: unknown, name: string, checked: Checked): unknown {
  if (err instanceof ScheduleAlreadyRunning) {
    return new ScheduleAlreadyRunning(
      `A schedule named "${name}" already exists: pick another name, or delete it first (keel schedule delete ${name}).`,
      name,
    );
  }
  // The SDK turns the server's "Invalid schedule spec: ..." into a TypeError with the reason.
  if (err instanceof TypeError) {
    if (checked.cron !== undefined) {
      return new ScheduleInputError(`The cron expression "${checked.cron}" is not valid: ${err.message}. ${CRON_HELP}`);
    }
    return new ScheduleInputError(`The interval ${checked.every} is not valid: ${err.message}.`);
  }
  return err;
}

/** An interval in its largest exact unit (`5400000` is `90m`), in the form `every` takes back. */
function formatInterval(ms: number): string {
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ];
  for (const [unit, size] of units) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

function isKeelSchedule(summary: ScheduleSummary): boolean {
  const type = summary.action?.workflowType;
  // Listing is eventually consistent: a new schedule may show before its action does.
  if (type === undefined) return typeof summary.memo?.agent === 'string';
  return type === AGENT_RUN_WORKFLOW || type === AGENT_MONITOR_WORKFLOW;
}

function memoOf(memo: Record<string, unknown> | undefined): Partial<ScheduleMemo> {
  return (memo ?? {}) as Partial<ScheduleMemo>;
}

/** The timing as it was given (the server keeps a cron expression only compiled), else from the spec. */
function timingOf(memo: Partial<ScheduleMemo>, spec: ScheduleDescription['spec'] | undefined): ScheduleTiming {
  const timezone = spec?.timezone || undefined;
  if (memo.cron !== undefined) return { cron: memo.cron, ...(timezone && { timezone }) };
  const interval = spec?.intervals?.[0];
  if (interval) return { every: formatInterval(interval.every), ...(timezone && { timezone }) };
  if (memo.every !== undefined) return { every: memo.every };
  return timezone ? { timezone } : {};
}

function kindOf(workflowType: string | undefined, memo: Partial<ScheduleMemo>): ScheduleKind {
  if (workflowType !== undefined) return workflowType === AGENT_MONITOR_WORKFLOW ? 'monitor' : 'run';
  return memo.kind === 'monitor' ? 'monitor' : 'run';
}

function scheduledRun(result: ScheduleExecutionResult): Omit<ScheduledRun, 'running'> {
  return {
    workflowId: result.action.workflow.workflowId,
    firstExecutionRunId: result.action.workflow.firstExecutionRunId,
    scheduledAt: result.scheduledAt,
    takenAt: result.takenAt,
  };
}

function summarize(summary: ScheduleSummary): AgentScheduleSummary {
  const memo = memoOf(summary.memo);
  return {
    name: summary.scheduleId,
    agent: memo.agent ?? '?',
    kind: kindOf(summary.action?.workflowType, memo),
    ...(memo.prompt !== undefined && { prompt: memo.prompt }),
    spec: timingOf(memo, summary.spec),
    paused: summary.state.paused,
    ...(summary.state.note && { note: summary.state.note }),
    nextActionTimes: summary.info.nextActionTimes,
    recentActions: summary.info.recentActions.map(scheduledRun),
  };
}

function describe(d: ScheduleDescription, uiBase: string, namespace: string): AgentScheduleDescription {
  const memo = memoOf(d.memo);
  // The action's input is the truth about what each run gets; the memo is what list() shows.
  const input = (d.action.args?.[0] ?? {}) as { agent?: string; input?: string; goal?: string; context?: JsonValue; budgets?: JsonValue };
  const running = new Set(d.info.runningActions.map((a) => a.workflow.workflowId));
  return {
    name: d.scheduleId,
    agent: input.agent ?? memo.agent ?? '?',
    kind: kindOf(d.action.workflowType, memo),
    prompt: input.input ?? input.goal ?? memo.prompt ?? '',
    workflowType: d.action.workflowType,
    taskQueue: d.action.taskQueue,
    ...(input.context !== undefined && { context: input.context }),
    ...(input.budgets !== undefined && { budgets: input.budgets }),
    spec: timingOf(memo, d.spec),
    overlap: (d.policies.overlap ?? ScheduleOverlapPolicy.SKIP).toLowerCase(),
    paused: d.state.paused,
    ...(d.state.note && { note: d.state.note }),
    nextActionTimes: d.info.nextActionTimes,
    recentActions: d.info.recentActions.map((r) => ({ ...scheduledRun(r), running: running.has(r.action.workflow.workflowId) })),
    runningActions: d.info.runningActions.map((a) => ({ ...a.workflow })),
    actionsTaken: d.info.numActionsTaken,
    actionsSkipped: d.info.numActionsSkippedOverlap,
    actionsMissed: d.info.numActionsMissedCatchupWindow,
    createdAt: d.info.createdAt,
    uiUrl: `${uiBase}/namespaces/${encodeURIComponent(namespace)}/schedules/${encodeURIComponent(d.scheduleId)}`,
  };
}
