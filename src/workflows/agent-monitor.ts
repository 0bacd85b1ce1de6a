/**
 * A monitor: an agent given a goal that runs turn after turn without a person. Each turn is a
 * full agent loop (model and tools until the model answers, src/workflows/turn.ts); between
 * turns it sleeps on a durable timer, until the time it scheduled, a message, or a wake.
 */
import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ContinueAsNew,
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common/lib/time.js';
import type { AgentSpec } from '../core/agent-spec.js';
import { ErrorTypes, innermostError } from '../core/errors.js';
import { preview } from '../core/limits.js';
import { checkMonitorInput, parseInject } from '../core/schemas.js';
import { userMessage } from '../core/messages.js';
import {
  DEFAULT_CONTINUE_PROMPT,
  DONE_TOOL,
  SCHEDULE_TOOL,
  budgetReached,
  costOf,
  monitorTools,
  parseScheduleCall,
  turnPrompt,
  turnRetryAction,
  viewStart,
  type Episode,
  type LastTurn,
  type MonitorCarried,
  type MonitorInput,
  type MonitorPhase,
  type MonitorResult,
  type MonitorState,
  type MonitorStopReason,
  type ScheduleIntent,
} from '../core/monitor.js';
import { argumentsObject, errorResult, type ToolStage } from '../core/tool-pipeline.js';
import { subtractUsage } from '../core/usage.js';
import type { AgentActivities } from './activity-types.js';
import {
  agentSearchAttribute,
  backgroundReportSignal,
  injectSignal,
  injectUpdate,
  monitorStatusQuery,
  pauseSignal,
  resumeSignal,
  statusSearchAttribute,
  stopSignal,
  wakeSignal,
  type InjectInput,
} from './api.js';
import { registerRunHandlers } from './run-handlers.js';
import { ALERT_TOOL, alertTool, type ReportKind } from '../core/background.js';
import { RunBlocked } from './tool-gate.js';
import { Run } from './run-state.js';
import { runTurn } from './turn.js';

const DEFAULT_CONTINUE_AS_NEW_TURNS = 100;
const DEFAULT_CONTEXT_TOKENS = 50_000;
const CONTINUE_AS_NEW_EVENTS = 10_000;

const { resolveAgent } = proxyLocalActivities<AgentActivities>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 3 },
  summary: 'resolve agent',
});

/** Everything a monitor knows besides its run: totals, inbox, what it waits for. */
class Monitor {
  phase: MonitorPhase = 'running';
  turns = 0;
  turnsThisExecution = 0;
  cost = 0;
  startedAt = Date.now();
  inbox: string[] = [];
  nextPrompt: string | null = null;
  paused = false;
  stopRequested = false;
  stopReason: string | undefined;
  wakeRequested = false;
  nextWakeAt: number | null = null;
  wakeReason: string | null = null;
  episodes: Episode[] = [];
  lastTurn: LastTurn | null = null;
  /** What the current turn's tools asked for. */
  done: string | null = null;
  intent: ScheduleIntent | null = null;
  /** The current turn's scope, which `stop` cancels. */
  turnScope: CancellationScope | undefined;

  /** Reports sent to the run that started this monitor (a background agent's), numbering them. */
  reportSeq = 0;
  /** Messages that arrived before the run's state was there (the first workflow task), to record. */
  early: { message: string; queued: number }[] = [];

  /** The carried state is restored at once: an update buffered for this execution may run right after. */
  constructor(readonly input: MonitorInput) {
    if (input?.continued) this.restore(input.continued);
  }

  private restore(c: MonitorCarried): void {
    Object.assign(this, {
      turns: c.turns,
      cost: c.cost,
      startedAt: c.startedAt,
      inbox: [...c.inbox],
      nextPrompt: c.nextPrompt,
      paused: c.paused,
      episodes: [...c.episodes],
      lastTurn: c.lastTurn,
      reportSeq: c.reportSeq ?? 0,
    });
  }

  carry(run: Run): MonitorCarried {
    return {
      run: run.carry(),
      turns: this.turns,
      cost: this.cost,
      startedAt: this.startedAt,
      inbox: this.inbox,
      nextPrompt: this.nextPrompt,
      paused: this.paused,
      episodes: this.episodes,
      viewFrom: run.viewFrom,
      lastTurn: this.lastTurn,
      ...(this.reportSeq > 0 && { reportSeq: this.reportSeq }),
    };
  }

  get options() {
    return this.input.options ?? {};
  }

  get budgets() {
    return this.input.budgets ?? {};
  }

