/**
 * Client tools: tools that run on the client attached to a run (a file on the user's laptop, a
 * prompt to the user) instead of on a worker. The run publishes a call and waits, durably, for a
 * client to send its result by the `clientToolResult` Update. Plain JSON, so any Temporal client
 * can serve them.
 */
import type { JsonValue } from './json.js';

/** How long a run waits for a client to answer a call, unless the tool says otherwise. */
export const DEFAULT_CLIENT_TOOL_TIMEOUT_MS = 5 * 60_000;

/** A call waiting for a client, as the `clientToolCalls` and `status` queries list it. */
export interface PendingClientCall {
  callId: string;
  tool: string;
  /** The arguments to run the call with (after the stages before it rewrote or an approval edited them). */
  arguments: Record<string, unknown>;
  turn: number;
  /** When the call was published (ISO time). */
  since: string;
  /** When the call times out and the model gets an error result instead (ISO time). */
  expires: string;
  /** The sub-agent's run the call waits in, when it is not this run's own: send its answer there. */
  run?: string;
}

/**
 * A client's answer to a call: its output (checked against the tool's output schema, when it has
 * one), or an error the model reads as the call's result.
 */
export type ClientToolResult = { callId: string; output: JsonValue } | { callId: string; error: string };

/** What the `clientToolResult` Update answers once the result is recorded. */
export interface ClientToolReceipt {
  callId: string;
  /** Calls of the run still waiting for a client. */
  pending: number;
}

/** Who answered a client tool's call, for its `tool.finished` event. */
export type ClientToolAnswerer = 'client' | 'timeout';

/** What a client tool's handler gets besides the arguments. */
export interface ClientToolContext {
  workflowId: string;
  callId: string;
  tool: string;
  turn: number;
  /** Aborted when the client stops serving (the run ended, or the caller's signal aborted). */
  signal: AbortSignal;
}

/** A client tool's code, on the client: its return value (plain JSON) is the call's output; a throw is an error result. */
export type ClientToolHandler = (args: Record<string, unknown>, ctx: ClientToolContext) => unknown;

/** A client's handlers by tool name. */
export type ClientToolHandlers = Record<string, ClientToolHandler>;

export { CLIENT_TOOL_RESULT_EXAMPLE, parseClientToolResult } from './boundary.js';
