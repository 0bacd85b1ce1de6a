/**
 * The pipeline stage that decides a call before it runs: the stages before the call (PreToolUse
 * hooks, middleware, the permission policy, tool input guardrails), approval when one of them
 * asked or the tool requires it, and a second look when an approval edited the arguments.
 * Pure decisions run here; the worker-side ones share one activity, scheduled only when the
 * agent has one of them.
 */
import type { AgentSpec } from '../core/agent-spec.js';
import type { Tripwire } from '../core/guardrails.js';
import { rememberRule } from '../core/permissions/index.js';
import { argumentsObject, errorResult, type ToolCallNext, type ToolCallOutcome, type ToolCallRequest, type ToolStage } from '../core/tool-pipeline.js';
import {
  needsWorkerBefore,
  needsWorkerRecheck,
  permissionRequest,
  policyVerdict,
  startTally,
  tally,
} from '../core/tool-gate.js';
import type { CheckToolCallResult } from './activity-types.js';
import type { Decided } from './approvals.js';
import type { Run } from './run-state.js';
import { approverActivity, checkActivities } from './scheduling.js';

/** A guardrail tripped: the run ends `blocked`. Thrown through the turn to the loop. */
export class RunBlocked extends Error {
  constructor(readonly tripwire: Tripwire) {
    super(`Blocked by guardrail "${tripwire.guardrail}": ${tripwire.reason}`);
    this.name = 'RunBlocked';
  }
}

/** Records a tripped guardrail and ends the turn. */
export function blocked(run: Run, tripwire: Tripwire): RunBlocked {
  run.emit({
    type: 'guardrail.tripped',
    guardrail: tripwire.guardrail,
    kind: tripwire.kind,
    reason: tripwire.reason,
    ...(tripwire.callId && { callId: tripwire.callId }),
  });
  return new RunBlocked(tripwire);
}

export function gateStage(run: Run): ToolStage {
  return {
    name: 'gate',
    async run(request, next) {
      const original = argumentsObject(request.call.arguments);
      // Only runs recorded before the validate stage existed get here with arguments that are no object.
      if (!original) return next(request);
      try {
        return await gate(run, request, original, next);
      } finally {
        run.approvals.close(request.call.id);
      }
    },
  };
}

async function gate(run: Run, request: ToolCallRequest, original: Record<string, unknown>, next: ToolCallNext): Promise<ToolCallOutcome> {
  const { agent, turn, call } = request;
  const approvals = run.approvals;
  const before = needsWorkerBefore(agent, call.name) ? await onWorker(run, request, original, false) : inWorkflow(run, agent, call.name, original);
  record(run, request, before);
  let args = before.arguments ?? original;
  let changed = before.arguments !== undefined;
  if (before.decision === 'deny') return denied(request, before.stage ?? 'permissions', before.reason ?? 'denied');

  const requires = before.requiresApproval ?? request.tool?.requiresApproval === true;
  const ask = before.decision === 'ask' || (before.decision === undefined && requires);
  if (ask) {
    const stage = before.decision === 'ask' ? (before.stage ?? 'permissions') : 'tool';
    const reason = before.decision === 'ask' ? (before.reason ?? 'a stage asked for approval') : `${call.name} requires approval`;
    if (approvals.mode === 'dontAsk') {
      return denied(request, 'permissions', `mode dontAsk: a call that needs approval is denied (${reason})`);
    }
    const decided = await decide(run, request, args, stage, reason);
    const { decision } = decided;
    let remembered: string | undefined;
    if (decision.decision === 'allow' && decision.remember) {
      remembered = rememberRule(permissionRequest(agent, call.name, decision.arguments ?? args, before.key));
    }
    run.emit({
      type: 'approval.decided',
      turn,
      callId: call.id,
      tool: call.name,
      decision: decision.decision,
      by: decided.by,
      ...(decision.reason && { reason: decision.reason }),
      ...(decision.arguments && { edited: true }),
      ...(remembered && { remembered }),
    });
    if (decision.decision === 'deny') {
      return denied(request, 'approval', decision.reason ?? 'a person denied the call');
    }
    if (decision.arguments) {
      args = decision.arguments;
      changed = true;
      // Hooks and middleware do not run again; the policy and the guardrails do.
      const again = needsWorkerRecheck(agent, call.name) ? await onWorker(run, request, args, true) : inWorkflow(run, agent, call.name, args);
      record(run, request, again);
      if (again.decision === 'deny') {
        return denied(request, again.stage ?? 'permissions', `the edited arguments are denied: ${again.reason ?? 'denied'}`);
      }
    }
    if (remembered) approvals.remember(remembered);
  }
  approvals.close(call.id);
  const arguments_ = changed ? JSON.stringify(args) : call.arguments;
  return next({ ...request, call: { ...call, arguments: arguments_ } });
}

