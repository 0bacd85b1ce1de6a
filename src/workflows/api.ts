/**
 * The run's interface, defined once and shared by the workflow and its clients: workflow type,
 * queries, signals, sinks, search attributes. Only definitions live here, so a client can import it.
 */
import { defineSearchAttributeKey } from '@temporalio/common';
import { defineQuery, defineSignal, type Sinks } from '@temporalio/workflow';
import type { AgentSpec } from '../core/agent-spec.js';
import type { Message } from '../core/messages.js';
import type { EventPage, RunState, TranscriptPage } from '../core/run.js';

/** The workflow type name: `temporal workflow start --type agentRun ...` */
export const AGENT_RUN_WORKFLOW = 'agentRun';
export const DEFAULT_TASK_QUEUE = 'keel';

/** A slice of the transcript, by message index: `from` included, `to` excluded. */
export interface TranscriptRange {
  from?: number;
  to?: number;
}

export const statusQuery = defineQuery<RunState>('status');
/** A bounded page of the messages in the range that this execution holds. */
export const transcriptQuery = defineQuery<TranscriptPage, [TranscriptRange?]>('transcript');
/** A bounded page of the events with `seq` greater than the argument, of those this execution holds. */
export const eventsQuery = defineQuery<EventPage, [number?]>('events');
/** The spec the run recorded with this fingerprint (`specHash`), or null. */
export const specQuery = defineQuery<AgentSpec | null, [string]>('spec');

/** A problem of the worker's own setup that holds the run up (and is retried until it is fixed). */
export interface WorkerProblem {
  /** What is wrong and what to fix, for the run's current details. */
  message: string;
  /** The error type, for example `KeelConfigError`. */
  type: string;
}

/**
 * Sent by the model activity to its own run when it meets a worker problem (once per problem,
 * not once per attempt), so the run's current details can say what holds it up.
 */
export const workerProblemSignal = defineSignal<[WorkerProblem]>('workerProblem');

export const agentSearchAttribute = defineSearchAttributeKey('KeelAgent', 'KEYWORD');
export const statusSearchAttribute = defineSearchAttributeKey('KeelStatus', 'KEYWORD');

/**
 * The workflow tells its worker about each new message, so the model activity reads the
 * conversation from a worker-local cache instead of receiving it as input (which would store
 * the whole conversation in history on every turn). On a cache miss the activity queries.
 */
export interface KeelSinks extends Sinks {
  conversation: {
    append(start: number, messages: Message[]): void;
    /** The execution continues an earlier one of the same run: its messages are this one's. */
    continued(previousRunId: string): void;
  };
}
