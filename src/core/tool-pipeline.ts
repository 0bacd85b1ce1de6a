/**
 * The tool-call pipeline's vocabulary and its pure stages. Every tool call the model asks for
 * passes a chain of stages, composed once from the agent's configuration: each stage gets the
 * request and `next` (the rest of the chain), as Temporal's interceptors do. Code before
 * `next` runs before the call, code after it runs after; a stage that decides the call
 * (a validation error, later a denial) returns a result without calling `next`.
 */
import type { AgentSpec, ToolSpec } from './agent-spec.js';
import type { ClientToolAnswerer } from './client-tools.js';
import type { ToolCall, ToolResultMessage } from './messages.js';

export interface ToolCallRequest {
  /** The agent in charge when the model asked for the call. */
  agent: AgentSpec;
  turn: number;
  call: ToolCall;
  /** The tool as the run's spec recorded it; undefined for a tool the agent does not have. */
  tool: ToolSpec | undefined;
}

export interface ToolCallOutcome {
  result: ToolResultMessage;
  /** The stage that produced the result: `execute` when the tool ran. */
  stage: string;
  /** Who answered a client tool's call: the client, or its timeout. */
  by?: ClientToolAnswerer;
}

export type ToolCallNext = (request: ToolCallRequest) => Promise<ToolCallOutcome>;

export interface ToolStage {
  /** Names the stage in events and errors. */
  name: string;
  run(request: ToolCallRequest, next: ToolCallNext): Promise<ToolCallOutcome>;
}

/** The stages in order around `terminal` (the first stage is outermost): one function, composed once. */
export function composeStages(stages: readonly ToolStage[], terminal: ToolCallNext): ToolCallNext {
  return stages.reduceRight<ToolCallNext>((next, stage) => (request) => stage.run(request, next), terminal);
}

export function errorResult(call: ToolCall, content: string): ToolResultMessage {
  return { role: 'tool', toolCallId: call.id, toolName: call.name, content, isError: true };
}

/**
 * A call's arguments as an object: empty text is no arguments; undefined when they are not a
 * JSON object (the validate stage answers such calls, so later stages may count on an object).
 */
export function argumentsObject(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * What is wrong with a call before any worker sees it, from the recorded spec alone: a tool the
 * agent does not have, or arguments that are not a JSON object. Undefined when nothing is.
 * The arguments' schema is checked by the tool activity, where the zod schema lives.
 */
export function callProblem(agent: AgentSpec, call: ToolCall): string | undefined {
  const tool = agent.tools.find((t) => t.name === call.name);
  if (!tool) {
    const known = agent.tools.map((t) => t.name);
    return `Error: there is no tool named "${call.name}". Available tools: ${known.length ? known.join(', ') : 'none'}.`;
  }
  const text = call.arguments.trim();
  if (text === '') return undefined;
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch (err) {
    return `Error: the arguments for ${call.name} are not valid JSON (${(err as Error).message}). Send a JSON object that matches the tool's schema.`;
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return `Error: the arguments for ${call.name} must be a JSON object, got ${Array.isArray(args) ? 'an array' : typeof args === 'object' ? 'null' : `a ${typeof args}`}.`;
  }
  return undefined;
}
