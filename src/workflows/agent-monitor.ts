/**
 * A monitor: an agent given a goal that runs turn after turn without a person. A driver on the
 * shared lifecycle (lifecycle.ts): each monitor turn is an episode (model and tools until the
 * model answers, episode.ts); between turns it sleeps on a durable timer, until the time it
 * scheduled, a message, or a wake. Its own state and handlers are in monitor-state.ts.
 */
import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ContinueAsNew,
  condition,
  continueAsNew,
  isCancellation,
  setCurrentDetails,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common/lib/time.js';
import { innermostError } from '../core/errors.js';
import { checkMonitorInput } from '../core/boundary.js';
import { preview } from '../core/limits.js';
import { userMessage } from '../core/messages.js';
import {
  DEFAULT_CONTINUE_PROMPT,
  budgetReached,
  costOf,
  turnPrompt,
  turnRetryAction,
  viewStart,
  type MonitorInput,
  type MonitorPhase,
  type MonitorResult,
  type MonitorStopReason,
  type ScheduleIntent,
} from '../core/monitor.js';
import { subtractUsage } from '../core/usage.js';
import { statusSearchAttribute } from './api.js';
import { Background } from './background.js';
import { runEpisode } from './episode.js';
import { Lifecycle } from './lifecycle.js';
import { RunBlocked } from './tool-gate.js';
import { Monitor, monitorFeature, registerMonitorHandlers, report, runChecksApply } from './monitor-state.js';
import type { Run } from './run-state.js';

const DEFAULT_CONTINUE_AS_NEW_TURNS = 100;
const DEFAULT_CONTEXT_TOKENS = 50_000;


export async function agentMonitor(input: MonitorInput): Promise<MonitorResult> {
  const m = new Monitor(input);
  const life = new Lifecycle({
    start: { agent: input?.agent, context: input?.context, state: input?.state, overrides: input?.overrides, prompt: input?.goal },
    continued: input?.continued?.run,
    parentLink: input?.parent,
    stream: input?.options?.stream,
    features: [monitorFeature(m)],
    needsSearchAttributes: (status) => status === undefined,
    onWaiting: (run, waiting) => {
      const pending = run.approvals.list();
      if (waiting) m.enter('awaiting_approval', `turn ${m.turns}: awaiting approval of ${pending.map((p) => `${p.tool} (${p.callId})`).join(', ')}`);
      else m.enter('running', `turn ${m.turns}: running`);
    },
    onEnd: (status) => {
      m.phase = status as MonitorPhase;
      upsertSearchAttributes([{ key: statusSearchAttribute, value: status }]);
      setCurrentDetails(`${status.replace('_', ' ')} after ${m.turns} ${m.turns === 1 ? 'turn' : 'turns'}`);
    },
    runChecks: (run) => runChecksApply(run),
    farewell: (status, text) => report(m, status === 'completed' ? 'completed' : status === 'failed' ? 'failed' : 'stopped', text),
  });
  registerMonitorHandlers(m, () => life.run);
  // Reports of its own background agents wake a sleeping monitor.
  life.background.onReport = () => {
    m.wakeRequested = true;
  };
  try {
    checkInput(input);
    const opened = await life.open();
    const { run } = opened;
    if ('blocked' in opened) return await finish(m, life, run, 'blocked', `blocked by guardrail "${opened.blocked.guardrail}": ${opened.blocked.reason}`);
    if (input.continued) run.viewFrom = input.continued.viewFrom;
    else m.nextPrompt = opened.prompt ?? input.goal;
    for (const { message, queued } of m.early.splice(0)) run.emit({ type: 'monitor.injected', message: preview(message, 500), queued });
    if (!input.continued && input.startAt !== undefined && input.startAt > Date.now()) {
      await sleepUntil(m, run, { wakeAt: input.startAt, reason: 'scheduled start', nextPrompt: m.nextPrompt ?? input.goal }, undefined);
    }
    return await loop(m, life, run);
  } catch (err) {
    return await life.fail(err);
  }
}

async function loop(m: Monitor, life: Lifecycle, run: Run): Promise<MonitorResult> {
  const wallclockMs = m.budgets.wallclock !== undefined ? msToNumber(m.budgets.wallclock as never) : undefined;
  for (;;) {
    const reached = budgetReached(m.budgets, { turns: m.turns, usage: run.usage, cost: m.cost, elapsedMs: Date.now() - m.startedAt }, wallclockMs);
    if (m.stopRequested) return finish(m, life, run, 'cancelled', m.stopReason ?? 'stopped');
    if (reached) return finish(m, life, run, reached, `budget reached: ${reached}`);
    if (m.paused) {
      run.emit({ type: 'monitor.paused' });
      m.enter('paused', `paused after ${m.turns} turns: resume with keel resume`);
      await condition(() => !m.paused || m.stopRequested);
      if (m.stopRequested) continue;
      run.emit({ type: 'monitor.resumed' });
    }
    const every = m.options.continueAsNewEveryTurns ?? DEFAULT_CONTINUE_AS_NEW_TURNS;
    if (life.continueAsNewDue({ driver: m.turnsThisExecution >= every })) {
      // A monitor's run.continued event counts its own turns.
      await life.continueAsNew(run, () => continueAsNew<typeof agentMonitor>({ ...m.input, state: undefined, continued: m.carry(run) }), m.turns);
    }

    const outcome = await monitorTurn(m, run);
    if (outcome === 'stopped') continue;
    if (outcome === 'aborted') return finish(m, life, run, 'retry_aborted', m.lastTurn?.error ?? 'a turn failed');
    if (outcome instanceof RunBlocked) return finish(m, life, run, 'blocked', outcome.message);
    if (m.done !== null) return finish(m, life, run, 'completed', m.done);
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
  const reports = run.feature(Background)?.beforeTurn?.();
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

/** The agent loop of one turn: an episode (model and tools until the model answers), in a scope `stop` can cancel. */
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
      let before = run.usage;
      const end = await runEpisode(run, {
        mayTurn: () => run.turns - first < run.agent.maxTurns,
        afterTurn: () => {
          m.cost += costOf(run.agent.model, subtractUsage(run.usage, before), m.options.prices);
          before = run.usage;
          return m.done !== null;
        },
      });
      if (end.status === 'blocked') throw end.blocked;
      // A stop condition ends the monitor as it ends a plain run.
      if (end.status === 'completed' && end.stopCondition) m.done = `stop condition: ${end.stopCondition}`;
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

async function finish(m: Monitor, life: Lifecycle, run: Run, status: Exclude<MonitorStopReason, 'failed'>, detail: string | null): Promise<MonitorResult> {
  await life.close(run, status, detail ?? undefined);
  return { kind: 'monitor', status, detail, output: detail, turns: m.turns, usage: run.usage, cost: m.cost, agent: run.agent.name, ...(run.state.used && { state: run.state.values }) };
}

function checkInput(input: MonitorInput): void {
  checkMonitorInput(input, workflowInfo().continuedFromExecutionRunId !== undefined);
}
