/**
 * A session: a conversation of many messages with agents, each message one run of the agent in
 * charge, in one `agentSession` workflow (src/workflows/agent-session.ts). The types any client
 * sees and the pure decisions (checkpoints kept, the model's view) live here.
 */
import type { PendingApproval } from './approval.js';
import type { JsonValue } from './json.js';
import type { ContinuedState, HandoffView } from './run.js';
import type { StreamSetting } from './stream.js';
import type { Usage } from './usage.js';

/** Checkpoints a session keeps: the most recent ones. */
export const MAX_CHECKPOINTS = 100;
/** A checkpoint keeps this much of its message in workflow state; a longer one is read back from the conversation. */
export const CHECKPOINT_MESSAGE_CHARS = 4_000;
/** The model's view of a session, by default (tokens, at about 4 characters each). */
export const DEFAULT_SESSION_CONTEXT_TOKENS = 50_000;
/**
 * Temporal accepts 2,000 Updates per execution: a session continues as new once it has accepted
 * this many, leaving room for those in flight (at most 10) and for a margin.
 */
export const SESSION_UPDATES_PER_EXECUTION = 1_800;

/** Where a session came from, as Claude Code's SessionStart hook names it. */
export type SessionStartSource = 'startup' | 'resume' | 'clear' | 'fork';
/** Why a session ended, as Claude Code's SessionEnd hook names it. */
export type SessionEndReason = 'clear' | 'logout' | 'prompt_input_exit' | 'other';

/** Input of the `agentSession` workflow. Plain JSON: any Temporal client can start a session. */
export interface SessionInput {
  /** Name of a registered agent: the one that answers the first message. */
  agent: string;
  /** The session's state: a JSON key-value map, handed to each run and carried through fork, clear and continue-as-new. */
  state?: Record<string, JsonValue>;
  options?: SessionOptions;
  /** Set by keel for a session made by `fork` or `clear` of another. */
  origin?: SessionOrigin;
  /** Set by the workflow itself when it continues as new; rejected from any other caller. */
  continued?: SessionCarried;
}

export interface SessionOptions {
  /** The model sees at most about this many tokens of the conversation (the first message, then the latest runs that fit); default 50,000. */
  contextTokens?: number;
  /** Continue as new once the history has this many events (default 10,000). */
  continueAsNewAfterEvents?: number;
  /** ... or once this execution has accepted this many Updates (default and most: 1,800; Temporal accepts 2,000). */
  continueAsNewAfterUpdates?: number;
  /** Live streaming of every run of the session (see `StreamSetting`): one stream for the whole session, across its messages. */
  stream?: StreamSetting;
}

/** The session this one was made from. */
export interface SessionOrigin {
  kind: 'fork' | 'clear';
  workflowId: string;
  /** fork: the execution whose conversation is copied, and how many of its messages. */
  runId?: string;
  messages?: number;
  /** fork: the source's checkpoints, which stay valid in the copy, and its count of runs (the copy's are numbered on). */
  checkpoints?: SessionCheckpoint[];
  runs?: number;
}

/** One message of the session as a point to rewind to. */
export interface Checkpoint {
  id: string;
  /** The message the user sent (the first 500 characters in the status query). */
  message: string;
  /** When it was sent (ISO). */
  at: string;
  /** The agent that answered it: rewinding to it makes this agent the one in charge again. */
  agent: string;
}

/** A checkpoint as the session keeps it. */
export interface SessionCheckpoint extends Checkpoint {
  /** The index of its user message in the conversation: a rewind keeps the messages before it. */
  index: number;
  /** The recorded spec of its agent (fingerprint). */
  spec: string;
  /** The message was longer than CHECKPOINT_MESSAGE_CHARS: `message` is its start, and this its length. */
  cut?: number;
  /** What the agent saw of the conversation before its last handoff, then. */
  handoffView?: HandoffView;
  /** Characters of JSON of the run's messages, for the model's view. */
  chars: number;
}

export type SessionRunStatus = 'running' | 'awaiting_approval' | 'completed' | 'max_turns' | 'blocked' | 'failed' | 'discarded';

/**
 * A run of the session (one message). The answer's text is not repeated here (it is stored in
 * history once, with the model turn): it is message `answer` of the transcript; `output` is set
 * for a structured output.
 */
