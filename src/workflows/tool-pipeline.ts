/**
 * The tool-call pipeline, orchestrated: the stages an agent's configuration asks for, composed
 * once around the execution stage (the tool activity). Today: validation, then execution.
 * Approval, permissions, hooks and guardrails are stages to add to `stagesFor`, not edits of
 * the loop.
 */
import { preview } from '../core/limits.js';
import type { ToolCall, ToolResultMessage } from '../core/messages.js';
import {
  callProblem,
  composeStages,
  errorResult,
  type ToolCallNext,
  type ToolCallOutcome,
  type ToolCallRequest,
  type ToolStage,
} from '../core/tool-pipeline.js';
import { Patches, hasPatch } from './patches.js';
import type { Run } from './run-state.js';
import { toolActivity } from './scheduling.js';

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
  return [validate, ...run.stages];
}

/** The terminal stage: the tool activity, which checks the arguments' schema and runs the tool. */
function execute(run: Run): ToolCallNext {
  return async ({ agent, turn, call, tool }) => {
    run.emit({ type: 'tool.started', turn, callId: call.id, tool: call.name });
    const result = await toolActivity(tool, call).toolCall({
      agent: agent.name,
      turn,
      call,
      ...(run.context !== undefined && { context: run.context }),
    });
    return { result, stage: 'execute' };
  };
}

/**
 * Runs one turn's tool calls through the pipeline. Consecutive read-only calls run in parallel;
 * a call that may change something runs alone, in the order the model gave. Results keep the
 * model's order. A batch is waited for whole: a failing call never abandons its siblings.
 */
export async function runToolCalls(run: Run, turn: number, calls: ToolCall[]): Promise<ToolResultMessage[]> {
  const agent = run.agent;
  const pipeline = composeStages(stagesFor(run), execute(run));
  const toolOf = (call: ToolCall) => agent.tools.find((t) => t.name === call.name);
  const readOnly = (call: ToolCall) => toolOf(call)?.readOnly ?? false;
  const one = async (call: ToolCall): Promise<ToolResultMessage> => {
    const request: ToolCallRequest = { agent, turn, call, tool: toolOf(call) };
    const outcome: ToolCallOutcome = await pipeline(request);
    finished(run, turn, outcome);
    return outcome.result;
  };

  const results: ToolResultMessage[] = [];
  let i = 0;
  while (i < calls.length) {
    const batch = [calls[i]!];
    if (readOnly(calls[i]!)) {
      while (i + batch.length < calls.length && readOnly(calls[i + batch.length]!)) batch.push(calls[i + batch.length]!);
    }
    i += batch.length;
    const settled = await Promise.allSettled(batch.map(one));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    results.push(...settled.map((s) => (s as PromiseFulfilledResult<ToolResultMessage>).value));
  }
  return results;
}

function finished(run: Run, turn: number, { result, stage }: ToolCallOutcome): void {
  run.emit({
    type: 'tool.finished',
    turn,
    callId: result.toolCallId,
    tool: result.toolName,
    result: preview(result.content),
    isError: result.isError ?? false,
    ...(result.truncatedFrom !== undefined && { truncatedFrom: result.truncatedFrom }),
    ...(stage !== 'execute' && { stage }),
  });
}