  state(run: Run | undefined): MonitorState {
    return {
      agent: run?.agent.name ?? this.input?.agent ?? '',
      phase: this.phase,
      nextWakeAt: this.nextWakeAt !== null ? new Date(this.nextWakeAt).toISOString() : null,
      wakeReason: this.wakeReason,
      turns: this.turns,
      usage: run?.usage ?? { inputTokens: 0, outputTokens: 0 },
      cost: this.cost,
      lastTurn: this.lastTurn,
      inbox: this.inbox.length,
      budgets: this.budgets,
      ...(run && run.approvals.waiting > 0 && { pending: run.approvals.list() }),
    };
  }

  /** Sets the phase, its search attribute value and the UI's current details. */
  enter(phase: MonitorPhase, details: string): void {
    if (phase !== this.phase) upsertSearchAttributes([{ key: statusSearchAttribute, value: phase }]);
    this.phase = phase;
    setCurrentDetails(details);
  }
}

export async function agentMonitor(input: MonitorInput): Promise<MonitorResult> {
  const m = new Monitor(input);
  let run: Run | undefined;
  registerHandlers(m, () => run);
  try {
    checkInput(input);
    if (input.continued) {
      run = Run.resume(input.continued.run);
      run.viewFrom = input.continued.viewFrom;
    } else {
      const spec = await resolveAgent({
        agent: input.agent,
        ...(input.context !== undefined && { context: input.context }),
        ...(input.overrides && { overrides: input.overrides }),
      });
      run = Run.start(withMonitorTools(spec, m), input.context);
      run.emit({ type: 'run.started', agent: spec.name, model: spec.model, input: preview(input.goal) });
      m.nextPrompt = input.goal;
    }
    if (workflowInfo().typedSearchAttributes.get(statusSearchAttribute) === undefined) {
      upsertSearchAttributes([
        { key: agentSearchAttribute, value: run.agent.name },
        { key: statusSearchAttribute, value: 'running' },
      ]);
    }
    run.stages = [monitorToolsStage(m)];
    run.approvals.onWaiting = (waiting) => {
      const pending = run!.approvals.list();
      if (waiting) m.enter('awaiting_approval', `turn ${m.turns}: awaiting approval of ${pending.map((p) => `${p.tool} (${p.callId})`).join(', ')}`);
      else m.enter('running', `turn ${m.turns}: running`);
    };
    for (const { message, queued } of m.early.splice(0)) run.emit({ type: 'monitor.injected', message: preview(message, 500), queued });
    // Reports of its own background agents wake a sleeping monitor.
    run.wake = () => {
      m.wakeRequested = true;
    };
    if (!input.continued && input.startAt !== undefined && input.startAt > Date.now()) {
      await sleepUntil(m, run, { wakeAt: input.startAt, reason: 'scheduled start', nextPrompt: input.goal }, undefined);
    }
    const result = await loop(m, run);
    await run.background?.end();
    await report(m, result.status === 'completed' ? 'completed' : 'stopped', result.detail ?? result.status);
    return result;
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    const cancelled = isCancellation(err) || CancellationScope.current().consideredCancelled;
    const status = cancelled ? 'cancelled' : 'failed';
    m.phase = status;
    upsertSearchAttributes([{ key: statusSearchAttribute, value: status }]);
    setCurrentDetails(`${status} after ${m.turns} ${m.turns === 1 ? 'turn' : 'turns'}`);
    const error = (err as Error)?.message ?? String(err);
    run?.emit({ type: 'run.finished', status, ...(!cancelled && { error }) });
    await run?.background?.end();
    await report(m, cancelled ? 'stopped' : 'failed', cancelled ? 'cancelled' : error);
    throw err;
  }
}

/**
 * A background agent tells the run that started it: an alert, or its end. Numbered, so the
 * parent reads each once; sent even while this monitor is being cancelled.
 */
async function report(m: Monitor, kind: ReportKind, text: string): Promise<void> {
  const parent = m.input.parent;
  if (!parent) return;
  const seq = ++m.reportSeq;
  const signal = { name: parent.name, seq, kind, text: preview(text, 4_000), at: new Date().toISOString() };
  await CancellationScope.nonCancellable(() =>
    getExternalWorkflowHandle(parent.workflowId)
      .signal(backgroundReportSignal, signal)
      // The parent ended (and let this one run): nobody to tell.
      .catch(() => undefined),
  );
}