/** The stages before the call when all of them are pure: the permission policy alone. */
function inWorkflow(run: Run, agent: AgentSpec, tool: string, args: Record<string, unknown>): CheckToolCallResult {
  const t = startTally(args);
  tally(t, 'permissions', policyVerdict(agent, tool, args, { mode: run.approvals.mode, remembered: run.approvals.remembered }));
  return {
    ...(t.decision && { decision: t.decision, stage: t.stage, reason: t.reason }),
    steps: t.steps,
  };
}

/** The stages before the call, on the worker: one activity for hooks, middleware, policy and guardrails. */
async function onWorker(run: Run, request: ToolCallRequest, args: Record<string, unknown>, recheck: boolean): Promise<CheckToolCallResult> {
  const { agent, turn, call } = request;
  const given = recheck ? { ...call, arguments: JSON.stringify(args) } : call;
  const result = await checkActivities(`${recheck ? 'recheck' : 'check'} ${call.name}`).checkToolCall({
    agent: agent.name,
    spec: run.specHash,
    turn,
    call: given,
    mode: run.approvals.mode,
    ...(run.approvals.remembered.length > 0 && { remembered: [...run.approvals.remembered] }),
    ...(run.context !== undefined && { context: run.context }),
    ...run.state.ref(),
    ...(recheck && { recheck: true }),
  });
  // Middleware and hooks may have written the state, whatever they decided about the call.
  run.changeState(result.stateChanges, { turn, callId: call.id, tool: call.name });
  if (result.tripped) {
    run.approvals.close(call.id);
    throw blocked(run, result.tripped);
  }
  return result;
}

/** The call's decision: one sent early, the worker's approver, or a person's (with the timeout's default). */
async function decide(run: Run, request: ToolCallRequest, args: Record<string, unknown>, stage: string, reason: string): Promise<Decided> {
  const { agent, turn, call, tool } = request;
  if (agent.approver && !run.approvals.hasDecision(call.id)) {
    try {
      const answer = await approverActivity(call).approveCall({
        agent: agent.name,
        turn,
        callId: call.id,
        tool: call.name,
        arguments: args,
        stage,
        reason,
        ...(run.context !== undefined && { context: run.context }),
      });
      if (answer.decision) {
        const decision = { callId: call.id, ...answer, decision: answer.decision };
        const problem = answer.arguments ? run.approvals.argumentsProblem(call.id, answer.arguments) : undefined;
        if (!problem) return { decision, by: 'approver' };
        run.emit({ type: 'approval.rejected', callId: call.id, error: `The approver's edit was refused: ${problem}` });
      }
    } catch (err) {
      // The approver failing leaves the call to a person, as an approver with no answer does.
      run.emit({ type: 'approval.rejected', callId: call.id, error: `The approver failed: ${(err as Error).message}` });
    }
  }
  const settings = { ...agent.approval, ...tool?.approval };
  return run.approvals.wait(
    { callId: call.id, tool: call.name, arguments: args, stage, reason, turn },
    settings.timeoutMs,
    settings.default ?? 'deny',
  );
}

function record(run: Run, { turn, call }: ToolCallRequest, result: CheckToolCallResult): void {
  for (const step of result.steps) {
    run.emit({ type: 'tool.decided', turn, callId: call.id, tool: call.name, stage: step.stage, decision: step.decision, reason: step.reason });
  }
  for (const error of result.hookErrors ?? []) run.emit({ type: 'hook.failed', event: 'PreToolUse', error, callId: call.id });
}

function denied(request: ToolCallRequest, stage: string, reason: string): ToolCallOutcome {
  const { call } = request;
  return { result: errorResult(call, `The call to ${call.name} was denied (${stage}): ${reason}`), stage };
}
