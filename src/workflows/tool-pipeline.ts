/**
 * The tool-call pipeline, orchestrated: the stages an agent's configuration asks for, composed
 * once around the execution stage (the tool activity): validation, a driver's own tools, the
 * gate (hooks, middleware, permissions, guardrails, approval: `tool-gate.ts`), execution.
 */
import { preview } from '../core/limits.js';
import type { ToolCall, ToolResultMessage } from '../core/messages.js';
import {
  callProblem,
  composeStages,
  errorResult,
  type ToolCallNext,
  type ToolCallOutcome,
  type ToolStage,
} from '../core/tool-pipeline.js';
import type { AgentSpec } from '../core/agent-spec.js';
import { needsWorkerAfter, runsConcurrently, toolOf } from '../core/tool-gate.js';
import { ClientTools } from './client-tools.js';
import { Patches, hasPatch } from './patches.js';
import type { Run } from './run-state.js';
import { toolActivity } from './scheduling.js';
import { blocked } from './tool-gate.js';

/** Calls the recorded spec alone shows to be wrong get an error result, without an activity. */
const validate: ToolStage = {
  name: 'validate',
  async run(request, next) {
    const problem = callProblem(request.agent, request.call);
    // Runs recorded before this stage existed sent such calls to the tool activity.
    if (problem === undefined || !hasPatch(Patches.ValidateInWorkflow)) return next(request);
    return { result: errorResult(request.call, problem), stage: 'validate' };
  },
};

function stagesFor(run: Run): ToolStage[] {
  // The features' stages in their order: a driver's own tools (a monitor's report_done) come
  // before the gate, because keel's own calls need no approval.
  return [validate, ...run.stages()];
}

/**
 * The terminal stage: the tool activity, which checks the arguments' schema and runs the tool
 * (with the stages after the call that need the worker: output guardrails, middleware, hooks).
 * It starts when the calls before it in the model's order have finished (`ready`).
 */
function execute(run: Run, ready: (callId: string) => Promise<void>): ToolCallNext {
  return async ({ agent, turn, call, tool }) => {
    await ready(call.id);
    const after = needsWorkerAfter(agent, call.name);
    // A client tool's call is answered by a client instead of the tool activity.
    let answered: ToolResultMessage | undefined;
    const client = tool?.runsOn === 'client' ? run.feature(ClientTools) : undefined;
    if (client && tool) {
      const answer = await client.answer(turn, call, tool);
      if ('final' in answer) return answer.final;
      if (!after) return { result: answer.result, stage: client.name, by: 'client' };
      answered = answer.result;
    } else {
      run.emit({ type: 'tool.started', turn, callId: call.id, tool: call.name });
    }
    // For a client's answer, the activity runs the stages after the call only, within the tool activity's default timeout.
    const { tripped, hookErrors, stateChanges, ...result } = await toolActivity(answered ? undefined : tool, call).toolCall({
      agent: agent.name,
      turn,
      call,
      ...(run.context !== undefined && { context: run.context }),
      ...(after && { spec: run.specHash, mode: run.approvals.mode }),
      ...(answered && { answered: { content: answered.content, ...(answered.isError && { isError: true }) } }),
      ...run.state.ref(),
    });
    // Applied as the call finishes: in the order history records the calls' completions.
    run.changeState(stateChanges, { turn, callId: call.id, tool: call.name });
    // The activity ran PostToolUseFailure hooks for an error result, PostToolUse hooks for another.
    const hookEvent = result.isError ? 'PostToolUseFailure' : 'PostToolUse';
    for (const error of hookErrors ?? []) run.emit({ type: 'hook.failed', event: hookEvent, error, callId: call.id });
    if (tripped) {
      // The result the guardrail stopped is withheld from the events too.
      finished(run, turn, { result: { ...result, content: `[result withheld: blocked by "${tripped.guardrail}"]` }, stage: 'execute' });
      throw blocked(run, tripped);
    }
    return answered ? { result, stage: 'client', by: 'client' } : { result, stage: 'execute' };
  };
}

/**
 * Runs one turn's tool calls through the pipeline. They run in the model's order: consecutive
 * concurrent calls (read-only ones by default) in parallel, any other call alone; results keep the
 * model's order. When calls may wait for a person, every call is decided at once, so all the
 * calls of a turn that need a decision wait together.
 */
