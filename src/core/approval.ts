/**
 * Human approval of tool calls: the decision a person (or an approver function) sends, and
 * the pending calls a waiting run shows. Plain JSON, the same for the `approve` Update and
 * Signal, so any Temporal client can decide a call.
 */

/** A decision on one pending call. */
export interface ApprovalDecision {
  callId: string;
  decision: 'allow' | 'deny';
  /** Why: the model reads the reason of a deny as the call's result. */
  reason?: string;
  /** Edited arguments to run the call with instead; checked again (schema, policy, guardrails). */
  arguments?: Record<string, unknown>;
  /** Allow calls like this one again for the rest of the run without asking (a rule is added). */
  remember?: boolean;
}

/** A call waiting for a decision, as the run's `status` query lists it. */
export interface PendingApproval {
  callId: string;
  tool: string;
  /** The arguments the call would run with (after the stages before approval rewrote them). */
  arguments: Record<string, unknown>;
  /** The stage that asked for approval: `permissions`, `hook`, a middleware's name, or `tool` (the tool requires it). */
  stage: string;
  reason: string;
  /** When the call started waiting (ISO time). */
  since: string;
  /** When an approval timeout gives it its default decision (ISO time). */
  expires?: string;
  turn: number;
  /** The sub-agent's run the call belongs to, when it is not this run's own (decide it here all the same). */
  run?: string;
}

/** How a decision reached the run, for its events. */
export type DecisionSource = 'update' | 'signal' | 'approver' | 'timeout' | 'early';

/** What the `approve` Update answers once the decision is recorded. */
export interface ApprovalReceipt {
  callId: string;
  decision: 'allow' | 'deny';
  /** Calls of the run still waiting for a decision. */
  pending: number;
}

export const APPROVAL_DECISION_EXAMPLE = '{"callId": "<id>", "decision": "allow" | "deny", "reason"?: "...", "arguments"?: {...}, "remember"?: true}';

/**
 * Checks the shape of a decision from outside (any client may send any JSON). Returns the
 * decision, or a message saying what is wrong and what a valid one looks like.
 */
export function parseApprovalDecision(value: unknown): { ok: true; decision: ApprovalDecision } | { ok: false; error: string } {
  const fail = (what: string) => ({ ok: false as const, error: `Invalid approval decision: ${what}. Expected ${APPROVAL_DECISION_EXAMPLE}.` });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('it must be a JSON object');
  const v = value as Record<string, unknown>;
  if (typeof v.callId !== 'string' || v.callId === '') return fail('"callId" must be the ID of a pending call');
  if (v.decision !== 'allow' && v.decision !== 'deny') return fail(`"decision" must be "allow" or "deny", got ${JSON.stringify(v.decision)}`);
  if (v.reason !== undefined && typeof v.reason !== 'string') return fail('"reason" must be a string');
  if (v.remember !== undefined && typeof v.remember !== 'boolean') return fail('"remember" must be true or false');
  if (v.arguments !== undefined) {
    if (typeof v.arguments !== 'object' || v.arguments === null || Array.isArray(v.arguments)) {
      return fail('"arguments" must be a JSON object (the edited arguments of the call)');
    }
    if (v.decision === 'deny') return fail('"arguments" can only be edited when the decision is "allow"');
  }
  if (v.remember && v.decision === 'deny') return fail('"remember" only applies to "allow"');
  const known = new Set(['callId', 'decision', 'reason', 'arguments', 'remember']);
  const unknown = Object.keys(v).filter((k) => !known.has(k));
  if (unknown.length > 0) return fail(`unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}`);
  return {
    ok: true,
    decision: {
      callId: v.callId,
      decision: v.decision,
      ...(typeof v.reason === 'string' && { reason: v.reason }),
      ...(v.arguments !== undefined && { arguments: v.arguments as Record<string, unknown> }),
      ...(v.remember === true && { remember: true }),
    },
  };
}

/** A call put to the worker's approver function. */
export interface ApprovalRequest {
  agent: string;
  workflowId: string;
  turn: number;
  callId: string;
  tool: string;
  arguments: Record<string, unknown>;
  /** The stage that asked, and why. */
  stage: string;
  reason: string;
  context: unknown;
}

/** The approver's answer: a decision, or nothing to leave the call to a person. */
export type ApprovalAnswer = Omit<ApprovalDecision, 'callId'> | undefined | void;

/**
 * Decides calls that need approval on the worker, before any person is asked: for example
 * allow reads of a known host, or ask a chat channel. Returning nothing leaves the call waiting.
 */
export type Approver = (request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>;