function withMonitorTools(spec: AgentSpec, m: Monitor): AgentSpec {
  const own = monitorTools(m.options);
  const clash = own.find((t) => spec.tools.some((s) => s.name === t.name));
  if (clash) {
    throw ApplicationFailure.create({
      type: ErrorTypes.InvalidInput,
      nonRetryable: true,
      message: `Agent "${spec.name}" has a tool named "${clash.name}", which a monitor needs for itself; rename the tool or set options.${clash.name === (m.options.doneTool?.name ?? DONE_TOOL) ? 'doneTool' : 'scheduleTool'}.name.`,
    });
  }
  return { ...spec, tools: [...spec.tools, ...own, ...(m.input.parent ? [alertTool()] : [])] };
}

async function loop(m: Monitor, run: Run): Promise<MonitorResult> {
  const wallclockMs = m.budgets.wallclock !== undefined ? msToNumber(m.budgets.wallclock as never) : undefined;
  for (;;) {
    const reached = budgetReached(m.budgets, { turns: m.turns, usage: run.usage, cost: m.cost, elapsedMs: Date.now() - m.startedAt }, wallclockMs);
    if (m.stopRequested) return finish(m, run, 'cancelled', m.stopReason ?? 'stopped');
    if (reached) return finish(m, run, reached, `budget reached: ${reached}`);
    if (m.paused) {
      run.emit({ type: 'monitor.paused' });
      m.enter('paused', `paused after ${m.turns} turns: resume with keel resume`);
      await condition(() => !m.paused || m.stopRequested);
      if (m.stopRequested) continue;
      run.emit({ type: 'monitor.resumed' });
    }
    if (shouldContinueAsNew(m)) {
      await condition(allHandlersFinished);
      run.emit({ type: 'run.continued', turns: m.turns });
      return await continueAsNew<typeof agentMonitor>({ ...m.input, continued: m.carry(run) });
    }

    const outcome = await monitorTurn(m, run);
    if (outcome === 'stopped') continue;
    if (outcome === 'aborted') return finish(m, run, 'retry_aborted', m.lastTurn?.error ?? 'a turn failed');
    if (outcome instanceof RunBlocked) return finish(m, run, 'blocked', outcome.message);
    if (m.done !== null) return finish(m, run, 'completed', m.done);
    if (m.intent) {
      const woke = await sleepUntil(m, run, m.intent, wallclockMs);
      m.nextPrompt = m.intent.nextPrompt;
      if (woke === 'stopped') continue;
    }
  }
}

/** One monitor turn, retried or skipped by the turn retry policy. */
async function monitorTurn(m: Monitor, run: Run): Promise<'ok' | 'skipped' | 'aborted' | 'stopped' | RunBlocked> {
  const turn = ++m.turns;
  m.turnsThisExecution++;
  const inbox = m.inbox.splice(0);
  const reports = run.background?.takeBlock();
  const asked = turnPrompt(m.nextPrompt ?? m.options.continuePrompt ?? DEFAULT_CONTINUE_PROMPT, inbox);
  const prompt = reports ? `${reports}\n\n${asked}` : asked;
  m.nextPrompt = null;
  const start = run.messageCount;
  for (let attempt = 1; ; attempt++) {
    m.done = null;
    m.intent = null;
    m.enter('running', `turn ${turn}: ${preview(prompt.split('\n').at(-1) ?? '', 100)}`);
    run.emit({ type: 'monitor.turn', turn, prompt: preview(prompt), inbox: inbox.length });
    run.append([userMessage(prompt)]);
    try {
      await episode(m, run);
      m.episodes.push({ start, chars: run.charsSince(start) });
      compact(m, run);
      m.lastTurn = {
        turn,
        at: new Date().toISOString(),
        outcome: m.done !== null ? 'done' : m.intent ? 'scheduled' : 'answered',
        ...(run.lastAnswer && { text: preview(run.lastAnswer, 500) }),
      };
      return 'ok';
    } catch (err) {
      if (err instanceof ContinueAsNew) throw err;
      // The run itself was cancelled: that is not the turn's failure.
      if (CancellationScope.current().consideredCancelled) throw err;
      // A guardrail ends the monitor: retrying the turn would only trip it again.
      if (err instanceof RunBlocked) return err;
      run.rollback(start);
      if (m.stopRequested) return 'stopped';
      const failure = innermostError(err);
      const errorType = failure instanceof ApplicationFailure ? (failure.type ?? undefined) : isCancellation(err) ? 'KeelTurnTimeout' : undefined;
      const message = isCancellation(err) ? 'the turn took longer than its timeout' : failure.message;
      const action = turnRetryAction(m.options.turnRetry, errorType, attempt);
      run.emit({ type: 'monitor.turn_failed', turn, attempt, error: preview(message, 500), ...(errorType && { errorType }), action });
      m.lastTurn = { turn, at: new Date().toISOString(), outcome: action === 'skip' ? 'skipped' : 'failed', error: preview(message, 500) };
      if (action === 'retry') continue;
      return action === 'skip' ? 'skipped' : 'aborted';
    }
  }
}

