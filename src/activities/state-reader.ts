/**
 * How an activity gets the run's state: its input names a version (`StateRef`), not the values.
 * The workflow's `state` sink gives each version to the worker's cache (`StateCache`); on a miss
 * (a new worker, an activity on another worker than the workflow's) a first attempt asks the run
 * by its `state` query under a short deadline, and a retried attempt, or a failed query, replays
 * the run's history here (conversation-reader.ts explains why a query alone is not enough right
 * after a worker is lost). A read is at least as new as the version asked for.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { StateSnapshot, StateValues } from '../core/state.js';
import { stateQuery } from '../workflows/api.js';
import { runKey } from './conversation-cache.js';
import type { ConversationReader } from './conversation-reader.js';
import { execution } from './recorded-spec.js';

const QUERY_DEADLINE_MS = 3_000;

/** Each run's latest state the worker heard of, by workflow and run ID; bounded, least recently used first out. */
export class StateCache {
  private readonly runs = new Map<string, StateSnapshot>();

  constructor(private readonly maxRuns = 1_000) {}

  /** A version of a run's state: an older one than the cache holds is ignored. */
  put(run: string, snapshot: StateSnapshot): void {
    const known = this.runs.get(run);
    if (known && known.version > snapshot.version) return;
    this.runs.delete(run);
    this.runs.set(run, snapshot);
    while (this.runs.size > this.maxRuns) {
      const oldest = this.runs.keys().next().value;
      if (oldest === undefined) break;
      this.runs.delete(oldest);
    }
  }

  /** The run's state, when the cache holds `version` or a later one. */
  get(run: string, version: number): StateValues | undefined {
    const known = this.runs.get(run);
    if (!known || known.version < version) return undefined;
    this.runs.delete(run);
    this.runs.set(run, known);
    return known.values;
  }
}

export interface StateReaderDeps {
  stateCache: StateCache;
  reader: ConversationReader;
  client: Client;
}

/** The run's state at `version` or later; `undefined` (a run without state) is the empty state. */
export async function readState(deps: StateReaderDeps, version: number | undefined): Promise<StateValues> {
  if (version === undefined) return {};
  const { workflowId, runId } = execution();
  const key = runKey(workflowId, runId);
  const cached = deps.stateCache.get(key, version);
  if (cached) return cached;
  if (Context.current().info.attempt === 1) {
    const answer = await deps.client
      .withDeadline(Date.now() + QUERY_DEADLINE_MS, () => deps.client.workflow.getHandle(workflowId, runId).query(stateQuery))
      .catch(() => undefined);
    if (answer && answer.version >= version) {
      deps.stateCache.put(key, answer);
      return answer.values;
    }
  }
  const replayed = await deps.reader.replay(workflowId, runId).catch(() => undefined);
  if (replayed?.state && replayed.state.version >= version) {
    deps.stateCache.put(key, replayed.state);
    return replayed.state.values;
  }
  throw ApplicationFailure.retryable(`Could not read version ${version} of the state of run ${workflowId}: neither the worker's cache, the run nor its history had it.`);
}
