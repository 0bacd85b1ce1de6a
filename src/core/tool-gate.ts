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

/**
 * Whether the stages before a call need the worker: a PreToolUse hook that matches, middleware
 * that decides calls, a permission key or an approval rule that is a function, a tool input
 * guardrail. When none does, the workflow decides alone, without an activity.
 */
export function needsWorkerBefore(spec: AgentSpec, toolName: string): boolean {
  const tool = toolOf(spec, toolName);
  return (
    hooksFor(spec.hooks, 'PreToolUse', toolName).length > 0 ||
    (spec.middleware ?? []).some((m) => m.beforeCall) ||
    needsWorkerRecheck(spec, toolName) ||
    tool?.requiresApproval === 'dynamic'
  );
}

/** After an approval edited the arguments, the policy and the guardrails look again: on the worker when the key or a guardrail is there. */
export function needsWorkerRecheck(spec: AgentSpec, toolName: string): boolean {
  return toolOf(spec, toolName)?.permissionKey === true || toolGuardrails(spec, toolName, 'toolInput').length > 0;
}

/** Whether the stages after a call need the recorded spec on the worker: middleware, hooks after the call, tool output guardrails. */
export function needsWorkerAfter(spec: AgentSpec, toolName: string): boolean {
  return (
    (spec.middleware ?? []).length > 0 ||
    hooksFor(spec.hooks, 'PostToolUse', toolName).length > 0 ||
    hooksFor(spec.hooks, 'PostToolUseFailure', toolName).length > 0 ||
    toolGuardrails(spec, toolName, 'toolOutput').length > 0
  );
}
