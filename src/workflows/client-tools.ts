/**
 * Client tools, as a feature of a run: a call of a tool that runs on the client (`runsOn:
 * 'client'`) is published (a `client_tool.requested` event, and the `clientToolCalls` and
 * `status` queries) and waits, durably, for a client attached to the run to answer it by the
 * `clientToolResult` Update, or for its timeout. It has passed the whole pipeline before (hooks,
 * permissions, approval): only the tool activity is replaced. A run continues as new only between
 * turns, so no call is ever pending across continue-as-new.
 */
import { ApplicationFailure } from '@temporalio/common';
import { condition, setCurrentDetails, workflowInfo } from '@temporalio/workflow';
import type { ToolSpec } from '../core/agent-spec.js';
import { DEFAULT_CLIENT_TOOL_TIMEOUT_MS, parseClientToolResult, type ClientToolResult, type PendingClientCall } from '../core/client-tools.js';
import { ErrorTypes } from '../core/errors.js';
import { boundText, DEFAULT_TOOL_RESULT_BYTES, preview } from '../core/limits.js';
import type { ToolCall, ToolResultMessage } from '../core/messages.js';
import { schemaProblem } from '../core/schema-check.js';
import { argumentsObject, errorResult, type ToolCallOutcome } from '../core/tool-pipeline.js';
import { describeMs } from './approvals.js';
import type { RunFeature } from './feature.js';
import type { Run } from './run-state.js';

/** A refused answer: non-retryable (the same answer is refused again), of one type, so a client can tell it from a failure to reach the run. */
export function clientToolRefusal(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: ErrorTypes.ClientToolResultRejected, message, nonRetryable: true });
}

interface Waiting {
  call: PendingClientCall;
  tool: ToolSpec;
}

export class ClientTools implements RunFeature {
  readonly name = 'client';
  private run: Run | undefined;
  private readonly waiting = new Map<string, Waiting>();
  private readonly answers = new Map<string, ClientToolResult>();
  /** Calls of this execution that were answered or timed out: a later answer is refused, saying so. */
  private readonly closed = new Map<string, 'answered' | 'timed out'>();
  /** Calls waiting in sub-agents' runs (and theirs), by run: listed here, answered there. */
  private readonly children = new Map<string, PendingClientCall[]>();
  /** Told whenever the list of calls changes (a sub-agent's run tells its parent). */
  onChange: () => void = () => undefined;

  attach(run: Run): void {
    this.run = run;
  }

  /** The calls waiting for a client, in the order they were published, then those of sub-agents' runs (each naming its run). */
  list(): PendingClientCall[] {
    return [...this.waiting.values()].map((w) => w.call).concat([...this.children.values()].flat());
  }

  /**
   * A sub-agent's run says which calls wait in it (and below it); an empty list: none. Each new
   * one is an event here too, so a client watching this run sees it.
   */
  setChild(workflowId: string, calls: PendingClientCall[]): void {
    const before = new Set((this.children.get(workflowId) ?? []).map((c) => c.callId));
    if (calls.length === 0 && !this.children.delete(workflowId)) return;
    if (calls.length > 0) this.children.set(workflowId, calls.map((c) => ({ ...c, run: c.run ?? workflowId })));
    for (const c of this.children.get(workflowId) ?? []) {
      if (before.has(c.callId)) continue;
      this.run?.emit({ type: 'client_tool.requested', turn: c.turn, callId: c.callId, tool: c.tool, arguments: preview(JSON.stringify(c.arguments)), expires: c.expires, run: c.run! });
    }
    this.onChange();
  }

