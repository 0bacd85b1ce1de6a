/**
 * The decisions before a tool call runs, tallied the same way in the workflow (when every stage
 * is pure) and in the activity that runs the worker-side stages (hooks, middleware, guardrails):
 * each stage sees the arguments as earlier ones rewrote them; the most restrictive answer wins
 * whatever the order (deny > ask > allow); the first deny ends the tally.
 */
import type { AgentSpec, ToolSpec } from './agent-spec.js';
import { hooksFor } from './hooks.js';
import { checkPermission, mostRestrictive, type PermissionDecision, type PermissionMode, type PermissionRequest, type PermissionVerdict } from './permissions/index.js';

/** What one stage said about a call. */
export interface StageVerdict {
  decision?: PermissionDecision;
  reason?: string;
  /** Rewritten arguments: later stages and the tool see these. */
  arguments?: Record<string, unknown>;
}

/** One stage's answer, as the run's `tool.decided` events show it. */
export interface StageDecision {
  stage: string;
  decision: PermissionDecision | 'rewrite';
  reason: string;
}

/** The decision so far, the stage that gave it, the arguments as rewritten, every stage's answer. */
export interface GateTally {
  decision?: PermissionDecision;
  stage?: string;
  reason?: string;
  arguments: Record<string, unknown>;
  rewritten: boolean;
  steps: StageDecision[];
}

export function startTally(args: Record<string, unknown>): GateTally {
  return { arguments: args, rewritten: false, steps: [] };
}

/** Adds a stage's verdict. Returns false when the call is denied: later stages do not run. */
export function tally(t: GateTally, stage: string, verdict: StageVerdict | undefined): boolean {
  if (!verdict) return true;
  if (verdict.arguments) {
    t.arguments = verdict.arguments;
    t.rewritten = true;
    t.steps.push({ stage, decision: 'rewrite', reason: verdict.reason ?? `${stage} rewrote the arguments` });
  }
  if (verdict.decision) {
    const reason = verdict.reason ?? `${stage} said ${verdict.decision}`;
    t.steps.push({ stage, decision: verdict.decision, reason });
    if (mostRestrictive(t.decision, verdict.decision) !== t.decision) {
      t.decision = verdict.decision;
      t.stage = stage;
      t.reason = reason;
    }
  }
  return t.decision !== 'deny';
}

export interface PolicyOptions {
  mode: PermissionMode;
  remembered: readonly string[];
  /** The tool's `permissionKey(args)`, when it has one. */
  key?: string;
}

/** The permission policy's verdict on a call, given the decision so far (dontAsk turns an ask into a deny). */
export function policyVerdict(spec: AgentSpec, toolName: string, args: Record<string, unknown>, options: PolicyOptions, soFar?: PermissionDecision): StageVerdict {
  const verdict: PermissionVerdict = checkPermission(spec.permissions ?? {}, permissionRequest(spec, toolName, args, options.key), {
    mode: options.mode,
    remembered: options.remembered,
    ...(soFar && { soFar }),
  });
  return verdict.decision ? { decision: verdict.decision, ...(verdict.reason && { reason: verdict.reason }) } : {};
}

export function permissionRequest(spec: AgentSpec, toolName: string, args: Record<string, unknown>, key?: string): PermissionRequest {
  const tool = toolOf(spec, toolName);
  return {
    tool: toolName,
    arguments: args,
    readOnly: tool?.readOnly ?? false,
    ...(tool?.editsFiles && { editsFiles: true }),
    ...(key !== undefined && { key }),
  };
}

export function toolOf(spec: AgentSpec, name: string): ToolSpec | undefined {
  return spec.tools.find((t) => t.name === name);
}

/** Whether the tool's calls may run in parallel with other such calls: `concurrent`, else `readOnly` (recorded specs before `concurrent`). */
export function runsConcurrently(tool: ToolSpec | undefined): boolean {
  return tool ? (tool.concurrent ?? tool.readOnly) : false;
}

/** Tool input guardrails of a call: the agent's, then the tool's own. */
export function toolGuardrails(spec: AgentSpec, toolName: string, kind: 'toolInput' | 'toolOutput'): string[] {
  return [...(spec.guardrails?.[kind] ?? []), ...(toolOf(spec, toolName)?.guardrails?.[kind] ?? [])];
}

/** When a call's worker-side stages run: before it, again after an approval edited its arguments, after it. */
export type WorkerPhase = 'before' | 'recheck' | 'after';

/**
 * The worker-side stages of a call by phase, in the order the activities compose them
 * (`src/activities/call-chain.ts`), each with the test of whether it needs the worker for this
 * tool. The permission policy is pure: it runs on the worker only beside stages that need it.
 */
export const WORKER_STAGES: Record<WorkerPhase, readonly { name: string; needsWorker(spec: AgentSpec, toolName: string): boolean }[]> = {
  before: [
    { name: 'hook', needsWorker: (spec, tool) => hooksFor(spec.hooks, 'PreToolUse', tool).length > 0 },
    { name: 'middleware', needsWorker: (spec) => (spec.middleware ?? []).some((m) => m.beforeCall) },
    { name: 'permissions', needsWorker: (spec, tool) => toolOf(spec, tool)?.permissionKey === true },
    { name: 'requiresApproval', needsWorker: (spec, tool) => toolOf(spec, tool)?.requiresApproval === 'dynamic' },
    { name: 'guardrails', needsWorker: (spec, tool) => toolGuardrails(spec, tool, 'toolInput').length > 0 },
  ],
  // After an approval edited the arguments, the policy and the guardrails look again.
  recheck: [
    { name: 'permissions', needsWorker: (spec, tool) => toolOf(spec, tool)?.permissionKey === true },
    { name: 'guardrails', needsWorker: (spec, tool) => toolGuardrails(spec, tool, 'toolInput').length > 0 },
  ],
  // Outermost first: hooks see the result last, output guardrails first.
  after: [
    { name: 'hook', needsWorker: (spec, tool) => hooksFor(spec.hooks, 'PostToolUse', tool).length > 0 || hooksFor(spec.hooks, 'PostToolUseFailure', tool).length > 0 },
    // Any middleware: `wrapCall` runs around the tool, `afterCall` after it.
    { name: 'middleware', needsWorker: (spec) => (spec.middleware ?? []).length > 0 },
    { name: 'guardrails', needsWorker: (spec, tool) => toolGuardrails(spec, tool, 'toolOutput').length > 0 },
  ],
};

/**
 * The one predicate: whether a call's stages of this phase need the worker (and the recorded
 * spec there). When none does, the workflow decides alone, without an activity.
 */
export function needsWorker(spec: AgentSpec, toolName: string, phase: WorkerPhase): boolean {
  return WORKER_STAGES[phase].some((stage) => stage.needsWorker(spec, toolName));
}

/** `needsWorker(spec, toolName, 'before')`. */
export const needsWorkerBefore = (spec: AgentSpec, toolName: string): boolean => needsWorker(spec, toolName, 'before');
/** `needsWorker(spec, toolName, 'recheck')`. */
export const needsWorkerRecheck = (spec: AgentSpec, toolName: string): boolean => needsWorker(spec, toolName, 'recheck');
/** `needsWorker(spec, toolName, 'after')`. */
export const needsWorkerAfter = (spec: AgentSpec, toolName: string): boolean => needsWorker(spec, toolName, 'after');
