/**
 * The worker-side stages of the tool-call pipeline and of the run: PreToolUse hooks, middleware,
 * the permission policy (pure, from src/core, with the run's recorded rules), tool input
 * guardrails; the run's input and output guardrails and its own hooks; the worker's approver.
 * One activity per call before it runs, so its hooks' side effects happen once per decision
 * and every answer is in history.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { AgentSpec } from '../core/agent-spec.js';
import type { Approver } from '../core/approval.js';
import type { AgentDefinition, ToolDefinition } from '../core/define.js';
import { ErrorTypes } from '../core/errors.js';
import type { GuardrailContext, GuardrailKind, GuardrailSubject, Tripwire } from '../core/guardrails.js';
import { hooksFor, hookInput, type HookEvent } from '../core/hooks.js';
import type { JsonValue } from '../core/json.js';
import type { PermissionMode } from '../core/permissions/index.js';
import { GUARDRAILS_READ_ONLY, StateView, readOnly, writeThrough, type StateAccess } from '../core/state.js';
import { policyVerdict, startTally, tally, toolGuardrails, WORKER_STAGES, type GateTally } from '../core/tool-gate.js';
import { argumentsObject } from '../core/tool-pipeline.js';
import type {
  ApproveCallInput,
  ApproveCallResult,
  CheckGuardrailsInput,
  CheckGuardrailsResult,
  CheckToolCallInput,
  CheckToolCallResult,
  RunHooksInput,
  RunHooksResult,
} from '../workflows/activity-types.js';
import { composeWorkerStages, type WorkerStage } from './call-chain.js';
import { runHooks } from './hooks.js';
import { keepAlive } from './keep-alive.js';
import { execution, recordedSpec, type RecordedSpecDeps } from './recorded-spec.js';
import type { AgentRegistry } from './registry.js';
import { readState, type StateReaderDeps } from './state-reader.js';

export interface CheckDeps extends RecordedSpecDeps {
  registry: AgentRegistry;
  approver?: Approver;
  state: StateReaderDeps;
}

/** A middleware or guardrail that throws: retried a few times, then the run fails with this. */
const CHECK_ERROR = ErrorTypes.Check;

export function createChecks(deps: CheckDeps) {
  return {
    async checkToolCall(input: CheckToolCallInput): Promise<CheckToolCallResult> {
      return withHeartbeats(async (signal) => {
        const { agent, spec } = await resolve(deps, input.agent, input.spec);
        const state = new StateView(await readState(deps.state, input.state));
        const call: BeforeCall = { agent, spec, input, signal, state, workflowId: execution().workflowId, t: startTally(argumentsObject(input.call.arguments) ?? {}), out: { steps: [] } };
        call.out.steps = call.t.steps;
        await composeWorkerStages(beforeStages(agent, spec, input.recheck === true), async () => undefined)(call);
        const { t, out } = call;
        const changes = state.changes();
        return {
          ...out,
          ...(changes && { stateChanges: changes }),
          ...(t.decision && { decision: t.decision, stage: t.stage, reason: t.reason }),
          ...(t.rewritten && { arguments: t.arguments }),
        };
      });
    },

    async checkGuardrails(input: CheckGuardrailsInput): Promise<CheckGuardrailsResult> {
      return withHeartbeats(async (signal) => {
        const { agent, spec } = await resolve(deps, input.agent, input.spec);
        const subject: GuardrailSubject = input.kind === 'input' ? { kind: 'input', text: input.text } : { kind: 'output', text: input.text, output: input.output };
        // The run's input and output guardrails read the state; what they would write is not kept.
        const state = new StateView(await readState(deps.state, input.state), GUARDRAILS_READ_ONLY);
        const tripped = await runGuardrails(agent, spec.guardrails?.[input.kind] ?? [], subject, {
          agent: agent.name,
          workflowId: execution().workflowId,
          context: input.context,
          state,
          signal,
        });
        return tripped ? { tripped } : {};
      });
    },

    async runHooks(input: RunHooksInput): Promise<RunHooksResult> {
      return withHeartbeats(async (signal) => {
        const { spec } = await resolve(deps, input.agent, input.spec);
        const target = hookTarget(input.event, input.fields);
        const state = new StateView(input.state !== undefined ? await readState(deps.state, input.state) : {});
        const result = await runHooks(
          spec.hooks,
          input.event,
          target,
          hookInput(input.event, { ...hookBase(spec, execution().workflowId, input.mode ?? 'default', state), ...input.fields }),
          { cwd: cwdOf(spec), signal, failClosed: spec.hooksFailClosed ?? false },
        );
        const refused = writeThrough(state, result.state);
        const changes = state.changes();
        return {
          ...(changes && { stateChanges: changes }),
          ...(result.decision && { decision: result.decision }),
          ...(result.reason && { reason: result.reason }),
          ...(result.additionalContext && { additionalContext: result.additionalContext }),
          ...(result.stop && { stop: result.stop.reason || `a ${input.event} hook stopped the run` }),
          errors: refused ? [...result.errors, refused] : result.errors,
        };
      });
    },

    async approveCall(input: ApproveCallInput): Promise<ApproveCallResult> {
      if (!deps.approver) return {};
      const answer = await withHeartbeats(async () =>
        deps.approver!({
          agent: input.agent,
          workflowId: execution().workflowId,
          turn: input.turn,
          callId: input.callId,
          tool: input.tool,
          arguments: input.arguments,
          stage: input.stage,
          reason: input.reason,
          context: input.context,
        }),
      );
      if (!answer) return {};
      if (answer.decision !== 'allow' && answer.decision !== 'deny') {
        throw ApplicationFailure.nonRetryable(`The approver answered ${JSON.stringify(answer)}: its decision must be "allow" or "deny", or nothing.`, CHECK_ERROR);
      }
      return {
        decision: answer.decision,
        ...(answer.reason !== undefined && { reason: answer.reason }),
        ...(answer.arguments !== undefined && { arguments: answer.arguments }),
        ...(answer.remember && { remember: true }),
      };
    },
  };
}

