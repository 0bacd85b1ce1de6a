import type { NewRunEvent, RunEvent } from './run.js';

/**
 * The numbered event log of one execution of a run. Pure: the workflow supplies the
 * (deterministic) time. After continue-as-new it starts where the earlier execution stopped,
 * holding only its own events; the earlier ones stay readable in the earlier execution.
 */
export class EventLog {
  private readonly events: RunEvent[];
  /** `seq` of the last event of the earlier executions. */
  private readonly before: number;

  constructor(carried: RunEvent[] = [], before = 0) {
    this.events = [...carried];
    this.before = carried[0] ? carried[0].seq - 1 : before;
  }

  get lastSeq(): number {
    return this.events.at(-1)?.seq ?? this.before;
  }

  /** `seq` of the first event this log holds (or would hold). */
  get firstSeq(): number {
    return this.before + 1;
  }

  append(event: NewRunEvent, at: Date): RunEvent {
    const full = { ...event, seq: this.lastSeq + 1, at: at.toISOString() } as RunEvent;
    this.events.push(full);
    return full;
  }

  /** Events with `seq` greater than `after`, of those this log holds. */
  after(after = 0): RunEvent[] {
    // seq is dense, so the index is known without a search.
    return this.events.slice(Math.max(0, after - this.before));
  }
}
