/**
 * Sub-agents as tools: a call runs the agent as a child workflow of this run (its ID
 * `<this run's ID>/<agent>-<call ID>`, shown under this run in the Temporal UI), without this
 * run's conversation, and its final answer is the call's result. Cancelling this run cancels it.
 * Its pending approvals are listed on this run and can be decided here.
 */
import { CancellationScope, ParentClosePolicy, executeChild, getExternalWorkflowHandle, workflowInfo } from '@temporalio/workflow';
import { innermostError } from '../core/errors.js';
import type { AgentRunInput, AgentRunResult, ParentRun } from '../core/run.js';
import { argumentsObject, errorResult, type ToolStage } from '../core/tool-pipeline.js';
import { AGENT_RUN_WORKFLOW, agentSearchAttribute, approveSignal, statusSearchAttribute, subAgentClientCallsSignal, subAgentEventsSignal, subAgentPendingSignal } from './api.js';
import { ClientTools } from './client-tools.js';
import type { ApprovalDecision } from '../core/approval.js';
import { changesBetween } from '../core/state.js';
import type { RunFeature } from './feature.js';
import { LiveStream } from './live-stream.js';
import { hooks } from './run-checks.js';
import type { Run } from './run-state.js';

export const DEFAULT_MAX_DEPTH = 5;

/**
 * Sub-agents, as a feature of a run: the stage that runs a sub-agent call as a child workflow
 * and, for a run that is itself a sub-agent's, its link to its parent (pending calls listed
 * there, events forwarded there).
 */
export class SubAgents implements RunFeature {
  readonly name = 'subagent';
  private run!: Run;
  /** The events sent to the parent so far. */
  private readonly forwarded = { seq: 0 };
  readonly stage: ToolStage;

  constructor(
    /** The run this one answers to, when it is a sub-agent's run. */
    readonly parent: ParentRun | undefined,
    /** This execution continues an earlier one, which forwarded the events it logged. */
    private readonly continued: boolean,
  ) {
    this.stage = subAgentStage(() => this.run, parent);
  }

  attach(run: Run): void {
    this.run = run;
    if (this.continued) this.forwarded.seq = run.log.lastSeq;
    if (this.parent) reportPendingToParent(run, this.parent);
    if (this.parent) reportClientCallsToParent(run, this.parent);
  }

  afterTurn(): Promise<void> {
    return forwardEvents(this.run, this.parent, this.forwarded);
  }
}

