/**
 * One lifecycle for every kind of run. A driver (the plain run, the monitor, and next the
 * session) says what differs; this module opens and closes the run the same way for all:
 *
 *   open:  the input checked, the agent resolved and recorded (or the previous execution's state
 *          restored), the start event, the start checks (input guardrails, SessionStart,
 *          UserPromptSubmit), search attributes, handlers, the features composed;
 *   close: the end event and status, events forwarded to a parent, background agents settled,
 *          SessionEnd hooks, the driver's farewell, handlers drained;
 *   between: continue-as-new when the history or the driver says so, handlers drained first;
 *   failure: a failed or cancelled run ends the same way, with the error that explains it.
 *
 * The turns in between are an episode (episode.ts), which every driver runs.
 */
import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ContinueAsNew,
  allHandlersFinished,
  condition,
  isCancellation,
  proxyLocalActivities,
  setCurrentDetails,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { ParentLink } from '../core/background.js';
import type { Tripwire } from '../core/guardrails.js';
import { innermostError } from '../core/errors.js';
import type { JsonValue } from '../core/json.js';
import { preview } from '../core/limits.js';
import type { ContinuedState, ParentRun, RunOverrides, RunStatus } from '../core/run.js';
import { streamOptions, type StreamSetting } from '../core/stream.js';
import type { AgentActivities } from './activity-types.js';
import { agentSearchAttribute, statusSearchAttribute } from './api.js';
import { Background } from './background.js';
import { ClientTools } from './client-tools.js';
import type { RunFeature } from './feature.js';
import { Handoffs } from './handoff.js';
import { LiveStream } from './live-stream.js';
import { registerRunHandlers } from './run-handlers.js';
import { checkStart, sessionEnd } from './run-checks.js';
import { Run } from './run-state.js';
import { SubAgents } from './sub-agents.js';
import { RunBlocked, gateStage } from './tool-gate.js';

/** Continue as new past this many history events, well before Temporal's limits. */
export const DEFAULT_CONTINUE_AS_NEW_EVENTS = 10_000;
/** ... or past this many bytes of history (Temporal's hard limit is 50 MB). */
const CONTINUE_AS_NEW_BYTES = 10 * 1024 * 1024;

const { resolveAgent } = proxyLocalActivities<AgentActivities>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 3 },
  summary: 'resolve agent',
});

/** How a run ends, whatever its kind. */
/** What a driver tells the lifecycle: the run it starts, and what is its own. */
export interface Driver {
  /**
   * The run's start when it is new: the agent, its context, state and overrides, the first prompt.
   * `state` fills the static instructions' `{key}` placeholders and is what `ctx.state` reads.
   */
  start: { agent: string; context?: JsonValue; state?: Record<string, JsonValue>; overrides?: RunOverrides; prompt: string };
  /** The previous execution's state, when this one continues it. */
  continued?: ContinuedState;
  /** The driver's own features (a monitor's tools), answered before the gate. */
  features?: RunFeature[];
  /** The run a sub-agent's run answers to. */
  parent?: ParentRun;
  /** The run that started this one in the background. */
  parentLink?: ParentLink;
  /** Whether the run must set its search attributes itself (its starter did not). */
  needsSearchAttributes(status: string | undefined): boolean;
  /** The run starts or stops waiting for a person. */
  onWaiting(run: Run, waiting: boolean): void;
  /** The run's status at its end: the driver records it (its phase, its search attribute). */
  onEnd(status: string): void;
  /** Whether the start and end checks apply (a run recorded before they did skips them). */
  runChecks?(run: Run): boolean;
  /** After everything else at the end (a background agent reports to the run that started it). */
  farewell?(status: string, text: string): Promise<void>;
  /** Live streaming, when the run's starter switched it on (see live-stream.ts). */
  stream?: StreamSetting;
}

export class Lifecycle {
  private current: Run | undefined;
  /** Built from the input before any handler runs: a report or decision of the first task finds them. */
  readonly handoffs: Handoffs;
  readonly subAgents: SubAgents;
  readonly background: Background;
  readonly clientTools = new ClientTools();
  /** The run's live stream, when it streams; built here so a poll of the first task finds its handler. */
  readonly stream: LiveStream | undefined;
  private readonly continued: ContinuedState | undefined;

  constructor(private readonly driver: Driver) {
    // Only the workflow itself continues a run: a caller's "continued" is refused by the input check.
    const carried = workflowInfo().continuedFromExecutionRunId ? driver.continued : undefined;
    this.continued = carried;
    this.handoffs = new Handoffs(carried);
    this.subAgents = new SubAgents(driver.parent, carried !== undefined);
    this.background = new Background(carried?.background, driver.parentLink);
    const streaming = streamOptions(driver.stream);
    this.stream = streaming ? new LiveStream(carried?.stream, streaming) : undefined;
    registerRunHandlers(() => this.current, this.background, this.clientTools);
  }

  get run(): Run | undefined {
    return this.current;
  }

  private features(): RunFeature[] {
    const gate: RunFeature = { name: 'gate', stage: { name: 'gate', run: (request, next) => gateStage(this.current!).run(request, next) } };
    return [...(this.stream ? [this.stream] : []), ...(this.driver.features ?? []), gate, this.handoffs, this.subAgents, this.background, this.clientTools];
  }

