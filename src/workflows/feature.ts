/**
 * What a feature of a run (approvals, handoffs, sub-agents, background agents, a driver's own
 * tools) is to the lifecycle: the pipeline stage that answers its calls, what it does around a
 * turn, what it carries across continue-as-new, and what it settles at the run's end. Its state
 * is its own; `Run` holds only what every run has. A feature is built from the workflow's input
 * (restoring what the previous execution carried) before any handler runs, so a signal or an
 * update buffered for the first workflow task finds it ready; it meets the run in `attach`.
 *
 * The shape is Temporal's interceptors': small objects with optional methods, composed once in
 * the order the lifecycle lists them.
 */
import type { ContinuedState } from '../core/run.js';
import type { AgentSpec, ToolSpec } from '../core/agent-spec.js';
import type { ToolStage } from '../core/tool-pipeline.js';
import type { Run } from './run-state.js';

export interface RunFeature {
  readonly name: string;
  /**
   * Tools the feature answers itself, added to every spec the run records (whatever agent is in
   * charge after a handoff). Given the first agent's spec, it may refuse a clash of names.
   */
  tools?(agent: AgentSpec): ToolSpec[];
  /** The pipeline stage that answers the feature's calls; stages run in the order of the features. */
  readonly stage?: ToolStage;
  /** The run exists (started, or resumed in a new execution). */
  attach?(run: Run): void;
  /** Before a model turn: text to add as a user message (a block of background reports). */
  beforeTurn?(): string | undefined;
  /** After a turn's tool calls have all finished (a handoff takes effect). */
  afterCalls?(turn: number): void;
  /** After each turn, and once more at the run's end (events forwarded to a parent). */
  afterTurn?(): Promise<void>;
  /** Its part of what the next execution needs: fields of `ContinuedState`. */
  carry?(): Partial<ContinuedState>;
  /** The run really ends (not a continue-as-new): settle what the feature started. */
  end?(): Promise<void>;
}