function subAgentStage(current: () => Run, parent: ParentRun | undefined): ToolStage {
  return {
    name: 'subagent',
    async run(request, next) {
      const run = current();
      const { agent, call, tool, turn } = request;
      if (!tool?.subAgent) return next(request);
      const depth = (parent?.depth ?? 0) + 1;
      const maxDepth = Math.min(parent?.maxDepth ?? Infinity, agent.maxDepth ?? DEFAULT_MAX_DEPTH);
      if (depth > maxDepth) {
        return { result: errorResult(call, `Error: ${tool.subAgent} cannot run: sub-agents may nest ${maxDepth} deep here, and this would be ${depth}. Do the task yourself.`), stage: 'subagent' };
      }
      const args = (argumentsObject(call.arguments) ?? {}) as { input?: unknown };
      const workflowId = `${workflowInfo().workflowId}/${tool.subAgent}-${call.id}`;
      // Claude Code's SubagentStart hooks: their context goes with the task.
      const started = await hooks(run, 'SubagentStart', { agent_id: workflowId, agent_type: tool.subAgent }, tool.subAgent);
      const task = String(args.input ?? '');
      // The sub-agent starts with the run's state and remembered approvals; what it changes comes back.
      const given = run.state.values;
      const remembered = run.approvals.remembered;
      const streaming = run.feature(LiveStream);
      const input: AgentRunInput = {
        agent: tool.subAgent,
        input: started?.additionalContext ? `${task}\n\n${started.additionalContext}` : task,
        ...(run.context !== undefined && { context: run.context }),
        ...(run.state.used && { state: given }),
        // A streaming run's sub-agents stream too: a client follows them by their workflow IDs.
        ...(streaming && { options: { stream: streaming.options } }),
        parent: {
          workflowId: workflowInfo().workflowId,
          callId: call.id,
          depth,
          maxDepth,
          ...(agent.forwardSubAgentEvents && { forwardEvents: true }),
          ...(remembered.length > 0 && { remembered: [...remembered] }),
        },
      };
      run.emit({ type: 'subagent.started', turn, callId: call.id, agent: tool.subAgent, workflowId });
      run.emit({ type: 'tool.started', turn, callId: call.id, tool: call.name });
      let content: string;
      let isError = false;
      let status: string;
      try {
        const result = await executeChild<(input: AgentRunInput) => Promise<AgentRunResult>>(AGENT_RUN_WORKFLOW, {
          workflowId,
          args: [input],
          parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
          typedSearchAttributes: [
            { key: agentSearchAttribute, value: tool.subAgent },
            { key: statusSearchAttribute, value: 'running' },
          ],
          staticSummary: `sub-agent ${tool.subAgent} for call ${call.id}`,
        });
        status = result.status;
        if (result.state) run.changeState(changesBetween(given, result.state), { turn, callId: call.id, tool: call.name });
        for (const rule of result.rememberedRules ?? []) run.approvals.remember(rule);
        if (result.status === 'blocked') {
          isError = true;
          content = `Error: ${tool.subAgent} was blocked by guardrail "${result.blocked?.guardrail}": ${result.blocked?.reason}`;
        } else {
          content = typeof result.output === 'string' ? result.output : JSON.stringify(result.output);
        }
      } catch (err) {
        // This run was cancelled: so was the child; the turn ends.
        if (CancellationScope.current().consideredCancelled) throw err;
        status = 'failed';
        isError = true;
        content = `Error: ${tool.subAgent} failed: ${innermostError(err).message}`;
      } finally {
        run.approvals.setChild(workflowId, []);
        run.feature(ClientTools)?.setChild(workflowId, []);
      }
      run.emit({ type: 'subagent.finished', turn, callId: call.id, agent: tool.subAgent, workflowId, status });
      // SubagentStop hooks: the sub-agent has ended; a block's reason goes with its result to the model.
      const stopped = await hooks(run, 'SubagentStop', { agent_id: workflowId, agent_type: tool.subAgent, stop_hook_active: false }, tool.subAgent);
      if ((stopped?.decision === 'block' || stopped?.decision === 'deny') && stopped.reason) content += `\n\n[SubagentStop hook] ${stopped.reason}`;
      return { result: { role: 'tool', toolCallId: call.id, toolName: call.name, content, ...(isError && { isError }) }, stage: 'subagent' };
    },
  };
}

/** A sub-agent's run tells its parent, whenever they change, which calls wait in it (and below it). */
function reportPendingToParent(run: Run, parent: ParentRun): void {
  run.approvals.onChange = () => {
    const pending = run.approvals.list();
    getExternalWorkflowHandle(parent.workflowId)
      .signal(subAgentPendingSignal, { workflowId: workflowInfo().workflowId, pending })
      // The parent may have ended (and cancelled this run): nothing to tell.
      .catch(() => undefined);
  };
}

/**
 * A sub-agent's run tells its parent, whenever they change, which client tools' calls wait in it
 * (and below it): the client attached to the root run sees them there and answers each in the
 * run it waits in.
 */
function reportClientCallsToParent(run: Run, parent: ParentRun): void {
  const clientTools = run.feature(ClientTools);
  if (!clientTools) return;
  clientTools.onChange = () => {
    getExternalWorkflowHandle(parent.workflowId)
      .signal(subAgentClientCallsSignal, { workflowId: workflowInfo().workflowId, calls: clientTools.list() })
      .catch(() => undefined);
  };
}

/** A decision for a sub-agent's call goes down to the run that holds it. */
export async function forwardDecision(child: string, decision: ApprovalDecision): Promise<void> {
  await getExternalWorkflowHandle(child).signal(approveSignal, decision);
}

/** A sub-agent's run sends the events it logged since the last time to its parent (with forwardEvents). */
async function forwardEvents(run: Run, parent: ParentRun | undefined, sent: { seq: number }): Promise<void> {
  if (!parent?.forwardEvents) return;
  const events = run.log.after(sent.seq);
  if (events.length === 0) return;
  sent.seq = events.at(-1)!.seq;
  await CancellationScope.nonCancellable(() =>
    getExternalWorkflowHandle(parent.workflowId)
      .signal(subAgentEventsSignal, { workflowId: workflowInfo().workflowId, callId: parent.callId, depth: parent.depth, events })
      .catch(() => undefined),
  );
}
