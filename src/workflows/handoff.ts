/**
 * Handoffs, as a feature of a run: a `transfer_to_<agent>` call is answered by this stage, not
 * by a tool. The first handoff call of a turn asks for the handoff (the source's `onHandoff`
 * check and the target's spec come from a local activity, recorded); the run is handed over
 * once all the turn's calls are done (`afterCalls`). What the agent in charge sees of the
 * conversation before the handoff (its input filter) is a view for the model activity.
 */
import { proxyLocalActivities } from '@temporalio/workflow';
import type { AgentSpec } from '../core/agent-spec.js';
import { DEFAULT_MAX_HANDOFFS } from '../core/handoff.js';
import { preview } from '../core/limits.js';
import type { ContinuedState, HandoffView } from '../core/run.js';
import { schemaProblem } from '../core/schema-check.js';
import { argumentsObject, errorResult, type ToolStage } from '../core/tool-pipeline.js';
import type { AgentActivities } from './activity-types.js';
import type { RunFeature } from './feature.js';
import type { Run } from './run-state.js';

const { resolveHandoff } = proxyLocalActivities<AgentActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3 },
  summary: 'resolve handoff',
});

interface PendingHandoff {
  spec: AgentSpec;
  from: string;
  callId: string;
  filter: HandoffView['filter'] | 'all';
  input?: string;
}

export class Handoffs implements RunFeature {
  readonly name = 'handoff';
  /** Handoffs so far in the run. */
  private count: number;
  /** What the agent in charge sees of the conversation before the last handoff. */
  view: HandoffView | undefined;
  /** A handoff this turn's calls asked for, applied when they are all done. */
  private pending: PendingHandoff | undefined;
  private run!: Run;

  constructor(carried?: Pick<ContinuedState, 'handoffs' | 'handoffView'>) {
    this.count = carried?.handoffs ?? 0;
    this.view = carried?.handoffView;
  }

  attach(run: Run): void {
    this.run = run;
  }

  /** A session's next message is a new run: its handoffs count toward its own limit, from zero. */
  newRun(): void {
    this.count = 0;
  }

  carry(): Partial<ContinuedState> {
    return { ...(this.count > 0 && { handoffs: this.count }), ...(this.view && { handoffView: this.view }) };
  }

  readonly stage: ToolStage = {
    name: 'handoff',
    run: async (request, next) => {
      const { agent, call, tool } = request;
      const spec = agent.handoffs?.find((h) => h.tool === call.name);
      if (!tool?.handoff || !spec) return next(request);
      const refuse = (why: string) => ({ result: errorResult(call, `The handoff to ${spec.agent} was refused: ${why}`), stage: 'handoff' });
      if (this.pending) return refuse(`this turn already hands off to ${this.pending.spec.name}; only the first handoff of a turn hands off.`);
      const max = agent.maxHandoffs ?? DEFAULT_MAX_HANDOFFS;
      if (this.count >= max) return refuse(`the run has handed off ${this.count} times, its limit (maxHandoffs ${max}). Answer yourself.`);
      const input = argumentsObject(call.arguments) ?? {};
      const problem = schemaProblem(tool.parameters, input);
      if (problem) return refuse(`its input does not match the schema: ${problem}.`);
      // Claimed before the activity: a later handoff call of the same turn is refused.
      const claim: PendingHandoff = { spec: agent, from: agent.name, callId: call.id, filter: spec.filter, ...(call.arguments.trim() && { input: preview(call.arguments, 500) }) };
      this.pending = claim;
      const resolved = await resolveHandoff({
        from: agent.name,
        to: spec.agent,
        tool: call.name,
        input,
        ...(this.run.context !== undefined && { context: this.run.context }),
        // The target's static instructions are filled from the state as it is now; the run keeps sharing it.
        ...(this.run.state.used && { state: this.run.state.values }),
      });
      if ('refused' in resolved) {
        if (this.pending === claim) this.pending = undefined;
        return refuse(resolved.refused);
      }
      claim.spec = resolved.spec;
      return { result: { role: 'tool', toolCallId: call.id, toolName: call.name, content: `Handed off to ${spec.agent}: it answers from now on.` }, stage: 'handoff' };
    },
  };

  /** After the turn's calls: the run goes on with the agent handed to. */
  afterCalls(turn: number): void {
    const pending = this.pending;
    if (!pending) return;
    const run = this.run;
    this.pending = undefined;
    this.count++;
    run.handOff(pending.spec);
    this.view = pending.filter === 'all' ? undefined : { at: run.messageCount, filter: pending.filter };
    run.emit({ type: 'handoff', turn, from: pending.from, to: pending.spec.name, callId: pending.callId, ...(pending.input && { input: pending.input }) });
  }
}
