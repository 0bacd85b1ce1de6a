import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { AgentSpec } from '../core/agent-spec.js';
import type { AgentDefinition, ToolDefinition } from '../core/define.js';
import { ErrorTypes } from '../core/errors.js';
import { hookInput, hooksFor } from '../core/hooks.js';
import type { MiddlewareCall, MiddlewareDefinition } from '../core/middleware.js';
import type { PermissionMode } from '../core/permissions/index.js';
import { toolGuardrails, WORKER_STAGES } from '../core/tool-gate.js';
import { boundText, DEFAULT_TOOL_RESULT_BYTES } from '../core/limits.js';
import type { ToolResultMessage } from '../core/messages.js';
import { GUARDRAILS_READ_ONLY, StateView, readOnly, writeThrough } from '../core/state.js';
import { callProblem } from '../core/tool-pipeline.js';
import type { ToolCallInput, ToolCallResult } from '../workflows/activity-types.js';
import { composeWorkerStages, type WorkerStage } from './call-chain.js';
import { cwdOf, hookBase, middlewareOf, runGuardrails } from './checks.js';
import { runHooks } from './hooks.js';
import { keepAlive } from './keep-alive.js';
import { recordedSpec, type RecordedSpecDeps } from './recorded-spec.js';
import type { AgentRegistry } from './registry.js';
import { readState, type StateReaderDeps } from './state-reader.js';

/** After a cancel, how long a tool may take to stop before the call is reported cancelled anyway. */
export const CANCEL_GRACE_MS = 5_000;

/**
 * Runs one tool call: checks the arguments against the tool's zod schema, runs the tool while
 * heartbeating for it, bounds its result. Whatever goes wrong that the model can fix (bad
 * arguments, a throwing tool) becomes an error result the model sees; only a tool with a retry
 * setting has its failures retried by Temporal, until its last attempt.
 */
