import type { Message } from '../core/messages.js';

/**
 * Each run's conversation, kept by the worker so that a model turn does not carry it in its
 * input. Filled by the workflow's `conversation` sink; bounded, least recently used first out.
 * A miss is never an error: the model activity then queries the run.
 */
export class ConversationCache {
  private readonly runs = new Map<string, Message[]>();

  constructor(private readonly maxRuns = 1_000) {}

  /** Messages `start..` of a run. A gap (a missed append) drops the run, to be fetched anew. */
  append(run: string, start: number, messages: Message[]): void {
    const known = this.touch(run) ?? (start === 0 ? [] : undefined);
    if (!known) return;
    if (start > known.length) {
      this.runs.delete(run);
      return;
    }
    known.splice(start, messages.length, ...messages);
    this.set(run, known);
  }

  /** A run continued as new: the conversation of its earlier execution is the new one's. */
  rename(from: string, to: string): void {
    const known = this.runs.get(from);
    if (!known) return;
    this.runs.delete(from);
    this.set(to, known);
  }

  /** The first `count` messages of a run, if all are here. */
  read(run: string, count: number): Message[] | undefined {
    const known = this.touch(run);
    return known && known.length >= count ? known.slice(0, count) : undefined;
  }

  /** What the cache holds for a run, for filling only the missing tail on a miss. */
  size(run: string): number {
    return this.runs.get(run)?.length ?? 0;
  }

  forget(run: string): void {
    this.runs.delete(run);
  }

  private touch(run: string): Message[] | undefined {
    const known = this.runs.get(run);
    if (known) {
      this.runs.delete(run);
      this.runs.set(run, known);
    }
    return known;
  }

  private set(run: string, messages: Message[]): void {
    this.runs.set(run, messages);
    while (this.runs.size > this.maxRuns) {
      const oldest = this.runs.keys().next().value;
      if (oldest === undefined) break;
      this.runs.delete(oldest);
    }
  }
}

export const runKey = (workflowId: string, runId: string): string => `${workflowId}/${runId}`;
