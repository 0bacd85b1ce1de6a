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

/** Checks the shape of a decision from outside (boundary.ts; the schema is in schemas.ts). */
export { APPROVAL_DECISION_EXAMPLE, parseApprovalDecision } from './boundary.js';

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
