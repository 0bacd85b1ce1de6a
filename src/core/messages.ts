/**
 * The conversation vocabulary shared by workflows, activities, providers and clients.
 * Everything here is plain JSON so any Temporal client, in any language, can read it.
 */

/** A tool call as the model asked for it. `arguments` is the raw JSON text the model produced. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface UserMessage {
  role: 'user';
  content: string;
}

export interface AssistantMessage {
  role: 'assistant';
  content: string;
  toolCalls?: ToolCall[];
}

export interface ToolResultMessage {
  role: 'tool';
  toolCallId: string;
  toolName: string;
  content: string;
  /** True when the call failed (bad arguments, unknown tool, the tool threw, denied): the model sees an error. */
  isError?: boolean;
  /** The tool's result was longer than its limit and cut (with a marker): its size before, in bytes. */
  truncatedFrom?: number;
}

export type Message = UserMessage | AssistantMessage | ToolResultMessage;

export function userMessage(content: string): UserMessage {
  return { role: 'user', content };
}
