/**
 * A monitor's own state and handlers, beside its run: totals, inbox, pause and stop, what the
 * current turn's tools asked for, and the feature of its own tools (report_done,
 * schedule_next_turn, and a background agent's report_alert). The driver is agent-monitor.ts.
 */
import {
  ApplicationFailure,
  CancellationScope,
  getExternalWorkflowHandle,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { ErrorTypes } from '../core/errors.js';
import { preview } from '../core/limits.js';
import { parseInject } from '../core/boundary.js';
import {
  DONE_TOOL,
  SCHEDULE_TOOL,
  monitorTools,
  parseScheduleCall,
  type Episode,
  type LastTurn,
  type MonitorCarried,
  type MonitorInput,
  type MonitorPhase,
  type MonitorState,
  type ScheduleIntent,
} from '../core/monitor.js';
import { argumentsObject, errorResult, type ToolStage } from '../core/tool-pipeline.js';
import {
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
import { ALERT_TOOL, alertTool, type ReportKind } from '../core/background.js';
import type { RunFeature } from './feature.js';
import { Patches, hasPatch } from './patches.js';
import { clientCallsOf, type Run } from './run-state.js';


/** Everything a monitor knows besides its run: totals, inbox, what it waits for. */
export class Monitor {
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
      run: run.carry({ view: true }),
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
      kind: 'monitor',
      agent: run?.agent.name ?? this.input?.agent ?? '',
      status: this.phase,
      phase: this.phase,
      messages: run?.messageCount ?? 0,
      lastSeq: run?.log.lastSeq ?? 0,
      nextWakeAt: this.nextWakeAt !== null ? new Date(this.nextWakeAt).toISOString() : null,
      wakeReason: this.wakeReason,
      turns: this.turns,
      usage: run?.usage ?? { inputTokens: 0, outputTokens: 0 },
      cost: this.cost,
      lastTurn: this.lastTurn,
      inbox: this.inbox.length,
      budgets: this.budgets,
      ...(run && run.approvals.waiting > 0 && { pending: run.approvals.list() }),
      ...clientCallsOf(run),
    };
  }

  /** Sets the phase, its search attribute value and the UI's current details. */
  enter(phase: MonitorPhase, details: string): void {
    if (phase !== this.phase) upsertSearchAttributes([{ key: statusSearchAttribute, value: phase }]);
    this.phase = phase;
    setCurrentDetails(details);
  }
}


/**
 * Monitors recorded before they had the run's start and end checks (input guardrails,
 * SessionStart, UserPromptSubmit, SessionEnd) replay without them; the patch is asked only of
 * a monitor whose agent has one, so one without them records no marker.
 */
export function runChecksApply(run: Run): boolean {
  const spec = run.agent;
  const configured = Boolean(spec.guardrails?.input?.length || spec.hooks?.SessionStart || spec.hooks?.UserPromptSubmit || spec.hooks?.SessionEnd);
  return configured && hasPatch(Patches.MonitorRunChecks);
}

/** The monitor's own tools and the stage that answers them, on every turn whatever agent is in charge. */
export function monitorFeature(m: Monitor): RunFeature {
  return {
    name: 'monitor',
    tools: (agent) => {
      const own = [...monitorTools(m.options), ...(m.input?.parent ? [alertTool()] : [])];
      // A continued run's spec has them already.
      if (!m.input?.continued) {
        const clash = own.find((t) => agent.tools.some((s) => s.name === t.name));
        if (clash) {
          throw ApplicationFailure.create({
            type: ErrorTypes.InvalidInput,
            nonRetryable: true,
            message: `Agent "${agent.name}" has a tool named "${clash.name}", which a monitor needs for itself; rename the tool or set options.${clash.name === (m.options.doneTool?.name ?? DONE_TOOL) ? 'doneTool' : 'scheduleTool'}.name.`,
          });
        }
      }
      return own;
    },
    stage: monitorToolsStage(m),
  };
}

/**
 * A background agent tells the run that started it: an alert, or its end. Numbered, so the
 * parent reads each once; sent even while this monitor is being cancelled.
 */
export async function report(m: Monitor, kind: ReportKind, text: string): Promise<void> {
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


export function registerMonitorHandlers(m: Monitor, current: () => Run | undefined): void {
  setHandler(monitorStatusQuery, () => m.state(current()));
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