  /**
   * Opens the run: a new one resolves and records its agent, logs its start and passes the start
   * checks; a continued one restores its state. Returns the run and the first prompt (with what
   * the start hooks added), or the end of a run the start checks blocked.
   */
  async open(): Promise<{ run: Run; prompt?: string } | { run: Run; blocked: Tripwire }> {
    const d = this.driver;
    let run: Run;
    let prompt: string | undefined;
    if (this.continued) {
      run = this.current = Run.resume(this.continued, this.features());
    } else {
      const spec = await resolveAgent({
        agent: d.start.agent,
        ...(d.start.context !== undefined && { context: d.start.context }),
        ...(d.start.state && Object.keys(d.start.state).length > 0 && { state: d.start.state }),
        ...(d.start.overrides && { overrides: d.start.overrides }),
      });
      // A sub-agent starts with the approvals its parent remembered (they are shared, like the state).
      run = this.current = Run.start(spec, d.start.context, this.features(), { state: d.start.state, remembered: d.parent?.remembered });
      run.emit({ type: 'run.started', agent: spec.name, model: spec.model, input: preview(d.start.prompt) });
      prompt = d.start.prompt;
      if (d.runChecks?.(run) ?? true) {
        try {
          prompt = await checkStart(run, d.start.prompt);
        } catch (err) {
          if (err instanceof RunBlocked) return { run, blocked: err.tripwire };
          throw err;
        }
      }
    }
    run.approvals.onWaiting = (waiting) => d.onWaiting(run, waiting);
    if (d.needsSearchAttributes(workflowInfo().typedSearchAttributes.get(statusSearchAttribute))) {
      upsertSearchAttributes([
        { key: agentSearchAttribute, value: run.agent.name },
        { key: statusSearchAttribute, value: 'running' },
      ]);
    }
    return { run, ...(prompt !== undefined && { prompt }) };
  }

  /** Whether the history is due to continue as new (or the driver says so). */
  continueAsNewDue(options: { afterEvents?: number; driver?: boolean } = {}): boolean {
    const info = workflowInfo();
    const limit = options.afterEvents ?? DEFAULT_CONTINUE_AS_NEW_EVENTS;
    return Boolean(options.driver) || Boolean(this.stream?.dueForNew) || info.continueAsNewSuggested || info.historyLength >= limit || info.historySize >= CONTINUE_AS_NEW_BYTES;
  }

  /** Continues as new once the handlers in flight have finished: `next` calls `continueAsNew` with the next input. */
  async continueAsNew(run: Run, next: () => Promise<never>, turns = run.turns): Promise<never> {
    // Parked polls are handlers in flight: they answer now, and subscribers poll the next execution.
    this.stream?.detach();
    await condition(allHandlersFinished);
    run.emit({ type: 'run.continued', turns });
    return next();
  }

  /**
   * Closes a run that ended by itself (not failed, not cancelled from outside): the end is
   * recorded, the features settle, SessionEnd hooks run, the driver says farewell, and the
   * handlers still running (an Update) finish before the workflow completes.
   */
  async close(run: Run, status: string, output: unknown, error?: string): Promise<void> {
    this.recordEnd(run, status, output, error);
    for (const f of run.composed) await f.afterTurn?.();
    await this.settle(run, status);
    await this.driver.farewell?.(status, error ?? (typeof output === 'string' ? output : status));
    await this.stream?.finish(status);
    await condition(allHandlersFinished);
  }

  /**
   * A run that failed or was cancelled: the end recorded as for any run, then the failure to
   * throw (a cancelled run is cancelled, whatever its activities ended with while they stopped).
   */
  async fail(err: unknown): Promise<never> {
    // Continuing as new is how a long run goes on, not an end.
    if (err instanceof ContinueAsNew) throw err;
    const cancelled = isCancellation(err) || CancellationScope.current().consideredCancelled;
    const status = cancelled ? 'cancelled' : 'failed';
    const run = this.current;
    const message = innermostError(err).message;
    if (run) {
      this.recordEnd(run, status, undefined, cancelled ? undefined : message);
      await this.settle(run, status);
    } else {
      this.driver.onEnd(status);
    }
    await this.driver.farewell?.(cancelled ? 'stopped' : 'failed', cancelled ? 'cancelled' : message);
    await this.stream?.finish(status);
    if (!cancelled) throw asRunFailure(err);
    throw isCancellation(err) ? err : new CancelledFailure('The run was cancelled.', [], err instanceof Error ? err : undefined);
  }

  private recordEnd(run: Run, status: string, output: unknown, error: string | undefined): void {
    if (status === 'completed' || status === 'max_turns' || status === 'cancelled' || status === 'failed' || status === 'blocked') run.status = status as RunStatus;
    setCurrentDetails(`${status.replace('_', ' ')} after ${run.turns} ${run.turns === 1 ? 'turn' : 'turns'}`);
    // After the details above: a driver that counts turns its own way says so.
    this.driver.onEnd(status);
    run.emit({
      type: 'run.finished',
      status: status as RunStatus,
      ...(output !== undefined && { output }),
      ...(error !== undefined && { error }),
    });
  }

  private async settle(run: Run, status: string): Promise<void> {
    for (const f of run.composed) await f.end?.();
    if (this.driver.runChecks?.(run) ?? true) await sessionEnd(run, status as RunStatus);
  }
}

/**
 * Surface an activity's failure as the run's own failure, keeping its type, so the run fails
 * with the error that explains it rather than with a generic "activity failed".
 */
function asRunFailure(err: unknown): unknown {
  const root = innermostError(err);
  if (root instanceof ApplicationFailure && root !== err) {
    return ApplicationFailure.create({
      message: root.message,
      type: root.type ?? undefined,
      nonRetryable: true,
      details: root.details ?? undefined,
      cause: err instanceof Error ? err : undefined,
    });
  }
  return err;
}