  /**
   * Checks a client's answer: its shape, that its call waits for a client, and that its output
   * matches the tool's output schema. Throws a refusal naming what is wrong; the Update's
   * validator calls it, so a refused answer writes nothing to history.
   */
  check(value: unknown): ClientToolResult {
    const parsed = parseClientToolResult(value);
    if (!parsed.ok) throw clientToolRefusal(parsed.error);
    const { result } = parsed;
    const waiting = this.waiting.get(result.callId);
    const child = [...this.children.values()].flat().find((c) => c.callId === result.callId);
    if (!waiting && child) {
      throw clientToolRefusal(`Call "${result.callId}" waits in the sub-agent's run ${child.run}: send its answer to that run (serveClientTools does).`);
    }
    if (!waiting) {
      const closed = this.closed.get(result.callId);
      if (closed) throw clientToolRefusal(`Call "${result.callId}" was already ${closed}: this answer is not used.`);
      const ids = [...this.waiting.keys()];
      throw clientToolRefusal(
        `Call "${result.callId}" is not waiting for a client in this run` +
          (ids.length ? `; waiting: ${ids.join(', ')}.` : '; no call is waiting.') +
          " See the calls waiting with the run's clientToolCalls query.",
      );
    }
    if (this.answers.has(result.callId)) throw clientToolRefusal(`Call "${result.callId}" was already answered: this answer is not used.`);
    const schema = waiting.tool.outputSchema;
    if ('output' in result && schema) {
      const problem = schemaProblem(schema, result.output);
      if (problem) {
        throw clientToolRefusal(
          `The output for ${waiting.tool.name} (call "${result.callId}") does not match its output schema: ${problem}. ` +
            'Nothing was recorded: send an output that matches, or { "callId", "error" } to tell the model the call failed.',
        );
      }
    }
    return result;
  }

  /** Records a checked answer; the waiting call takes it. */
  receive(result: ClientToolResult): void {
    this.answers.set(result.callId, result);
  }

  /**
   * The call, published and answered by a client: its result, or an error result when its
   * arguments do not fit the tool or no client answered in time (`final`: nothing runs after it).
   */
  async answer(turn: number, call: ToolCall, tool: ToolSpec): Promise<{ result: ToolResultMessage } | { final: ToolCallOutcome }> {
    const args = argumentsObject(call.arguments) ?? {};
    // No zod schema is at hand (the tool's code is the client's): its recorded JSON Schema checks the arguments.
    const problem = schemaProblem(tool.parameters, args);
    if (problem) return { final: { result: errorResult(call, `Error: invalid arguments for ${call.name}: ${problem}.`), stage: this.name } };
    const timeoutMs = tool.timeoutMs ?? DEFAULT_CLIENT_TOOL_TIMEOUT_MS;
    const now = Date.now();
    const pending: PendingClientCall = {
      callId: call.id,
      tool: call.name,
      arguments: args,
      turn,
      since: new Date(now).toISOString(),
      expires: new Date(now + timeoutMs).toISOString(),
    };
    this.waiting.set(call.id, { call: pending, tool });
    this.onChange();
    this.run!.emit({ type: 'client_tool.requested', turn, callId: call.id, tool: call.name, arguments: preview(JSON.stringify(args)), expires: pending.expires });
    this.details(turn);
    let answer: ClientToolResult | undefined;
    const run = this.run!;
    try {
      await condition(() => this.answers.has(call.id) || run.approvals.turnInterrupted, timeoutMs);
      answer = this.answers.get(call.id);
      if (!answer && run.approvals.turnInterrupted) throw new Error('Another call of the turn failed; this one no longer waits for a client.');
    } finally {
      this.waiting.delete(call.id);
      this.answers.delete(call.id);
      this.closed.set(call.id, answer ? 'answered' : 'timed out');
      this.onChange();
      this.details(turn);
    }
    if (!answer) {
      const content = `Error: no client answered ${call.name} within ${describeMs(timeoutMs)}, so it did not run. Go on without it, or ask the user to attach a client that serves it.`;
      return { final: { result: errorResult(call, content), stage: this.name, by: 'timeout' } };
    }
    if ('error' in answer) return { result: errorResult(call, `Error: ${call.name} failed on the client: ${answer.error}`) };
    const text = typeof answer.output === 'string' ? answer.output : JSON.stringify(answer.output);
    const bounded = boundText(text, tool.maxResultBytes ?? DEFAULT_TOOL_RESULT_BYTES, `${call.name} result`);
    return {
      result: {
        role: 'tool',
        toolCallId: call.id,
        toolName: call.name,
        content: bounded.text,
        ...(bounded.truncatedFrom !== undefined && { truncatedFrom: bounded.truncatedFrom }),
      },
    };
  }

  /** What the Temporal UI shows while calls wait for a client (a query's answer: no history event). */
  private details(turn: number): void {
    const calls = this.list();
    if (calls.length === 0) return setCurrentDetails(`turn ${turn}: running ${this.run?.agent.name ?? ''}`);
    setCurrentDetails(
      `turn ${turn}: waiting for a client to run ${calls.map((c) => `${c.tool} (${c.callId})`).join(', ')}. ` +
        `Serve it with: keel run --tools <module> (or RunHandle.serveClientTools) on ${workflowInfo().workflowId}`,
    );
  }
}
