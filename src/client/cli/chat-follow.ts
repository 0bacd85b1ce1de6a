/**
 * Following one run of a session for `keel chat`: its text as it arrives (a session that
 * streams) or its answer at the end (one that does not), its tool calls and approvals as they
 * happen, until the session says the run finished, or it waits for a person nobody here can be.
 */
import type { RunEvent } from '../../core/run.js';
import type { SessionRunStatus } from '../../core/session.js';
import { StreamText, type StreamItem } from '../../core/stream.js';
import type { Usage } from '../../core/usage.js';
import type { SessionHandle } from '../session-handle.js';
import { formatEvent, formatOutput, type FollowContext, type Style } from './format.js';

export type FollowEnd =
  | { status: Exclude<SessionRunStatus, 'running' | 'awaiting_approval'>; error?: string; usage: Usage; turns: number }
  /** The run waits for approval and nobody here answers: it stays waiting. */
  | { status: 'waiting'; usage: Usage; turns: number };

export interface FollowSettings {
  style: Style;
  width: number;
  write(text: string): void;
}

export interface FollowHooks {
  /** Ask about the calls the run waits for now; 'stop' leaves them waiting. */
  approve(): Promise<'answered' | 'stop'>;
}

/** What chat lines a run's events make: the tool traffic and the decisions, not the turn bookkeeping. */
const SHOWN: ReadonlySet<RunEvent['type']> = new Set([
  'tool.requested',
  'tool.finished',
  'tool.decided',
  'approval.decided',
  'approval.rejected',
  'guardrail.tripped',
  'hook.failed',
  'output.invalid',
  'permission.mode',
  'handoff',
  'client_tool.requested',
]);

const POLL_MS = 200;

export class ChatFollower {
  private readonly context: FollowContext = {};
  private readonly text = new StreamText();
  /** The turn whose text is on the screen, its line still open. */
  private speaking: number | undefined;
  /** The last turn that streamed text: when it is the answer, the answer is on the screen already. */
  private lastSpoken: number | undefined;
  private agent: string;

  constructor(
    private readonly session: SessionHandle,
    private readonly runId: string,
    agent: string,
    private readonly settings: FollowSettings,
  ) {
    this.agent = agent;
  }

  private line(text: string): void {
    this.endSpeech();
    this.settings.write(`${text}\n`);
  }

  private endSpeech(): void {
    if (this.speaking === undefined) return;
    this.settings.write('\n');
    this.speaking = undefined;
  }

  /** Follows the run by the session's stream, from `offset` (read before the message was sent). */
  async stream(offset: number, hooks: FollowHooks & { pendingFirst?: boolean }): Promise<FollowEnd> {
    if (hooks.pendingFirst && (await hooks.approve()) === 'stop') return this.waiting();
    const stop = new AbortController();
    try {
      for await (const chunk of this.session.stream({ from: offset, signal: stop.signal })) {
        const end = await this.chunk(chunk, hooks);
        if (end) return end;
      }
    } finally {
      stop.abort();
    }
    // The session ended (its stream's end) without saying the run finished.
    return this.finished();
  }

  /** Follows the run by the session's events query, after `after` (a session that does not stream). */
  async poll(after: number, hooks: FollowHooks & { pendingFirst?: boolean }): Promise<FollowEnd> {
    if (hooks.pendingFirst && (await hooks.approve()) === 'stop') return this.waiting();
    let seq = after;
    for (;;) {
      const events = await this.session.events({ after: seq });
      for (const event of events) {
        seq = event.seq;
        const end = await this.event(event, hooks);
        if (end) return end;
      }
      if (events.length === 0) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  private async chunk(chunk: StreamItem, hooks: FollowHooks): Promise<FollowEnd | undefined> {
    switch (chunk.type) {
      case 'text.delta': {
        const before = this.text.text(chunk.turn);
        const attempt = this.text.attempt(chunk.turn);
        if (!this.text.apply(chunk)) return undefined;
        const after = this.text.text(chunk.turn);
        // A later attempt starts the turn again: its text on a line of its own, saying so.
        const restarted = attempt !== undefined && chunk.attempt > attempt;
        if (this.speaking !== chunk.turn || restarted || !after.startsWith(before)) {
          this.endSpeech();
          if (restarted) this.settings.write(`${this.settings.style.yellow(`(turn ${chunk.turn} starts again)`)}\n`);
          this.settings.write(`${this.settings.style.cyan(`${this.agent}>`)} `);
          this.speaking = chunk.turn;
          this.settings.write(after);
        } else {
          this.settings.write(after.slice(before.length));
        }
        this.lastSpoken = chunk.turn;
        return undefined;
      }
      case 'turn.reset':
        this.text.apply(chunk);
        if (this.speaking === chunk.turn) {
          this.endSpeech();
          this.settings.write(`${this.settings.style.yellow(`(turn ${chunk.turn} starts again)`)}\n`);
        }
        if (this.lastSpoken === chunk.turn) this.lastSpoken = undefined;
        return undefined;
      case 'tool_call.delta':
        return undefined;
      case 'stream.end':
        return this.finished();
      default: {
        const { offset: _offset, ...event } = chunk;
        return this.event(event as RunEvent, hooks);
      }
    }
  }

  private async event(event: RunEvent, hooks: FollowHooks): Promise<FollowEnd | undefined> {
    if (event.type === 'handoff') this.agent = event.to;
    if (event.type === 'turn.finished' && event.text.trim() === '' && this.lastSpoken === event.turn) this.lastSpoken = undefined;
    if (event.type === 'approval.requested') {
      this.line(formatEvent(event, this.context, this.settings.style, this.settings.width) ?? '');
      return (await hooks.approve()) === 'stop' ? this.waiting() : undefined;
    }
    if (event.type === 'session.run_finished' && event.run === this.runId) return this.finished();
    if (SHOWN.has(event.type)) {
      const text = formatEvent(event, this.context, this.settings.style, this.settings.width);
      if (text !== undefined) this.line(text);
    }
    return undefined;
  }

  private async finished(): Promise<FollowEnd> {
    const streamed = this.lastSpoken !== undefined;
    this.endSpeech();
    const r = await this.session.result(this.runId);
    const answered = r.status === 'completed' || r.status === 'max_turns';
    // The answer's text streamed already; a structured output (or a session that does not stream) is printed here.
    const structured = r.output !== undefined && r.output !== null && typeof r.output !== 'string';
    if (answered && (structured || !streamed) && r.output !== undefined && r.output !== null) {
      this.settings.write(`${this.settings.style.cyan(`${r.agent}>`)} ${formatOutput(r.output)}\n`);
    }
    if (r.status === 'running' || r.status === 'awaiting_approval') return { status: 'waiting', usage: r.usage, turns: r.turns };
    return { status: r.status, ...(r.error !== undefined && { error: r.error }), usage: r.usage, turns: r.turns };
  }

  private async waiting(): Promise<FollowEnd> {
    this.endSpeech();
    const status = await this.session.status();
    return { status: 'waiting', usage: status.run?.usage ?? status.usage, turns: status.run?.turns ?? 0 };
  }
}
