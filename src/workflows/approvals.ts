/**
 * The run's approvals: the calls waiting for a person, the decisions that arrive (by Update,
 * Signal or the worker's approver), the permission mode and the rules approvals remembered.
 * A wait is a `condition`, so a run waits for an hour or a week, across worker restarts,
 * and costs nothing while it does.
 */
import { ApplicationFailure } from '@temporalio/common';
import { condition } from '@temporalio/workflow';
import type { AgentSpec, ToolSpec } from '../core/agent-spec.js';
import { parseApprovalDecision, type ApprovalDecision, type DecisionSource, type PendingApproval } from '../core/approval.js';
import { ErrorTypes } from '../core/errors.js';
import { preview } from '../core/limits.js';
import type { PermissionMode } from '../core/permissions/index.js';
import { schemaProblem, unknownFields } from '../core/schema-check.js';
import { Patches, hasPatch } from './patches.js';
import type { Run } from './run-state.js';

/**
 * A refused decision: non-retryable (the same decision is refused again), of one type, so an
 * Update's caller can tell a refusal from a failure to reach the run.
 */
export function refusal(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: ErrorTypes.ApprovalRejected, message, nonRetryable: true });
}

/**
 * Whether an edit's fields the tool does not take are refused. Asked only when an edit has such
 * fields, and never in an Update's validator (which writes nothing, and is not replayed): runs
 * recorded before the check ran such edits with the fields dropped, and replay the same.
 */
const refusesUnknownFields = () => hasPatch(Patches.RefuseUnknownFields);

export interface Decided {
  decision: ApprovalDecision;
  by: DecisionSource;
}

/** A call of the current turn that has not been decided: a decision for it may arrive at any time. */
interface OpenCall {
  tool: ToolSpec | undefined;
  turn: number;
}

export class Approvals {
  mode: PermissionMode;
  /** Allow rules added by approvals with `remember`. */
  readonly remembered: string[];
  private readonly pending = new Map<string, PendingApproval>();
  private readonly open = new Map<string, OpenCall>();
  private readonly decided = new Map<string, Decided>();
  /** Calls waiting in sub-agents' runs (and theirs), by run: listed here and decided here. */
  private readonly children = new Map<string, PendingApproval[]>();
  private interrupted = false;
  /** Told whenever the list of pending calls changes (a sub-agent's run tells its parent). */
  onChange: () => void = () => undefined;

  /** Told when the run starts or stops waiting for a person: the workflow updates its status, search attribute and UI details. */
  onWaiting: (waiting: boolean) => void = () => undefined;

  constructor(
    private readonly run: Run,
    carried: { mode?: PermissionMode; remembered?: string[] },
  ) {
    this.mode = carried.mode ?? run.agent.permissions?.mode ?? 'default';
    this.remembered = [...(carried.remembered ?? [])];
  }

  /** The calls of a turn: from now on a decision for one of them is accepted, and kept until it waits. */
  expect(turn: number, agent: AgentSpec, calls: { id: string; name: string }[]): void {
    this.interrupted = false;
    for (const call of calls) this.open.set(call.id, { tool: agent.tools.find((t) => t.name === call.name), turn });
  }

  /** The call was decided or ran: later decisions for it are rejected. */
  close(callId: string): void {
    this.open.delete(callId);
    this.decided.delete(callId);
  }

  /** This run's pending calls, then those of its sub-agents' runs (each naming its run). */
  list(): PendingApproval[] {
    return [...this.pending.values(), ...[...this.children.values()].flat()];
  }

  /** Pending calls no decision has reached yet. */
  undecided(): number {
    return this.list().filter((p) => !this.decided.has(p.callId)).length;
  }

  get waiting(): number {
    return this.pending.size + [...this.children.values()].reduce((n, list) => n + list.length, 0);
  }

  /** A sub-agent's run says which calls wait in it (and below it); an empty list: none. */
  setChild(workflowId: string, pending: PendingApproval[]): void {
    const before = this.waiting;
    if (pending.length > 0) this.children.set(workflowId, pending.map((p) => ({ ...p, run: p.run ?? workflowId })));
    else if (!this.children.delete(workflowId)) return;
    this.changed(before);
  }

  /** The sub-agent's run a pending call belongs to, when it is not this run's own. */
  childOf(callId: string): string | undefined {
    if (this.open.has(callId)) return undefined;
    for (const [workflowId, list] of this.children) {
      const found = list.find((p) => p.callId === callId);
      // The direct child forwards the decision further down when the call is its child's.
      if (found) return workflowId;
    }
    return undefined;
  }

  private changed(before: number): void {
    const now = this.waiting;
    if (before === 0 && now > 0) this.onWaiting(true);
    else if (before > 0 && now === 0) this.onWaiting(false);
    this.onChange();
  }