/** One call's state through the stages before it: the tally so far and what the workflow is told. */
interface BeforeCall {
  agent: AgentDefinition;
  spec: AgentSpec;
  input: CheckToolCallInput;
  signal: AbortSignal;
  /** The run's state for this call's stages: middleware may write it. */
  state: StateView;
  workflowId: string;
  t: GateTally;
  out: CheckToolCallResult;
}

type BeforeStage = WorkerStage<BeforeCall, void>;

/**
 * The stages before a call, in `WORKER_STAGES.before`'s order (a re-check after an edit:
 * `WORKER_STAGES.recheck`'s): each tallies its verdict and calls `next` unless the call is
 * decided (denied, or a hook stopped the run).
 */
function beforeStages(agent: AgentDefinition, spec: AgentSpec, recheck: boolean): BeforeStage[] {
  // The recorded middleware is looked up only when it runs: a re-check has none.
  const middleware: BeforeStage[] = (recheck ? [] : middlewareOf(agent, spec))
    .filter((m) => m.beforeCall)
    .map((m) => ({
      name: m.name,
      async run(c, next) {
        const { call, turn, context } = c.input;
        const verdict = await guarded(`middleware "${m.name}"`, () =>
          m.beforeCall!({ agent: agent.name, workflowId: c.workflowId, turn, callId: call.id, tool: call.name, arguments: c.t.arguments, context, state: c.state }),
        );
        if (tally(c.t, m.name, verdict ?? undefined)) await next();
      },
    }));
  const byName: Record<string, BeforeStage[]> = {
    hook: [preToolUseHooks],
    middleware,
    permissions: [permissions],
    requiresApproval: [requiresApproval],
    guardrails: [inputGuardrails],
  };
  return WORKER_STAGES[recheck ? 'recheck' : 'before'].flatMap(({ name }) => byName[name] ?? []);
}

const preToolUseHooks: BeforeStage = {
  name: 'hook',
  async run(c, next) {
    const { spec, input: { call, mode } } = c;
    if (hooksFor(spec.hooks, 'PreToolUse', call.name).length === 0) return next();
    const hooks = await runHooks(
      spec.hooks,
      'PreToolUse',
      call.name,
      hookInput('PreToolUse', { ...hookBase(spec, c.workflowId, mode, c.state), tool_name: call.name, tool_input: c.t.arguments, tool_use_id: call.id }),
      { cwd: cwdOf(spec), signal: c.signal, failClosed: spec.hooksFailClosed ?? false },
    );
    const refused = writeThrough(c.state, hooks.state);
    const errors = refused ? [...hooks.errors, refused] : hooks.errors;
    if (errors.length > 0) c.out.hookErrors = errors;
    // `"continue": false` stops the run, whatever the hook decided about the call.
    if (hooks.stop) {
      c.out.tripped = { guardrail: 'PreToolUse hook', kind: 'toolInput', reason: hooks.stop.reason || 'a hook stopped the run', callId: call.id, tool: call.name };
      return;
    }
    const decision = hooks.decision === 'block' ? 'deny' : hooks.decision;
    const going = tally(c.t, 'hook', {
      ...(decision && { decision }),
      ...(hooks.reason && { reason: hooks.reason }),
      ...(hooks.updatedInput && { arguments: hooks.updatedInput }),
    });
    if (going) await next();
  },
};

/** The tool's zod-parsed arguments as the stages so far left them, when they parse. */
function parsedArguments(c: BeforeCall): { tool: ToolDefinition; data: unknown } | undefined {
  const tool = c.agent.tools.get(c.input.call.name);
  const parsed = tool?.input.safeParse(c.t.arguments);
  return tool && parsed?.success ? { tool, data: parsed.data } : undefined;
}

