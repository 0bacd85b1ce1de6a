/**
 * The run's state inside the workflow: its values and version, changed only by applying the change
 * sets that activities return (in the order they finished, as history records them) and a
 * sub-agent's changes when it returns. Activities get the version, not the values: the `state` sink
 * gives each new version to the worker's cache, and an activity that misses it reads it by query
 * or from history (src/activities/state-reader.ts), so history holds the state once at the start
 * and each write once, in the activity result that made it.
 */
import { proxySinks } from '@temporalio/workflow';
import type { ContinuedState } from '../core/run.js';
import { applyChanges, type StateChanges, type StateSnapshot, type StateValues } from '../core/state.js';
import type { KeelSinks } from './api.js';

const { state: stateSink } = proxySinks<KeelSinks>();

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
