/**
 * The run's state inside the workflow: its values and version, changed only by applying the change
 * sets that activities return (in the order they finished, as history records them) and a
 * sub-agent's changes when it returns. Activities get the version, not the values: the `state` sink
 * gives each new version to the worker's cache, and an activity that misses it reads it by query
 * or from history (src/activities/state-reader.ts), so history holds the state once at the start
 * and each write once, in the activity result that made it.
 */
import { proxyLocalActivities, proxySinks } from '@temporalio/workflow';
import type { ContinuedState } from '../core/run.js';
import { applyChanges, type StateChanges, type StateSnapshot, type StateValues } from '../core/state.js';
import type { AgentActivities } from './activity-types.js';
import type { KeelSinks } from './api.js';
import type { Run } from './run-state.js';

const { state: stateSink } = proxySinks<KeelSinks>();

const { resolveInstructions } = proxyLocalActivities<AgentActivities>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 3 },
  summary: 'instructions of the state',
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export class State {
  private current: StateValues;
  private at: number;

  constructor(values: StateValues | undefined, version = 0) {
    this.current = { ...(values ?? {}) };
    this.at = version;
    if (this.used) stateSink.set(this.at, this.current);
  }

  /** Whether the run has state at all: only then do activities hear of it (a run without costs nothing). */
  get used(): boolean {
    return this.at > 0 || Object.keys(this.current).length > 0;
  }

  get version(): number {
    return this.at;
  }

  get values(): StateValues {
    return this.current;
  }

  /** What an activity's input carries: the version it reads, when the run has state. */
  ref(): { state?: number } {
    return this.used ? { state: this.at } : {};
  }

  /**
   * Applies what an activity (or a sub-agent) wrote; returns the keys it changed. A malformed
   * change set (from a worker of another version) is ignored in the parts that are not one.
   */
  apply(changes: StateChanges | undefined): string[] {
    if (!isObject(changes)) return [];
    const set = isObject(changes.set) ? (changes.set as StateValues) : undefined;
    const deleted = Array.isArray(changes.delete) ? changes.delete.filter((k): k is string => typeof k === 'string') : undefined;
    const { values, keys } = applyChanges(this.current, { ...(set && { set }), ...(deleted && { delete: deleted }) });
    if (keys.length === 0) return [];
    this.current = values;
    this.at++;
    stateSink.set(this.at, this.current);
    return keys;
  }

  snapshot(): StateSnapshot {
    return { version: this.at, values: this.current };
  }

  carry(): Partial<ContinuedState> {
    return this.used ? { state: this.current, stateVersion: this.at } : {};
  }
}

/**
 * Before a turn: instructions that are a function of the state, and the state changed since they
 * were evaluated, are evaluated again (a local activity, so the text the model sees is recorded).
 * Nothing happens for any other agent: instructions that did not read the state are not marked.
 */
export async function refreshInstructions(run: Run): Promise<void> {
  if (!run.agent.instructionsFromState || run.instructionsAt === run.state.version) return;
  const { instructions } = await resolveInstructions({
    agent: run.agent.name,
    ...(run.context !== undefined && { context: run.context }),
    state: run.state.values,
  });
  run.reinstruct(instructions);
}
