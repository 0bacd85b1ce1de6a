/**
 * One turn of an agent: the model call, then the tool calls it asks for. A plain run calls it
 * in a loop; a monitor or a session can call it the same way.
 */
import { ApplicationFailure, setCurrentDetails } from '@temporalio/workflow';
import { ErrorTypes } from '../core/errors.js';
import { preview } from '../core/limits.js';
import { userMessage, type ToolResultMessage } from '../core/messages.js';
import { CONTINUE_CUT_OFF_ANSWER, cutOffOutputError, cutOffToolResult } from '../core/cut-off.js';
import { addUsage } from '../core/usage.js';
import type { ModelTurnResult } from './activity-types.js';
import type { Run } from './run-state.js';
import { modelActivity } from './scheduling.js';
import { Handoffs } from './handoff.js';
import { LiveStream } from './live-stream.js';
import { checkAnswer } from './run-checks.js';
import { runToolCalls } from './tool-pipeline.js';
import { refreshInstructions } from './state.js';

/** How a turn ended: the run has its final answer, or it goes on with another turn. */
export type TurnOutcome =
  /** `answered`: the model answered without tool calls (else a stop tool ended the run). */
  | { done: true; status: 'completed'; output: unknown; answered: boolean }
  /** `results`: the turn's tool results, when it ran tools. */
  | { done: false; results?: ToolResultMessage[] };

export async function runTurn(run: Run): Promise<TurnOutcome> {
  await refreshInstructions(run);
  const spec = run.agent;
  const turn = ++run.turns;
  run.emit({ type: 'turn.started', turn, agent: spec.name });
  // What the UI shows as the run's current details (served by a query: no history events).
  setCurrentDetails(`turn ${turn} of at most ${spec.maxTurns}: waiting for ${spec.model}`);
  const handoffView = run.feature(Handoffs)?.view;
  const stream = run.feature(LiveStream);
  const result = await modelActivity(spec, turn).modelTurn({
    agent: spec.name,
    turn,
    messageCount: run.messageCount,
    spec: run.specHash,
    ...(run.viewFrom > 0 && { from: run.viewFrom }),
    ...(handoffView && { handoff: handoffView }),
    ...(stream && { stream: stream.options }),
  });
  const truncated = result.truncated ?? result.stopReason === 'max_tokens';
  run.usage = addUsage(run.usage, result.usage);
  run.append([result.message]);
  if (result.message.content) run.lastAnswer = result.message.content;
  const toolCalls = result.message.toolCalls ?? [];
  run.emit({
    type: 'turn.finished',
    turn,
    text: preview(result.message.content),
    toolCalls: toolCalls.map((c) => ({ ...c, arguments: preview(c.arguments) })),
    usage: result.usage,
    ...(truncated && { truncated }),
  });

  if (toolCalls.length === 0) {
    const outcome = finalAnswer(run, turn, result, truncated);
    // A text answer cut off at the token limit and continued is checked whole, all its pieces.
    const text = outcome.done && !spec.outputSchema ? String(outcome.output) : result.message.content;
    if (outcome.done && !(await checkAnswer(run, text, outcome.output))) return { done: false };
    return outcome.done ? { ...outcome, answered: true } : outcome;
  }

  for (const call of toolCalls) {
    run.emit({ type: 'tool.requested', turn, callId: call.id, tool: call.name, arguments: preview(call.arguments) });
  }
  let results: ToolResultMessage[];
  if (truncated) {
    // The last call's arguments may be cut in half: run none of them, and say why.
    results = toolCalls.map((call) => cutOffToolResult(call, spec.modelSettings.maxTokens));
    for (const r of results) {
      run.emit({ type: 'tool.finished', turn, callId: r.toolCallId, tool: r.toolName, result: preview(r.content), isError: true, stage: 'truncated' });
    }
  } else {
    setCurrentDetails(`turn ${turn}: running ${toolCalls.map((c) => c.name).join(', ')}`);
    results = await runToolCalls(run, turn, toolCalls);
  }
  run.append(results);
  for (const f of run.composed) f.afterCalls?.(turn);

  const stop = results.find((r) => !r.isError && spec.stopAtTools.includes(r.toolName));
  if (stop) {
    const output = toolOutput(stop);
    if (!(await checkAnswer(run, stop.content, output, stop.toolCallId))) return { done: false, results };
    return { done: true, status: 'completed', output, answered: false };
  }
  return { done: false, results };
}

/** A turn without tool calls: the final answer, checked against the output schema if any. */
function finalAnswer(run: Run, turn: number, result: ModelTurnResult, truncated: boolean): { done: true; status: 'completed'; output: unknown } | { done: false } {
  const spec = run.agent;
  if (!spec.outputSchema) {
    if (truncated) {
      // Cut off at the token limit: the model continues where it stopped; the pieces make the answer.
      run.partialAnswer += result.message.content;
      run.append([userMessage(CONTINUE_CUT_OFF_ANSWER)]);
      return { done: false };
    }
    const output = run.partialAnswer + result.message.content;
    run.partialAnswer = '';
    return { done: true, status: 'completed', output };
  }
  const check = truncated ? { valid: false as const, error: cutOffOutputError(spec.modelSettings.maxTokens) } : result.output;
  if (check?.valid) return { done: true, status: 'completed', output: check.value };
  const error = check?.error ?? 'the model answered, but the worker did not check the answer';
  run.outputAttempts++;
  run.emit({ type: 'output.invalid', turn, error: preview(error), attempt: run.outputAttempts });
  if (run.outputAttempts > spec.outputRetries) {
    throw ApplicationFailure.create({
      type: ErrorTypes.InvalidOutput,
      nonRetryable: true,
      message:
        `Agent "${spec.name}" gave no valid structured output after ${run.outputAttempts} attempts; ` +
        `last error: ${preview(error, 500)}. Check the agent's instructions and output schema, or raise outputRetries.`,
    });
  }
  run.append([
    userMessage(
      `Your answer does not match the required output schema: ${error}\n` +
        'Answer again with only a JSON value that matches the schema.',
    ),
  ]);
  return { done: false };
}

/** A tool that stops the run gives its result as the output: parsed when it is JSON. */
function toolOutput(result: ToolResultMessage): unknown {
  try {
    return JSON.parse(result.content);
  } catch {
    return result.content;
  }
}
