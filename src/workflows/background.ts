/**
 * Background agents, orchestrated: a run's spawn_agent, list_agents, check_agent and stop_agent
 * tools (answered here, in the workflow), the agents it started (child workflows running as
 * monitors, `<run ID>/<name>`), and their reports, read by the model at its next turn. Reports
 * come by signal and are numbered by their sender, so none is read twice; the state is carried
 * across continue-as-new. The children are started with the parent close policy ABANDON, since a
 * continue-as-new closes the parent's execution; the run cancels them itself when it really ends.
 */
import { msToNumber } from '@temporalio/common/lib/time.js';
import { CancellationScope, ParentClosePolicy, getExternalWorkflowHandle, startChild, workflowInfo } from '@temporalio/workflow';
import {
  CHECK_TOOL,
  LIST_TOOL,
  NAME_PATTERN,
  SPAWN_TOOL,
  STOP_TOOL,
  reportsBlock,
  type BackgroundChild,
  type BackgroundReport,
  type ParentLink,
} from '../core/background.js';
import { innermostError } from '../core/errors.js';
import { preview } from '../core/limits.js';
import type { MonitorBudgets, MonitorInput } from '../core/monitor.js';
import type { BackgroundState, ContinuedState } from '../core/run.js';
import { argumentsObject, errorResult, type ToolStage } from '../core/tool-pipeline.js';
import { AGENT_MONITOR_WORKFLOW, agentSearchAttribute, statusSearchAttribute, stopSignal } from './api.js';
import type { RunFeature } from './feature.js';
import { LiveStream } from './live-stream.js';
import type { Run } from './run-state.js';

interface SpawnArgs {
  name?: unknown;
  goal?: unknown;
  instructions?: unknown;
  tools?: unknown;
  budgets?: MonitorBudgets;
  schedule?: unknown;
  taskQueue?: unknown;
}

export class Background implements RunFeature {
  readonly name = 'background';
  readonly children = new Map<string, BackgroundChild>();
  private reports: BackgroundReport[] = [];
  private readonly seen: Record<string, number>;
  private run: Run | undefined;
  /** Reports received before the run existed (the first workflow task): their events are logged at attach. */
  private early: BackgroundReport[] = [];
  /** Told of each new report: a sleeping monitor wakes (a plain run reads it at its next turn anyway). */
  onReport: () => void = () => undefined;
  readonly stage: ToolStage;

  constructor(
    carried: BackgroundState | undefined,
    /** The run that started this one in the background, when it is a background agent. */
    private readonly parent: ParentLink | undefined,
  ) {
    for (const child of carried?.children ?? []) this.children.set(child.name, child);
    this.reports = [...(carried?.reports ?? [])];
    this.seen = { ...(carried?.seen ?? {}) };
    this.stage = this.spawnStage();
  }

  attach(run: Run): void {
    this.run = run;
    for (const report of this.early.splice(0)) this.logged(report);
  }

  carry(): Partial<ContinuedState> {
    const used = this.children.size > 0 || this.reports.length > 0 || Object.keys(this.seen).length > 0;
    return used ? { background: { children: [...this.children.values()], reports: this.reports, seen: this.seen } } : {};
  }

  running(): BackgroundChild[] {
    return [...this.children.values()].filter((c) => c.status === 'running');
  }

  /** A report from a background agent: recorded once (by its number), read at the next turn. */
  receive(report: BackgroundReport): void {
    if (typeof report?.name !== 'string' || typeof report.seq !== 'number') return;
    if ((this.seen[report.name] ?? 0) >= report.seq) return;
    this.seen[report.name] = report.seq;
    this.reports.push(report);
    const child = this.children.get(report.name);
    if (child) {
      child.lastReport = report;
      if (report.kind !== 'alert') child.status = report.kind;
    }
    if (this.run) this.logged(report);
    else this.early.push(report);
    this.onReport();
  }

  private logged(report: BackgroundReport): void {
    this.run!.emit({ type: 'background.report', name: report.name, kind: report.kind, text: preview(report.text, 500), report: report.seq });
  }

  /** The reports not yet read, as the block the model reads before its next turn; undefined when there are none. */
  beforeTurn(): string | undefined {
    if (this.reports.length === 0) return undefined;
    const block = reportsBlock(this.reports);
    this.reports = [];
    return block;
  }

  /** The run ends: the agents it started that still run are cancelled, unless it said to let them run. */
  async end(): Promise<void> {
    if (this.children.size === 0) return;
    const spec = this.run?.agent.background;
    if (spec?.onParentEnd === 'continue') return;
    await CancellationScope.nonCancellable(() =>
      Promise.all(this.running().map((c) => getExternalWorkflowHandle(c.workflowId).cancel().catch(() => undefined))),
    );
  }