/** The agent loop of one turn: model and tools until the model answers, in a scope `stop` can cancel. */
async function episode(m: Monitor, run: Run): Promise<void> {
  const scope = new CancellationScope();
  m.turnScope = scope;
  const timeoutMs = m.budgets.turnTimeout !== undefined ? msToNumber(m.budgets.turnTimeout as never) : undefined;
  let timer: CancellationScope | undefined;
  let timedOut = false;
  if (timeoutMs !== undefined) {
    timer = new CancellationScope();
    timer.run(() => sleep(timeoutMs, { summary: 'turn timeout' })).then(
      () => {
        timedOut = true;
        scope.cancel();
      },
      () => undefined,
    );
  }
  try {
    await scope.run(async () => {
      const first = run.turns;
      while (run.turns - first < run.agent.maxTurns) {
        const before = run.usage;
        const outcome = await runTurn(run);
        m.cost += costOf(run.agent.model, subtractUsage(run.usage, before), m.options.prices);
        if (m.done !== null || outcome.done) return;
      }
    });
    // An activity may finish after its cancel was asked for: the turn still ran out of time.
    if (timedOut) throw new CancelledFailure('the turn took longer than its timeout');
  } finally {
    timer?.cancel();
    m.turnScope = undefined;
  }
}

/** Keeps the model's view within its budget: the goal, then the most recent turns that fit. */
function compact(m: Monitor, run: Run): void {
  const budgetChars = (m.options.contextTokens ?? DEFAULT_CONTEXT_TOKENS) * 4;
  const from = viewStart(m.episodes, budgetChars);
  m.episodes = m.episodes.filter((e) => e.start >= from);
  run.viewFrom = from > 1 ? from : 0;
}

/** Sleeps until the intent's time (clamped), a message, a wake or a stop; paused, until resumed. */
async function sleepUntil(m: Monitor, run: Run, intent: ScheduleIntent, wallclockMs: number | undefined): Promise<'woke' | 'stopped'> {
  let wakeAt = intent.wakeAt;
  const maxDefer = m.options.maxDeferSeconds;
  if (maxDefer !== undefined && wakeAt - Date.now() > maxDefer * 1000) {
    wakeAt = Date.now() + maxDefer * 1000;
    run.emit({
      type: 'monitor.warning',
      message: `The next turn was scheduled ${Math.round((intent.wakeAt - Date.now()) / 1000)} s ahead; clamped to ${maxDefer} s (options.maxDeferSeconds).`,
    });
  }
  // Asleep past the wallclock budget would be asleep for nothing.
  const deadline = wallclockMs !== undefined ? Math.min(wakeAt, m.startedAt + wallclockMs) : wakeAt;
  const until = new Date(wakeAt).toISOString();
  m.nextWakeAt = wakeAt;
  m.wakeReason = intent.reason;
  run.emit({ type: 'monitor.sleep', turn: m.turns, until, reason: preview(intent.reason, 200), nextPrompt: preview(intent.nextPrompt) });
  m.enter('sleeping', `sleeping until ${until}: ${preview(intent.reason, 100)}`);
  const roused = () => m.wakeRequested || m.inbox.length > 0 || m.stopRequested;
  const ms = deadline - Date.now();
  if (ms > 0) await condition(roused, ms, { summary: `next turn: ${preview(intent.reason, 80)}` });
  let cause: 'timer' | 'inject' | 'wake' | 'resume' = m.wakeRequested ? 'wake' : m.inbox.length > 0 ? 'inject' : 'timer';
  if (m.paused && !m.stopRequested) {
    m.enter('paused', `paused while asleep (it was to wake at ${until}): resume with keel resume`);
    run.emit({ type: 'monitor.paused' });
    await condition(() => !m.paused || m.stopRequested);
    if (!m.stopRequested) run.emit({ type: 'monitor.resumed' });
    cause = 'resume';
  }
  m.wakeRequested = false;
  m.nextWakeAt = null;
  m.wakeReason = null;
  if (m.stopRequested) return 'stopped';
  run.emit({ type: 'monitor.wake', cause });
  return 'woke';
}