export function createToolCall(deps: RecordedSpecDeps & { registry: AgentRegistry; state: StateReaderDeps }) {
  return async function toolCall(input: ToolCallInput): Promise<ToolCallResult> {
    const { agent: agentName, turn, call, context } = input;
    const agent = deps.registry.serving(agentName);
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
    const ctx = Context.current();
    const execution = ctx.info.workflowExecution;
    const spec = input.spec !== undefined ? await recordedSpec(deps, agent, input.spec) : undefined;
    // One view for the whole call: the tool sees what middleware wrote before it, hooks after it see both.
    const state = new StateView(await readState(deps.state, input.state));
    const view: MiddlewareCall = {
      agent: agent.name,
      workflowId: execution?.workflowId ?? '',
      turn,
      callId: call.id,
      tool: call.name,
      arguments: typeof args === 'object' && args !== null ? (args as Record<string, unknown>) : {},
      context,
      state,
    };
    // The middleware the run recorded (the worker's own code for each), not whatever this worker has today.
    const middleware = spec ? middlewareOf(agent, spec) : [];
    const after = async (r: ToolResultMessage): Promise<ToolCallResult> => {
      const result = await afterCall({ ctx, spec, agent, view, middleware, mode: input.mode ?? 'default' }, r);
      const changes = state.changes();
      return changes ? { ...result, stateChanges: changes } : result;
    };

    // A client tool's call was answered by a client: the stages after the call run on its answer.
    if (input.answered) return after(result(input.answered.content, input.answered.isError ?? false));
    if (!tool.execute) return result(`Error: ${call.name} runs on the client, not on a worker, and no client answered it.`, true);
    const execute = tool.execute;

    const parsed = tool.input.safeParse(args);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i: { path: PropertyKey[]; message: string }) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`);
      return after(result(`Error: invalid arguments for ${call.name}: ${issues.join('; ')}.`, true));
    }

    let value: unknown;
    try {
      value = await runWithHeartbeats(ctx, (heartbeat) =>
        wrapped(middleware, view, () => execute(parsed.data, {
          agent: agent.name,
          workflowId: execution?.workflowId ?? '',
          runId: execution?.runId ?? '',
          turn,
          callId: call.id,
          context,
          state,
          signal: ctx.cancellationSignal,
          heartbeat,
        })),
      );
    } catch (err) {
      if (err instanceof CancelledFailure) throw err;
      // The tool stopped on the abort signal: the call was cancelled, not failed.
      if (ctx.cancellationSignal.aborted) throw new CancelledFailure(`${call.name} stopped when the call was cancelled`);
      if (willRetry(tool, ctx.info.attempt)) {
        throw ApplicationFailure.retryable(`Tool ${call.name} failed: ${(err as Error)?.message ?? String(err)}`, ErrorTypes.Tool);
      }
      return after(result(`Error: ${call.name} failed: ${(err as Error)?.message ?? String(err)}`, true));
    }
    const text = typeof value === 'string' ? value : (JSON.stringify(value ?? null) ?? 'null');
    const bounded = boundText(text, tool.spec.maxResultBytes ?? DEFAULT_TOOL_RESULT_BYTES, `${call.name} result`);
    return after({ ...result(bounded.text), ...(bounded.truncatedFrom !== undefined && { truncatedFrom: bounded.truncatedFrom }) });
  };
}

/** The worker's middleware around the tool, the first outermost. */
function wrapped(middleware: readonly MiddlewareDefinition[], view: MiddlewareCall, run: () => unknown): Promise<unknown> {
  const chain = middleware.filter((m) => m.wrapCall).reduceRight<() => Promise<unknown>>(
    (next, m) => () => m.wrapCall!(view, next),
    async () => run(),
  );
  return chain();
}

interface AfterContext {
  ctx: Context;
  spec: AgentSpec | undefined;
  agent: AgentDefinition;
  view: MiddlewareCall;
  middleware: readonly MiddlewareDefinition[];
  mode: PermissionMode;
}

type AfterStage = WorkerStage<AfterContext, ToolCallResult>;

/**
 * The stages after the call, composed as one chain in `WORKER_STAGES.after`'s order (outermost
 * first), around the call's result: tool output guardrails (a tripped one ends the run and the
 * stages outside it leave the result alone), middleware (last first), then PostToolUse or
 * PostToolUseFailure hooks, whose block reason and additional context the model reads with it.
 */
async function afterCall(context: AfterContext, given: ToolResultMessage): Promise<ToolCallResult> {
  const byName: Record<string, AfterStage> = { hook: postToolUseHooks, middleware: afterMiddleware, guardrails: outputGuardrails };
  const stages = WORKER_STAGES.after.flatMap(({ name }) => byName[name] ?? []);
  const keepAliveStop = keepAlive(context.ctx, () => undefined);
  try {
    return await composeWorkerStages(stages, async () => given)(context);
  } finally {
    keepAliveStop();
  }
}

const outputGuardrails: AfterStage = {
  name: 'guardrails',
  async run({ ctx, spec, agent, view }, next) {
    const result = await next();
    if (!spec) return result;
    const tripped = await runGuardrails(
      agent,
      toolGuardrails(spec, view.tool, 'toolOutput'),
      { kind: 'toolOutput', tool: view.tool, callId: view.callId, arguments: view.arguments, result: result.content, isError: result.isError ?? false },
      { agent: agent.name, workflowId: view.workflowId, context: view.context, state: readOnly(view.state, GUARDRAILS_READ_ONLY), signal: ctx.cancellationSignal },
    );
    return tripped ? { ...result, tripped: { ...tripped, callId: view.callId, tool: view.tool } } : result;
  },
};

const afterMiddleware: AfterStage = {
  name: 'middleware',
  async run({ view, middleware }, next) {
    let result = await next();
    if (result.tripped) return result;
    for (const m of [...middleware].reverse()) {
      if (!m.afterCall) continue;
      const changed = await m.afterCall(view, { content: result.content, isError: result.isError ?? false });
      if (changed?.content !== undefined) result = { ...result, content: String(changed.content) };
      if (changed?.isError !== undefined) result = { ...result, isError: changed.isError };
    }
    if (!result.isError) delete result.isError;
    return result;
  },
};

const postToolUseHooks: AfterStage = {
  name: 'hook',
  async run({ ctx, spec, view, mode }, next) {
    let result = await next();
    if (result.tripped) return result;
    const event = result.isError ? 'PostToolUseFailure' : 'PostToolUse';
    if (!spec || hooksFor(spec.hooks, event, view.tool).length === 0) return result;
    const fields = result.isError ? { error: result.content } : { tool_response: toolResponse(result.content) };
    const hooks = await runHooks(
      spec.hooks,
      event,
      view.tool,
      hookInput(event, { ...hookBase(spec, view.workflowId, mode, view.state), tool_name: view.tool, tool_input: view.arguments, tool_use_id: view.callId, ...fields }),
      { cwd: cwdOf(spec), signal: ctx.cancellationSignal, failClosed: spec.hooksFailClosed ?? false },
    );
    const notes = [
      ...((hooks.decision === 'block' || hooks.decision === 'deny') && hooks.reason ? [`[${event} hook] ${hooks.reason}`] : []),
      ...(hooks.additionalContext ? [hooks.additionalContext] : []),
    ];
    if (notes.length > 0) result = { ...result, content: `${result.content}\n\n${notes.join('\n\n')}` };
    const refused = writeThrough(view.state, hooks.state);
    const errors = refused ? [...hooks.errors, refused] : hooks.errors;
    if (errors.length > 0) result = { ...result, hookErrors: errors };
    // `"continue": false`: the run stops after this call.
    if (hooks.stop) {
      result = { ...result, tripped: { guardrail: `${event} hook`, kind: 'toolOutput', reason: hooks.stop.reason || 'a hook stopped the run', callId: view.callId, tool: view.tool } };
    }
    return result;
  },
};

/** A tool's result as hooks see it: its JSON when it is JSON, else the text. */
function toolResponse(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
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