/** The permission policy (pure, from src/core, with the rules the run recorded), with the tool's permission key. */
const permissions: BeforeStage = {
  name: 'permissions',
  async run(c, next) {
    const { call, mode } = c.input;
    const parsed = parsedArguments(c);
    if (parsed?.tool.permissionKey) {
      const { tool, data } = parsed;
      c.out.key = String(await guarded(`permissionKey of ${call.name}`, () => tool.permissionKey!(data as never)));
    }
    const policy = { mode, remembered: c.input.remembered ?? [], ...(c.out.key !== undefined && { key: c.out.key }) };
    if (tally(c.t, 'permissions', policyVerdict(c.spec, call.name, c.t.arguments, policy, c.t.decision))) await next();
  },
};

const requiresApproval: BeforeStage = {
  name: 'requiresApproval',
  async run(c, next) {
    const parsed = parsedArguments(c);
    if (parsed && typeof parsed.tool.requiresApproval === 'function') {
      const fn = parsed.tool.requiresApproval;
      c.out.requiresApproval = Boolean(await guarded(`requiresApproval of ${c.input.call.name}`, () => fn(parsed.data as never, { agent: c.agent.name, context: c.input.context })));
    }
    await next();
  },
};

const inputGuardrails: BeforeStage = {
  name: 'guardrails',
  async run(c, next) {
    const { call } = c.input;
    const subject: GuardrailSubject = { kind: 'toolInput', tool: call.name, callId: call.id, arguments: c.t.arguments };
    const tripped = await runGuardrails(c.agent, toolGuardrails(c.spec, call.name, 'toolInput'), subject, {
      agent: c.agent.name,
      workflowId: c.workflowId,
      context: c.input.context,
      state: readOnly(c.state, GUARDRAILS_READ_ONLY),
      signal: c.signal,
    });
    if (tripped) c.out.tripped = { ...tripped, callId: call.id, tool: call.name };
    else await next();
  },
};

async function resolve(deps: CheckDeps, name: string, hash: string): Promise<{ agent: AgentDefinition; spec: AgentSpec }> {
  const agent = deps.registry.serving(name);
  return { agent, spec: await recordedSpec(deps, agent, hash) };
}

/** The worker's middleware the recorded spec names, in the recorded order. */
export function middlewareOf(agent: AgentDefinition, spec: AgentSpec) {
  return (spec.middleware ?? []).map(({ name }) => {
    const m = agent.middleware.find((x) => x.name === name);
    if (!m) throw missing(`middleware "${name}"`, agent.name);
    return m;
  });
}

/** The guardrails named, one after another: the first that trips decides. */
export async function runGuardrails(
  agent: AgentDefinition,
  names: readonly string[],
  subject: GuardrailSubject,
  ctx: GuardrailContext,
): Promise<Tripwire | undefined> {
  for (const name of names) {
    const g = agent.guardrails.get(name);
    if (!g) throw missing(`guardrail "${name}"`, agent.name);
    const verdict = await guarded(`guardrail "${name}"`, () => g.check(subject, ctx));
    if (verdict?.tripped) return { guardrail: name, kind: subject.kind as GuardrailKind, reason: verdict.reason ?? `guardrail "${name}" tripped` };
  }
  return undefined;
}

/**
 * The fields every hook input has, as Claude Code names them; and keel's own `state`, the run's
 * state, when it has any (Claude Code's hooks ignore fields they do not know).
 */
export function hookBase(spec: AgentSpec, workflowId: string, mode: PermissionMode, state?: StateAccess) {
  const values = state?.all();
  return { sessionId: workflowId, cwd: cwdOf(spec), permissionMode: mode, ...(values && Object.keys(values).length > 0 && { state: values }) };
}

export function cwdOf(spec: AgentSpec): string {
  return spec.cwd ?? spec.permissions?.cwd ?? process.cwd();
}

function hookTarget(event: HookEvent, fields: Record<string, JsonValue>): string | undefined {
  if (event === 'SessionStart') return String(fields.source ?? 'startup');
  if (event === 'SessionEnd') return String(fields.reason ?? 'other');
  if (event === 'SubagentStart' || event === 'SubagentStop') return String(fields.agent_type ?? '');
  return undefined;
}

/** Runs worker code of the user's: a throw is retried as a check error that names it. */
async function guarded<T>(what: string, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw ApplicationFailure.retryable(`${what} failed: ${(err as Error)?.message ?? String(err)}`, CHECK_ERROR);
  }
}

function missing(what: string, agent: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: ErrorTypes.Config,
    message: `This worker's agent "${agent}" has no ${what}, which the run recorded. Deploy a worker whose agent has it, and the run goes on.`,
  });
}


/** Heartbeats while the checks run (hooks may take a minute); the signal aborts on a cancel. */
async function withHeartbeats<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const stop = keepAlive(ctx, () => undefined);
  try {
    return await fn(ctx.cancellationSignal);
  } finally {
    stop();
  }
}