  /**
   * Checks a decision from outside: its shape, that its call is one of this turn's undecided
   * calls, and that edited arguments match the tool's schema and have no field the tool does not
   * take. Throws a refusal (a non-retryable ApplicationFailure) with what is wrong; the Update's
   * validator calls it (through `validate`), so a rejected Update writes nothing to history.
   */
  check(value: unknown, strictFields: () => boolean = refusesUnknownFields): ApprovalDecision {
    const parsed = parseApprovalDecision(value);
    if (!parsed.ok) throw refusal(parsed.error);
    const { decision } = parsed;
    const call = this.open.get(decision.callId);
    // A sub-agent's call: its run checks the rest when the decision reaches it.
    if (!call && this.childOf(decision.callId)) return decision;
    if (!call) {
      const waiting = [...this.pending.keys()];
      throw refusal(
        `Call "${decision.callId}" is not waiting for a decision in this run` +
          (waiting.length ? `; waiting: ${waiting.join(', ')}.` : '; no call is waiting.') +
          ' See the pending calls with `keel pending` or the run\'s status query.',
      );
    }
    if (this.decided.has(decision.callId)) throw refusal(`Call "${decision.callId}" was already decided.`);
    const problem = decision.arguments ? this.argumentsProblem(decision.callId, decision.arguments, strictFields) : undefined;
    if (problem) throw refusal(problem);
    return decision;
  }

  /** The Update's validator's check: the same, always refusing unknown fields, and deciding no patch (a validator records nothing). */
  validate(value: unknown): ApprovalDecision {
    return this.check(value, () => true);
  }

  /**
   * Edited arguments that do not match the tool's schema, or carry a field it does not take
   * (which its zod schema would drop without a word, losing the person's edit): what is wrong.
   */
  argumentsProblem(callId: string, args: Record<string, unknown>, strictFields: () => boolean = refusesUnknownFields): string | undefined {
    const tool = this.open.get(callId)?.tool;
    if (!tool) return undefined;
    const unknown = unknownFields(tool.parameters, args);
    if (unknown.length > 0 && strictFields()) {
      const count = unknown.reduce((n, u) => n + u.fields.length, 0);
      const where = unknown
        .map((u) => `${u.fields.map((f) => JSON.stringify(u.at ? `${u.at}.${f}` : f)).join(', ')} (${u.at || tool.name} takes: ${u.takes.join(', ') || 'nothing'})`)
        .join('; ');
      return `The edited arguments for ${tool.name} have ${count === 1 ? 'a field' : 'fields'} it does not take: ${where}. Nothing was changed: send the edit without ${count === 1 ? 'it' : 'them'}.`;
    }
    const problem = schemaProblem(tool.parameters, args);
    return problem ? `The edited arguments for ${tool.name} do not match its schema: ${problem}.` : undefined;
  }

  hasDecision(callId: string): boolean {
    return this.decided.has(callId);
  }

  /** Records a checked decision; the waiting call (or the call when it reaches its wait) takes it. */
  receive(decision: ApprovalDecision, by: DecisionSource): void {
    this.decided.set(decision.callId, { decision, by });
  }

  /** A Signal's decision: checked the same way, but a bad one is an event, never a failure. */
  receiveSignal(value: unknown): ApprovalDecision | undefined {
    try {
      const decision = this.check(value);
      if (this.childOf(decision.callId)) return decision;
      this.receive(decision, 'signal');
      return undefined;
    } catch (err) {
      const callId = typeof (value as { callId?: unknown })?.callId === 'string' ? (value as { callId: string }).callId : undefined;
      this.run.emit({ type: 'approval.rejected', ...(callId && { callId }), error: (err as Error).message });
      return undefined;
    }
  }

  /**
   * Waits for the call's decision: one that already arrived, or one to come; at the timeout,
   * the default. The call is listed as pending meanwhile.
   */
  async wait(entry: Omit<PendingApproval, 'since' | 'expires'>, timeoutMs: number | undefined, fallback: 'allow' | 'deny'): Promise<Decided> {
    const { callId } = entry;
    const early = this.decided.get(callId);
    if (early) return { ...early, by: early.by === 'update' || early.by === 'signal' ? early.by : 'early' };
    const now = Date.now();
    const before = this.waiting;
    this.pending.set(callId, {
      ...entry,
      since: new Date(now).toISOString(),
      ...(timeoutMs !== undefined && { expires: new Date(now + timeoutMs).toISOString() }),
    });
    this.run.emit({
      type: 'approval.requested',
      turn: entry.turn,
      callId,
      tool: entry.tool,
      stage: entry.stage,
      reason: entry.reason,
      arguments: preview(JSON.stringify(entry.arguments)),
    });
    this.changed(before);
    try {
      const arrived = () => this.decided.has(callId) || this.interrupted;
      const inTime = timeoutMs === undefined ? (await condition(arrived), true) : await condition(arrived, timeoutMs);
      if (this.interrupted && !this.decided.has(callId)) throw new Error('Another call of the turn failed; this one no longer waits.');
      if (inTime) return this.decided.get(callId)!;
      const reason = `No decision within ${describeMs(timeoutMs!)}; the call's default is ${fallback}.`;
      return { decision: { callId, decision: fallback, reason }, by: 'timeout' };
    } finally {
      const before = this.waiting;
      this.pending.delete(callId);
      this.changed(before);
    }
  }

  /** Another call of the turn failed (or blocked the run): the calls still waiting stop waiting. */
  interrupt(): void {
    this.interrupted = true;
  }

  /** Whether another call of this turn failed: a call waiting for a client stops waiting too. */
  get turnInterrupted(): boolean {
    return this.interrupted;
  }

  /** Adds an allow rule for the rest of the run (an approval said "allow again"). */
  remember(rule: string): void {
    if (!this.remembered.includes(rule)) this.remembered.push(rule);
  }
}

/** A duration as a person reads it: `5 min`, `30 s`. */
export function describeMs(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}
