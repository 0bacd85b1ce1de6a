import type { Message } from '../core/messages.js';

/**
 * Each run's conversation, kept by the worker so that a model turn does not carry it in its
 * input. Filled by the workflow's `conversation` sink and by the conversation reader on a miss;
 * bounded, least recently used first out. A run's messages may have holes (a continued execution
 * is handed on only the messages its next turn needs): a read says which it lacks.
 */
export class ConversationCache {
  private readonly runs = new Map<string, (Message | undefined)[]>();

  constructor(private readonly maxRuns = 1_000) {}

  /**
   * Messages `start..` of a run, as the workflow appends them: what the run held from
   * `start + messages.length` on is gone (a turn rolled back).
   */
  append(run: string, start: number, messages: Message[]): void {
    const known = this.touch(run) ?? [];
    known.length = Math.max(start, 0);
    for (let i = 0; i < messages.length; i++) known[start + i] = messages[i];
    this.set(run, known);
  }

  /** Messages `start..` of a run, read from its history or handed on: they fill holes, nothing is dropped. */
  fill(run: string, start: number, messages: Message[]): void {
    const known = this.touch(run) ?? [];
    for (let i = 0; i < messages.length; i++) known[start + i] = messages[i];
    this.set(run, known);
  }

  /** A run continued as new: the conversation of its earlier execution is the new one's. */
  rename(from: string, to: string): void {
    const known = this.runs.get(from);
    if (!known) return;
    this.runs.delete(from);
    this.set(to, known);
  }

  /** Messages `from..to` of a run (`to` excluded), if all are here. */
  read(run: string, from: number, to: number): Message[] | undefined {
    const known = this.touch(run);
    if (!known || known.length < to) return undefined;
    const out: Message[] = [];
    for (let i = from; i < to; i++) {
      const m = known[i];
      if (!m) return undefined;
      out.push(m);
    }
    return out;
  }

  /** The indices in `from..to` that the cache lacks for a run. */
  missing(run: string, from: number, to: number): number[] {
    const known = this.runs.get(run) ?? [];
    const out: number[] = [];
    for (let i = from; i < to; i++) if (!known[i]) out.push(i);
    return out;
  }

  forget(run: string): void {
    this.runs.delete(run);
  }

  private touch(run: string): (Message | undefined)[] | undefined {
    const known = this.runs.get(run);
    if (known) {
      this.runs.delete(run);
      this.runs.set(run, known);
    }
    return known;
  }

  private set(run: string, messages: (Message | undefined)[]): void {
    this.runs.set(run, messages);
    while (this.runs.size > this.maxRuns) {
      const oldest = this.runs.keys().next().value;
      if (oldest === undefined) break;
      this.runs.delete(oldest);
    }
  }
}

export const runKey = (workflowId: string, runId: string): string => `${workflowId}/${runId}`;