export interface SessionRunResult {
  run: string;
  status: SessionRunStatus;
  /** The checkpoint of its message, once the message is in the conversation. */
  checkpoint?: string;
  /** The agent in charge at its end. */
  agent: string;
  turns: number;
  usage: Usage;
  /** The transcript index of the message holding the final answer. */
  answer?: number;
  /** The structured output (an agent with an output schema, or a stop tool's result). */
  output?: JsonValue;
  /** Why it failed (resume or discard it; the next message gives it up), or what blocked it. */
  error?: string;
}

/** Answer of the session's `status` query. */
export interface SessionState {
  kind: 'session';
  /** The agent that answers the next message. */
  agent: string;
  /** A run is in progress (or waits for approval): new messages, rewind, fork and clear are refused. */
  busy: boolean;
  status: 'idle' | 'running' | 'awaiting_approval' | 'failed' | 'ended';
  /** Messages in the conversation. */
  messages: number;
  checkpoints: Checkpoint[];
  /** Calls waiting for a decision. */
  pending: PendingApproval[];
  /** The current run, or the last one. */
  run?: SessionRunResult;
  /** How the session ended (clear keeps it open: a new message resumes it). */
  ended?: SessionEndReason;
  runs: number;
  turns: number;
  usage: Usage;
  lastSeq: number;
  state: Record<string, JsonValue>;
}

/** Result of the `agentSession` workflow, once it ends. */
export interface SessionResult {
  kind: 'session';
  status: 'completed';
  reason: SessionEndReason;
  output: null;
  agent: string;
  runs: number;
  messages: number;
  turns: number;
  usage: Usage;
}

/** `send`: a message for the agent in charge. `wait` (default true): answer with the run's result, else with its ID at once. */
export interface SendInput {
  message: string;
  wait?: boolean;
}

export interface RewindInput {
  checkpoint: string;
}

/** What `rewind` answers: the message removed, to edit and send again. */
export interface RewindResult {
  checkpoint: string;
  message: string;
  /** Messages left in the conversation. */
  messages: number;
  agent: string;
}

/** `fork` and `clear`: the new session (default ID: derived from this one's). */
export interface NewSessionInput {
  workflowId?: string;
}

export interface NewSessionResult {
  workflowId: string;
}

export interface EndInput {
  reason?: Exclude<SessionEndReason, 'clear'>;
}

/** What a session carries into its next execution. */
export interface SessionCarried {
  run: ContinuedState;
  checkpoints: SessionCheckpoint[];
  runs: number;
  last: SessionRunResult | null;
  /** A failed run, to resume or discard. */
  failed: boolean;
  ended?: SessionEndReason;
  state: Record<string, JsonValue>;
  /** Updates accepted by all executions so far. */
  updates: number;
  /** The results of the recent runs (the last 100), for the result Update. */
  results?: SessionRunResult[];
  /** A message sent while the execution continued as new: its run is the next execution's first work. */
  queued?: { run: string; message: string };
  /** A resume asked for while the execution continued as new. */
  resume?: true;
}

/** The checkpoints to keep once `added` joins them. */
export function keepCheckpoints(checkpoints: SessionCheckpoint[], added: SessionCheckpoint): SessionCheckpoint[] {
  const all = [...checkpoints, added];
  return all.length > MAX_CHECKPOINTS ? all.slice(all.length - MAX_CHECKPOINTS) : all;
}

/**
 * Where the model's view starts: the latest runs whose messages fit the budget (the latest one
 * always), from the user message of the oldest of them; 0 when the whole conversation fits.
 * Runs older than the kept checkpoints are outside any view a budget allows.
 */
export function sessionViewStart(checkpoints: SessionCheckpoint[], budgetChars: number): number {
  let total = 0;
  let from = 0;
  for (let i = checkpoints.length - 1; i >= 0; i--) {
    total += checkpoints[i]!.chars;
    if (total > budgetChars && i < checkpoints.length - 1) return from;
    from = checkpoints[i]!.index;
  }
  // Every kept checkpoint fits; what is older than the oldest kept one (its checkpoint dropped) is left out.
  return from;
}
