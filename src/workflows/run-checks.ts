/**
 * The checks of a run as a whole, outside its tool calls: input guardrails and the
 * SessionStart and UserPromptSubmit hooks before the first model call, Stop hooks and output
 * guardrails on the final answer, SessionEnd hooks at the end. Each is an activity, scheduled
 * only when the agent has one: a run without them has no extra event in its history.
 */
import { CancellationScope } from '@temporalio/workflow';
import type { AgentSpec } from '../core/agent-spec.js';
import type { Tripwire } from '../core/guardrails.js';
import { hooksFor, type HookEvent } from '../core/hooks.js';
import type { JsonValue } from '../core/json.js';
import { preview } from '../core/limits.js';
import { userMessage } from '../core/messages.js';
import type { RunStatus } from '../core/run.js';
import type { RunHooksResult } from './activity-types.js';
import type { Run } from './run-state.js';
import { checkActivities } from './scheduling.js';
import { blocked } from './tool-gate.js';

/** Hook sources and reasons as Claude Code names them. */
const END_REASONS: Partial<Record<RunStatus, string>> = { cancelled: 'other', failed: 'other' };

function hasHooks(spec: AgentSpec, event: HookEvent, target?: string): boolean {
  return hooksFor(spec.hooks, event, target).length > 0;
}

/** The hooks of one of the run's own events, when it has any: one activity; their failures are events. */
export async function hooks(run: Run, event: HookEvent, fields: Record<string, JsonValue>, target?: string): Promise<RunHooksResult | undefined> {
  if (!hasHooks(run.agent, event, target)) return undefined;
  const result = await checkActivities(`hooks ${event}`).runHooks({
    agent: run.agent.name,
    spec: run.specHash,
    event,
    fields,
    mode: run.approvals.mode,
    ...run.state.ref(),
  });
  run.changeState(result.stateChanges, { turn: run.turns });
  for (const error of result.errors) run.emit({ type: 'hook.failed', event, error });
  if (result.additionalContext) run.emit({ type: 'hook.context', event, text: preview(result.additionalContext) });
  // `"continue": false` stops the run (SessionEnd's cannot: the run is ending anyway).
  if (result.stop !== undefined && event !== 'SessionEnd') {
    throw blocked(run, { guardrail: `${event} hook`, kind: event === 'Stop' ? 'output' : 'input', reason: result.stop });
  }
  return result;
}

/** The agent's input or output guardrails, when it has any: one activity; the tripwire, if one tripped. */
async function guardrails(run: Run, kind: 'input' | 'output', text: string, output?: unknown): Promise<Tripwire | undefined> {
  const spec = run.agent;
  if (!spec.guardrails?.[kind]?.length) return undefined;
  const { tripped } = await checkActivities(`guardrails ${kind}`).checkGuardrails({
    agent: spec.name,
    spec: run.specHash,
    kind,
    text,
    ...(kind === 'output' && { output: output as JsonValue }),
    ...(run.context !== undefined && { context: run.context }),
    ...run.state.ref(),
  });
  return tripped;
}

/**
 * Before the first model call: the input guardrails (a tripped one blocks the run), then the
 * SessionStart and UserPromptSubmit hooks (a block blocks the run; their additional context
 * goes with the prompt). Returns the first user message's text.
 */
export async function checkStart(run: Run, prompt: string): Promise<string> {
  const tripped = await guardrails(run, 'input', prompt);
  if (tripped) throw blocked(run, tripped);
  const context: string[] = [];
  const start = await hooks(run, 'SessionStart', { source: 'startup' }, 'startup');
  if (start?.additionalContext) context.push(start.additionalContext);
  const submit = await hooks(run, 'UserPromptSubmit', { prompt });
  if (submit?.decision === 'block' || submit?.decision === 'deny') {
    throw blocked(run, { guardrail: 'UserPromptSubmit hook', kind: 'input', reason: submit.reason ?? 'a hook blocked the prompt' });
  }
  if (submit?.additionalContext) context.push(submit.additionalContext);
  return context.length ? `${prompt}\n\n${context.join('\n\n')}` : prompt;
}

/** A session's SessionStart hooks, with its source (startup, resume, clear, fork): their context, if any. */
export async function sessionStart(run: Run, source: string): Promise<string | undefined> {
  return (await hooks(run, 'SessionStart', { source }, source))?.additionalContext;
}

/**
 * A session's message, before its run: the input guardrails (a tripped one blocks the run), then
 * the UserPromptSubmit hooks (a block blocks it; their context goes with the message). Returns
 * the user message's text, with `context` (SessionStart's) first when given.
 */
export async function checkMessage(run: Run, message: string, context?: string): Promise<string> {
  const tripped = await guardrails(run, 'input', message);
  if (tripped) throw blocked(run, tripped);
  const added = context ? [context] : [];
  const submit = await hooks(run, 'UserPromptSubmit', { prompt: message });
  if (submit?.decision === 'block' || submit?.decision === 'deny') {
    throw blocked(run, { guardrail: 'UserPromptSubmit hook', kind: 'input', reason: submit.reason ?? 'a hook blocked the prompt' });
  }
  if (submit?.additionalContext) added.push(submit.additionalContext);
  return added.length ? `${message}\n\n${added.join('\n\n')}` : message;
}

/**
 * A final answer: Stop hooks may send the model back to work (their reason becomes the next
 * user message); output guardrails may block the run, and the answer is then withheld.
 * Returns false when the run goes on. `stopCall`: the answer is the result of this stop tool's call.
 */
export async function checkAnswer(run: Run, text: string, output: unknown, stopCall?: string): Promise<boolean> {
  const stop = await hooks(run, 'Stop', { stop_hook_active: run.stopHookActive, last_assistant_message: preview(text, 10_000) });
  if (stop?.decision === 'block' || stop?.decision === 'deny') {
    run.stopHookActive = true;
    run.append([userMessage(stop.reason ?? 'A Stop hook asked you to go on.')]);
    return false;
  }
  run.stopHookActive = false;
  const tripped = await guardrails(run, 'output', text, output);
  if (tripped) {
    run.withholdAnswer(`[answer withheld: blocked by guardrail "${tripped.guardrail}"]`, stopCall);
    throw blocked(run, tripped);
  }
  return true;
}

/** SessionEnd hooks, whatever the end: never in the way of the run's own result. */
export async function sessionEnd(run: Run, status: RunStatus, why?: string): Promise<void> {
  const reason = why ?? END_REASONS[status] ?? 'other';
  if (!hasHooks(run.agent, 'SessionEnd', reason)) return;
  try {
    // A cancelled run still tells its hooks it ended.
    await CancellationScope.nonCancellable(() => hooks(run, 'SessionEnd', { reason, status }, reason));
  } catch (err) {
    run.emit({ type: 'hook.failed', event: 'SessionEnd', error: (err as Error).message });
  }
}
