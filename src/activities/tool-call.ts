import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ToolDefinition } from '../core/define.js';
import type { ToolResultMessage } from '../core/messages.js';
import type { ToolCallInput } from '../workflows/activity-types.js';
import type { AgentRegistry } from './registry.js';

/**
 * Runs one tool call. Whatever goes wrong that the model can fix (unknown tool, bad arguments,
 * a throwing tool) becomes an error result the model sees; only a tool with a retry setting
 * has its failures retried by Temporal, until its last attempt.
 */
export function createToolCall(registry: AgentRegistry) {
  return async function toolCall({ agent: agentName, call }: ToolCallInput): Promise<ToolResultMessage> {
    const agent = registry.get(agentName);
    const result = (content: string, isError = false): ToolResultMessage => ({
      role: 'tool',
      toolCallId: call.id,
      toolName: call.name,
      content,
      ...(isError && { isError }),
    });

    const tool = agent.tools.get(call.name);
    if (!tool) {
      const known = [...agent.tools.keys()];
      return result(
        `Error: there is no tool named "${call.name}". Available tools: ${known.length ? known.join(', ') : 'none'}.`,
        true,
      );
    }

    let args: unknown;
    try {
      args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    } catch (err) {
      return result(`Error: the arguments for ${call.name} are not valid JSON (${(err as Error).message}). Send a JSON object that matches the tool's schema.`, true);
    }
    const parsed = tool.input.safeParse(args);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i: { path: PropertyKey[]; message: string }) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`);
      return result(`Error: invalid arguments for ${call.name}: ${issues.join('; ')}.`, true);
    }

    const ctx = Context.current();
    try {
      const value = await tool.execute(parsed.data, {
        agent: agent.name,
        runId: ctx.info.workflowExecution?.workflowId ?? '',
        callId: call.id,
        signal: ctx.cancellationSignal,
        heartbeat: (details) => ctx.heartbeat(details),
      });
      return result(typeof value === 'string' ? value : JSON.stringify(value ?? null));
    } catch (err) {
      if (ctx.cancellationSignal.aborted) throw err;
      if (willRetry(tool, ctx.info.attempt)) {
        throw ApplicationFailure.retryable(`Tool ${call.name} failed: ${(err as Error)?.message ?? String(err)}`, 'KeelToolError');
      }
      return result(`Error: ${call.name} failed: ${(err as Error)?.message ?? String(err)}`, true);
    }
  };
}

function willRetry(tool: ToolDefinition, attempt: number): boolean {
  if (!tool.retry) return false;
  const max = tool.retry.maximumAttempts ?? 0;
  return max === 0 || attempt < max;
}
