/**
 * The handoff stage of the tool-call pipeline: a `transfer_to_<agent>` call is answered here,
 * not by a tool. The first handoff call of a turn asks for the handoff (the source's
 * `onHandoff` check and the target's spec come from a local activity, recorded); the run is
 * handed over once all the turn's calls are done (`applyHandoff`, from the turn).
 */
import { proxyLocalActivities } from '@temporalio/workflow';
import { DEFAULT_MAX_HANDOFFS } from '../core/handoff.js';
import { preview } from '../core/limits.js';
import { schemaProblem } from '../core/schema-check.js';
import { argumentsObject, errorResult, type ToolStage } from '../core/tool-pipeline.js';
import type { AgentActivities } from './activity-types.js';
import type { Run } from './run-state.js';

const { resolveHandoff } = proxyLocalActivities<AgentActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3 },
  summary: 'resolve handoff',
});

export function handoffStage(run: Run): ToolStage {
  return {
    name: 'handoff',
    async run(request, next) {
      const { agent, call, tool } = request;
      const spec = agent.handoffs?.find((h) => h.tool === call.name);
      if (!tool?.handoff || !spec) return next(request);
      const refuse = (why: string) => ({ result: errorResult(call, `The handoff to ${spec.agent} was refused: ${why}`), stage: 'handoff' });
      if (run.pendingHandoff) return refuse(`this turn already hands off to ${run.pendingHandoff.spec.name}; only the first handoff of a turn hands off.`);
      const max = agent.maxHandoffs ?? DEFAULT_MAX_HANDOFFS;
      if (run.handoffs >= max) return refuse(`the run has handed off ${run.handoffs} times, its limit (maxHandoffs ${max}). Answer yourself.`);
      const input = argumentsObject(call.arguments) ?? {};
      const problem = schemaProblem(tool.parameters, input);
      if (problem) return refuse(`its input does not match the schema: ${problem}.`);
      // Claimed before the activity: a later handoff call of the same turn is refused.
      const claim = { spec: agent, from: agent.name, callId: call.id, filter: spec.filter, ...(call.arguments.trim() && { input: preview(call.arguments, 500) }) };
      run.pendingHandoff = claim;
      const resolved = await resolveHandoff({
        from: agent.name,
        to: spec.agent,
        tool: call.name,
        input,
        ...(run.context !== undefined && { context: run.context }),
      });
      if ('refused' in resolved) {
        if (run.pendingHandoff === claim) run.pendingHandoff = undefined;
        return refuse(resolved.refused);
      }
      claim.spec = resolved.spec;
      return { result: { role: 'tool', toolCallId: call.id, toolName: call.name, content: `Handed off to ${spec.agent}: it answers from now on.` }, stage: 'handoff' };
    },
  };
}

/** After the turn's calls: the run goes on with the agent handed to. */
export function applyHandoff(run: Run, turn: number): void {
  const pending = run.pendingHandoff;
  if (!pending) return;
  run.pendingHandoff = undefined;
  run.handoffs++;
  run.handOff(pending.spec);
  run.handoffView = pending.filter === 'all' ? undefined : { at: run.messageCount, filter: pending.filter };
  run.emit({ type: 'handoff', turn, from: pending.from, to: pending.spec.name, callId: pending.callId, ...(pending.input && { input: pending.input }) });
}