/** The monitor's own tools, answered in the workflow: they record an intent, the loop acts on it. */
function monitorToolsStage(m: Monitor): ToolStage {
  const doneName = m.options.doneTool?.name ?? DONE_TOOL;
  const scheduleName = m.options.scheduleTool?.name ?? SCHEDULE_TOOL;
  return {
    name: 'monitor',
    async run(request, next) {
      const { call } = request;
      if (call.name === ALERT_TOOL && m.input.parent) {
        const text = argumentsObject(call.arguments)?.text;
        if (typeof text !== 'string' || !text.trim()) return { result: errorResult(call, 'Error: text must say what the alert is.'), stage: 'monitor' };
        await report(m, 'alert', text);
        return { result: { role: 'tool' as const, toolCallId: call.id, toolName: call.name, content: 'Sent: the agent that started you reads it at its next turn.' }, stage: 'monitor' };
      }
      if (call.name !== doneName && call.name !== scheduleName) return next(request);
      const args: unknown = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
      const answer = (content: string, isError = false) => ({
        result: isError ? errorResult(call, content) : { role: 'tool' as const, toolCallId: call.id, toolName: call.name, content },
        stage: 'monitor',
      });
      if (call.name === doneName) {
        const detail = (args as { detail?: unknown }).detail;
        if (typeof detail !== 'string') return answer('Error: detail must be a string: what was achieved.', true);
        m.done = detail;
        return answer('Done: the run ends after this turn.');
      }
      const parsed = parseScheduleCall(args, Date.now(), m.options.scheduleTool?.maxDelaySeconds);
      if ('error' in parsed) return answer(parsed.error, true);
      m.intent = parsed.intent;
      return answer(
        `Scheduled: you will wake at ${new Date(parsed.intent.wakeAt).toISOString()} with your next prompt. Finish this turn's answer now.`,
      );
    },
  };
}

function finish(m: Monitor, run: Run, status: Exclude<MonitorStopReason, 'failed'>, detail: string | null): MonitorResult {
  m.phase = status;
  upsertSearchAttributes([{ key: statusSearchAttribute, value: status }]);
  setCurrentDetails(`${status.replace('_', ' ')} after ${m.turns} ${m.turns === 1 ? 'turn' : 'turns'}`);
  run.status = status === 'completed' || status === 'max_turns' || status === 'cancelled' ? status : run.status;
  run.emit({ type: 'run.finished', status, ...(detail !== null && { output: detail }) });
  return { status, detail, turns: m.turns, usage: run.usage, cost: m.cost, agent: run.agent.name };
}

function registerHandlers(m: Monitor, current: () => Run | undefined): void {
  setHandler(monitorStatusQuery, () => m.state(current()));
  registerRunHandlers(current, () => m.turns);
  const inject = (input: InjectInput): number => {
    const message = typeof input === 'string' ? input : input?.message;
    m.inbox.push(message);
    const run = current();
    if (run) run.emit({ type: 'monitor.injected', message: preview(message, 500), queued: m.inbox.length });
    else m.early.push({ message, queued: m.inbox.length });
    return m.inbox.length;
  };
  setHandler(injectSignal, (input) => {
    // A signal cannot be refused: a bad one is recorded as a warning, never a failure.
    if (!validInject(input)) current()?.emit({ type: 'monitor.warning', message: `Ignored an inject signal without a message: ${preview(JSON.stringify(input) ?? '', 200)}` });
    else inject(input);
  });
  setHandler(injectUpdate, (input) => ({ queued: inject(input) }), {
    validator: (input) => {
      if (!validInject(input)) throw new Error('inject takes a non-empty message: a string, or { "message": "..." }.');
    },
  });
  setHandler(wakeSignal, () => {
    m.wakeRequested = true;
  });
  setHandler(pauseSignal, () => {
    m.paused = true;
  });
  setHandler(resumeSignal, () => {
    m.paused = false;
  });
  setHandler(stopSignal, (reason) => {
    m.stopRequested = true;
    m.stopReason = typeof reason === 'string' && reason !== '' ? reason : 'stopped';
    m.turnScope?.cancel();
  });
}

function validInject(input: unknown): input is InjectInput {
  return parseInject(input).ok;
}

function checkInput(input: MonitorInput): void {
  checkMonitorInput(input, workflowInfo().continuedFromExecutionRunId !== undefined);
}

function shouldContinueAsNew(m: Monitor): boolean {
  const info = workflowInfo();
  const every = m.options.continueAsNewEveryTurns ?? DEFAULT_CONTINUE_AS_NEW_TURNS;
  return m.turnsThisExecution >= every || info.continueAsNewSuggested || info.historyLength >= CONTINUE_AS_NEW_EVENTS;
}