export async function runToolCalls(run: Run, turn: number, calls: ToolCall[]): Promise<ToolResultMessage[]> {
  const agent = run.agent;
  run.approvals.expect(turn, agent, calls);
  const batches = batchesOf(agent, calls);
  if (!mayDecideLater(agent)) return inBatches(run, turn, batches);
  return decidedTogether(run, turn, batches);
}

/**
 * Consecutive concurrent calls (read-only ones, unless a tool says otherwise) form a batch; any
 * other call is a batch of its own. Whether a call changes something is plan mode's question, not this.
 */
function batchesOf(agent: AgentSpec, calls: ToolCall[]): ToolCall[][] {
  const concurrent = (call: ToolCall) => runsConcurrently(toolOf(agent, call.name));
  const batches: ToolCall[][] = [];
  calls.forEach((call, i) => {
    if (i > 0 && concurrent(call) && concurrent(calls[i - 1]!)) batches.at(-1)!.push(call);
    else batches.push([call]);
  });
  return batches;
}

/**
 * Whether a call of this agent can wait (for a person, a hook, a guardrail) before it runs.
 * Only then are a turn's calls decided together; other runs keep the order of commands that
 * runs recorded before approvals existed, which their replays need.
 */
function mayDecideLater(agent: AgentSpec): boolean {
  return Boolean(
    agent.permissions ||
      agent.hooks ||
      agent.middleware?.length ||
      agent.guardrails?.toolInput?.length ||
      agent.guardrails?.toolOutput?.length ||
      agent.tools.some((t) => t.requiresApproval || t.permissionKey || t.guardrails),
  );
}

/** Batch after batch: a batch is waited for whole (a failing call never abandons its siblings). */
async function inBatches(run: Run, turn: number, batches: ToolCall[][]): Promise<ToolResultMessage[]> {
  const pipeline = composeStages(stagesFor(run), execute(run, async () => undefined));
  const results: ToolResultMessage[] = [];
  for (const batch of batches) {
    const settled = await Promise.allSettled(batch.map((call) => one(run, pipeline, turn, call)));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    results.push(...settled.map((s) => (s as PromiseFulfilledResult<ToolCallOutcome>).value.result));
  }
  return results;
}

/**
 * Every call decided at once, each batch run when the batches before it have their outcomes.
 * When a call fails (or a guardrail blocks the run) the calls still waiting for a person stop
 * waiting and those not started never start; the failure is the turn's.
 */
async function decidedTogether(run: Run, turn: number, batches: ToolCall[][]): Promise<ToolResultMessage[]> {
  const outcomes: Promise<ToolCallOutcome>[][] = [];
  const batchOf = new Map<string, number>();
  batches.forEach((batch, i) => batch.forEach((call) => batchOf.set(call.id, i)));
  let failure: { error: unknown } | undefined;
  const ready = async (callId: string) => {
    await Promise.allSettled(outcomes.slice(0, batchOf.get(callId) ?? 0).flat());
    if (failure) throw failure.error;
  };
  const pipeline = composeStages(stagesFor(run), execute(run, ready));
  for (const batch of batches) {
    outcomes.push(
      batch.map((call) => {
        const outcome = one(run, pipeline, turn, call);
        outcome.catch((error: unknown) => {
          if (failure) return;
          failure = { error };
          run.approvals.interrupt();
        });
        return outcome;
      }),
    );
  }
  await Promise.allSettled(outcomes.flat());
  if (failure) throw failure.error;
  return (await Promise.all(outcomes.flat())).map((o) => o.result);
}

async function one(run: Run, pipeline: ToolCallNext, turn: number, call: ToolCall): Promise<ToolCallOutcome> {
  const outcome = await pipeline({ agent: run.agent, turn, call, tool: toolOf(run.agent, call.name) });
  finished(run, turn, outcome);
  return outcome;
}

function finished(run: Run, turn: number, { result, stage, by }: ToolCallOutcome): void {
  run.emit({
    type: 'tool.finished',
    turn,
    callId: result.toolCallId,
    tool: result.toolName,
    result: preview(result.content),
    isError: result.isError ?? false,
    ...(result.truncatedFrom !== undefined && { truncatedFrom: result.truncatedFrom }),
    ...(stage !== 'execute' && { stage }),
    ...(by && { by }),
  });
}
