/**
 * Answers cut off at the output token limit (`finish_reason: length`, `stop_reason: max_tokens`).
 * Their last tool call's arguments are likely incomplete, so none of their tool calls runs: the
 * model gets an error result for each, saying why, and calls again. A cut-off text answer is
 * continued: the model is asked to go on where it stopped, and the pieces make the answer (each
 * cut turn is marked `truncated` on its `turn.finished` event). A cut-off structured answer goes
 * back to the model as invalid output.
 */

/** What the model reads after a text answer cut off at the token limit. */
export const CONTINUE_CUT_OFF_ANSWER =
  'Your answer was cut off at the output token limit. Continue exactly where it stopped, without repeating anything.';
import type { ToolCall, ToolResultMessage } from './messages.js';

/** Why a cut-off final answer cannot be the structured output, for the model to read. */
export function cutOffOutputError(maxTokens: number | undefined): string {
  const limit = maxTokens !== undefined ? ` (maxTokens ${maxTokens})` : '';
  return `your answer was cut off at the output token limit${limit} before it was complete; give a shorter answer`;
}

/** What the model reads for each tool call of a cut-off answer. */
export function cutOffToolResult(call: ToolCall, maxTokens: number | undefined): ToolResultMessage {
  const limit = maxTokens !== undefined ? ` (maxTokens ${maxTokens})` : '';
  return {
    role: 'tool',
    toolCallId: call.id,
    toolName: call.name,
    content:
      `Error: your answer was cut off at the output token limit${limit} before it was complete, so this call of ` +
      `${call.name} was not run: its arguments may be incomplete. Call again with shorter arguments, or fewer calls at once.`,
    isError: true,
  };
}
