import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { ToolDefinition } from '../core/define.js';
import { boundText, DEFAULT_TOOL_RESULT_BYTES } from '../core/limits.js';
import type { ToolResultMessage } from '../core/messages.js';
import { callProblem } from '../core/tool-pipeline.js';
import type { ToolCallInput } from '../workflows/activity-types.js';
import { keepAlive } from './keep-alive.js';
import type { AgentRegistry } from './registry.js';

/** After a cancel, how long a tool may take to stop before the call is reported cancelled anyway. */
export const CANCEL_GRACE_MS = 5_000;

/**
 * Runs one tool call: checks the arguments against the tool's zod schema, runs the tool while
 * heartbeating for it, bounds its result. Whatever goes wrong that the model can fix (bad
 * arguments, a throwing tool) becomes an error result the model sees; only a tool with a retry
 * setting has its failures retried by Temporal, until its last attempt.
 */
export function createToolCall(registry: AgentRegistry) {
  return async function toolCall({ agent: agentName, turn, call, context }: ToolCallInput): Promise<ToolResultMessage> {
    const agent = registry.serving(agentName);
    const result = (content: string, isError = false): ToolResultMessage => ({
      role: 'tool',
      toolCallId: call.id,
      toolName: call.name,
      content,
      ...(isError && { isError }),
    });

    // The workflow checks these first; runs recorded before it did still send them here.
    const problem = callProblem(agent.spec, call);
    if (problem) return result(problem, true);
    const tool = agent.tools.get(call.name)!;
    const args: unknown = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    const parsed = tool.input.safeParse(args);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i: { path: PropertyKey[]; message: string }) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`);
      return result(`Error: invalid arguments for ${call.name}: ${issues.join('; ')}.`, true);
    }

    const ctx = Context.current();
    const execution = ctx.info.workflowExecution;
    let value: unknown;
    try {
      value = await runWithHeartbeats(ctx, (heartbeat) =>
        tool.execute(parsed.data, {
          agent: agent.name,
          workflowId: execution?.workflowId ?? '',
          runId: execution?.runId ?? '',
          turn,
          callId: call.id,
          context,
          signal: ctx.cancellationSignal,
          heartbeat,
        }),
      );
    } catch (err) {
      if (err instanceof CancelledFailure) throw err;
      // The tool stopped on the abort signal: the call was cancelled, not failed.
      if (ctx.cancellationSignal.aborted) throw new CancelledFailure(`${call.name} stopped when the call was cancelled`);
      if (willRetry(tool, ctx.info.attempt)) {
        throw ApplicationFailure.retryable(`Tool ${call.name} failed: ${(err as Error)?.message ?? String(err)}`, 'KeelToolError');
      }
      return result(`Error: ${call.name} failed: ${(err as Error)?.message ?? String(err)}`, true);
    }
    const text = typeof value === 'string' ? value : (JSON.stringify(value ?? null) ?? 'null');
    const bounded = boundText(text, tool.spec.maxResultBytes ?? DEFAULT_TOOL_RESULT_BYTES, `${call.name} result`);
    return { ...result(bounded.text), ...(bounded.truncatedFrom !== undefined && { truncatedFrom: bounded.truncatedFrom }) };
  };
}

/**
 * Runs the tool, heartbeating for it while its promise is pending, so a lost worker is noticed
 * within the heartbeat timeout and a cancel reaches the tool (Temporal delivers cancels on
 * heartbeats). On a cancel the tool gets CANCEL_GRACE_MS to stop; then the call is cancelled.
 */
async function runWithHeartbeats<T>(ctx: Context, fn: (heartbeat: (details?: unknown) => void) => T | Promise<T>): Promise<T> {
  // keel's beats repeat the details the tool last gave, so they never erase its progress.
  let details: unknown;
  const heartbeat = (given?: unknown) => {
    details = given;
    ctx.heartbeat(given);
  };
  // The first beat comes after a second: a quick tool costs no heartbeat at all.
  const stop = keepAlive(ctx, () => details);
  try {
    const work = Promise.resolve().then(() => fn(heartbeat));
    const cancelled = ctx.cancelled.catch(async (reason: unknown) => {
      // Give the tool its grace period to notice the abort signal and stop.
      await Promise.race([work.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, CANCEL_GRACE_MS))]);
      throw reason instanceof CancelledFailure ? reason : new CancelledFailure('the tool call was cancelled');
    });
    return await Promise.race([work, cancelled]);
  } finally {
    stop();
  }
}

function willRetry(tool: ToolDefinition, attempt: number): boolean {
  if (!tool.retry) return false;
  const max = tool.retry.maximumAttempts ?? 0;
  return max === 0 || attempt < max;
}
