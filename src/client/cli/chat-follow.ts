/**
 * Following one run of a session for `keel chat`: its tool calls and approvals as they happen,
 * then its answer, until the session says the run finished (or it waits for a person nobody
 * here can be).
 */
import type { RunEvent } from '../../core/run.js';
import type { SessionRunStatus } from '../../core/session.js';
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
]);

const POLL_MS = 200;

export class ChatFollower {
  private readonly context: FollowContext = {};

  constructor(
    private readonly session: SessionHandle,
    private readonly runId: string,
    private after: number,
    private readonly settings: FollowSettings,
  ) {}

  /**
   * Follows the run to its end. `approve` is called when it waits for approval (and at once
   * with `pendingFirst`); 'stop' leaves it waiting.
   */
  async run(options: { pendingFirst: boolean; approve(): Promise<'answered' | 'stop'> }): Promise<FollowEnd> {
    const { style: s } = this.settings;
    const line = (text: string) => this.settings.write(`${text}\n`);
    if (options.pendingFirst && (await options.approve()) === 'stop') return this.waiting();
    for (;;) {
      const events = await this.session.events({ after: this.after });
      for (const event of events) {
        this.after = event.seq;
        if (event.type === 'approval.requested') {
          line(formatEvent(event, this.context, s, this.settings.width) ?? '');
          if ((await options.approve()) === 'stop') return this.waiting();
          continue;
        }
        if (event.type === 'session.run_finished' && event.run === this.runId) return this.finished();
        if (SHOWN.has(event.type)) {
          const text = formatEvent(event, this.context, s, this.settings.width);
          if (text !== undefined) line(text);
        }
      }
      if (events.length === 0) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  private async finished(): Promise<FollowEnd> {
    const { style: s } = this.settings;
    const r = await this.session.result(this.runId);
    if ((r.status === 'completed' || r.status === 'max_turns') && r.output !== undefined && r.output !== null) {
      this.settings.write(`${s.cyan(`${r.agent}>`)} ${formatOutput(r.output)}\n`);
    }
    if (r.status === 'running' || r.status === 'awaiting_approval') return { status: 'waiting', usage: r.usage, turns: r.turns };
    return { status: r.status, ...(r.error !== undefined && { error: r.error }), usage: r.usage, turns: r.turns };
  }

  private async waiting(): Promise<FollowEnd> {
    const status = await this.session.status();
    return { status: 'waiting', usage: status.run?.usage ?? status.usage, turns: status.run?.turns ?? 0 };
  }
}
