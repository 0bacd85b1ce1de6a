/**
 * The run's interface, defined once and shared by the workflow and its clients: workflow type,
 * queries, sinks, search attributes. Only definitions live here, so a client can import it.
 */
import { defineSearchAttributeKey } from '@temporalio/common';
import { defineQuery, type Sinks } from '@temporalio/workflow';
import type { Message } from '../core/messages.js';
import type { RunEvent, RunState } from '../core/run.js';

/** The workflow type name: `temporal workflow start --type agentRun ...` */
export const AGENT_RUN_WORKFLOW = 'agentRun';
export const DEFAULT_TASK_QUEUE = 'keel';

/** A slice of the transcript, by message index: `from` included, `to` excluded. */
export interface TranscriptRange {
  from?: number;
  to?: number;
}

export const statusQuery = defineQuery<RunState>('status');
export const transcriptQuery = defineQuery<Message[], [TranscriptRange?]>('transcript');
/** Events with `seq` greater than the argument (all events without one). */
export const eventsQuery = defineQuery<RunEvent[], [number?]>('events');

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
  };
}
