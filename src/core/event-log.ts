import type { NewRunEvent, RunEvent } from './run.js';

/** The run's numbered event log. Pure: the workflow supplies the (deterministic) time. */
export class EventLog {
  private readonly events: RunEvent[];

  constructor(carried: RunEvent[] = []) {
    this.events = [...carried];
  }

  get lastSeq(): number {
    return this.events.at(-1)?.seq ?? 0;
  }

  append(event: NewRunEvent, at: Date): RunEvent {
    const full = { ...event, seq: this.lastSeq + 1, at: at.toISOString() } as RunEvent;
    this.events.push(full);
    return full;
  }

  /** Events with `seq` greater than `after`. */
  after(after = 0): RunEvent[] {
    // seq is dense from 1, so the index is known without a search.
    return this.events.slice(Math.max(0, after - (this.events[0]?.seq ?? 1) + 1));
  }

  all(): RunEvent[] {
    return this.events;
  }
}