  private spawnStage(): ToolStage {
    const parent = this.parent;
    return {
      name: 'background',
      run: async (request, next) => {
        const { call, agent } = request;
        const spec = agent.background;
        const tools = [SPAWN_TOOL, LIST_TOOL, CHECK_TOOL, STOP_TOOL];
        if (!spec || !tools.includes(call.name)) return next(request);
        const args = (argumentsObject(call.arguments) ?? {}) as SpawnArgs & { reason?: unknown };
        const answer = (content: string, isError = false) => ({
          result: isError ? errorResult(call, `Error: ${content}`) : { role: 'tool' as const, toolCallId: call.id, toolName: call.name, content },
          stage: 'background',
        });
        const known = () => [...this.children.keys()].join(', ') || 'none';
        if (call.name === LIST_TOOL) return answer(JSON.stringify([...this.children.values()].map(summary)));
        if (call.name === CHECK_TOOL || call.name === STOP_TOOL) {
          const child = this.children.get(String(args.name));
          if (!child) return answer(`you started no background agent named "${String(args.name)}"; yours: ${known()}.`, true);
          if (call.name === CHECK_TOOL) return answer(JSON.stringify(summary(child)));
          if (child.status !== 'running') return answer(`${child.name} is not running (${child.status}).`, true);
          const reason = typeof args.reason === 'string' ? args.reason : 'stopped by the agent that started it';
          await getExternalWorkflowHandle(child.workflowId).signal(stopSignal, reason);
          this.run!.emit({ type: 'background.stopped', name: child.name, reason });
          return answer(`Stopping ${child.name}: it reports when it has stopped.`);
        }

        // spawn_agent
        const name = String(args.name ?? '');
        const goal = typeof args.goal === 'string' ? args.goal : '';
        if (!NAME_PATTERN.test(name)) return answer(`"${name}" is not a valid name: use 1 to 40 lowercase letters, digits, - and _, starting with a letter or digit.`, true);
        if (this.children.has(name)) return answer(`the name "${name}" is taken (by a ${this.children.get(name)!.status} agent); choose another.`, true);
        if (!goal.trim()) return answer('give the agent a goal.', true);
        const depth = (parent?.depth ?? 0) + 1;
        const maxDepth = Math.min(spec.maxDepth, parent?.maxDepth ?? Infinity);
        if (depth > maxDepth) return answer(`background agents may nest ${maxDepth} deep here, and this one would be ${depth}. Do it yourself.`, true);
        let toolNames: string[] | undefined;
        if (args.tools !== undefined) {
          if (!Array.isArray(args.tools) || !args.tools.every((t) => typeof t === 'string')) return answer('"tools" must be a list of tool names.', true);
          const unknown = spec.catalog ? args.tools.filter((t) => !spec.catalog!.includes(t)) : [];
          if (unknown.length) return answer(`unknown tools ${unknown.join(', ')}; a background agent may have: ${spec.catalog!.join(', ') || 'none'}.`, true);
          toolNames = args.tools;
        }
        const taskQueue = typeof args.taskQueue === 'string' ? args.taskQueue : undefined;
        if (taskQueue && !spec.taskQueues.includes(taskQueue)) {
          return answer(`task queue "${taskQueue}" is not one this agent may use (${spec.taskQueues.join(', ') || 'none'}).`, true);
        }
        const startAt = args.schedule !== undefined ? scheduleTime(args.schedule) : undefined;
        if (startAt === null) return answer(`"schedule" must be an ISO 8601 time or a delay such as "10m", got ${JSON.stringify(args.schedule)}.`, true);
        if (this.running().length >= spec.maxConcurrent) {
          return answer(`${this.running().length} background agents are running, the limit (${spec.maxConcurrent}); stop one or wait for one to end.`, true);
        }
        const workflowId = `${workflowInfo().workflowId}/${name}`;
        const streaming = this.run!.feature(LiveStream);
        const input: MonitorInput = {
          agent: spec.agent,
          goal,
          ...(this.run!.context !== undefined && { context: this.run!.context }),
          // A copy of the run's state as it is now: a background agent's writes stay its own (see README).
          ...(this.run!.state.used && { state: this.run!.state.values }),
          overrides: { ...(typeof args.instructions === 'string' && { instructions: args.instructions }), ...(toolNames && { tools: toolNames }) },
          budgets: { ...spec.budgets, ...(args.budgets ?? {}) },
          parent: { workflowId: workflowInfo().workflowId, name, depth, maxDepth },
          ...(startAt !== undefined && { startAt }),
          // A streaming run's background agents stream too: a client follows them by their workflow IDs.
          ...(streaming && { options: { stream: streaming.options } }),
        };
        try {
          await startChild(AGENT_MONITOR_WORKFLOW, {
            workflowId,
            args: [input],
            ...(taskQueue && { taskQueue }),
            // A continue-as-new closes this execution: the run cancels its agents itself when it ends.
            parentClosePolicy: ParentClosePolicy.ABANDON,
            typedSearchAttributes: [
              { key: agentSearchAttribute, value: spec.agent },
              { key: statusSearchAttribute, value: 'running' },
            ],
            staticSummary: `background agent ${name}: ${preview(goal, 100)}`,
          });
        } catch (err) {
          return answer(`could not start ${name}: ${innermostError(err).message}`, true);
        }
        const child: BackgroundChild = { name, workflowId, goal: preview(goal, 500), status: 'running', spawnedAt: new Date().toISOString(), ...(taskQueue && { taskQueue }) };
        this.children.set(name, child);
        this.run!.emit({ type: 'background.spawned', name, workflowId, goal: preview(goal, 500), ...(taskQueue && { taskQueue }) });
        return answer(`Started ${name} in the background (${workflowId}). Its reports reach you at your next turns.`);
      },
    };
  }
}

function summary(c: BackgroundChild) {
  return { name: c.name, status: c.status, goal: c.goal, workflowId: c.workflowId, ...(c.lastReport && { lastReport: { kind: c.lastReport.kind, text: c.lastReport.text, at: c.lastReport.at } }) };
}

/** An ISO time or a delay ("10m", "2 hours") as epoch ms; null when it is neither. */
function scheduleTime(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const at = Date.parse(value);
  if (/^\d{4}-\d{2}-\d{2}/.test(value) && Number.isFinite(at)) return at;
  try {
    const ms = msToNumber(value as never);
    return Number.isFinite(ms) && ms >= 0 ? Date.now() + ms : null;
  } catch {
    return null;
  }
}
