/**
 * `keel chat`: a conversation with an agent in a session. A terminal gets a prompt with line
 * editing, the answer as it arrives, tool calls in a line each, approvals asked inline and the
 * session's commands (/help); a pipe gets one message per line and the answers, and whatever
 * would need a person becomes a clear error.
 */
import { createInterface, type Interface } from 'node:readline/promises';
import type { Message } from '../../core/messages.js';
import { oneLine } from '../../core/text.js';
import type { AgentClient } from '../agent-client.js';
import { SessionRefusedError, type SessionHandle } from '../session-handle.js';
import { PromptInterrupted, promptForApprovals } from './approval-prompt.js';
import { CHAT_HELP } from './chat-help.js';
import { ChatFollower, type FollowEnd } from './chat-follow.js';
import { CliError, type GlobalOptions } from './common.js';
import { colorEnabled, createStyle, formatUsage, plural, type Style } from './format.js';
import { width, withClient } from './commands.js';

export interface ChatOptions {
  session?: string;
  /** A module of client tool handlers the chat runs (as `keel run --tools`). */
  tools?: string;
  taskQueue?: string;
}

/** Messages of a resumed session shown before its prompt. */
const RESUME_TAIL = 6;


export async function chatCommand(agent: string, options: ChatOptions, globals: GlobalOptions): Promise<number> {
  return withClient(
    globals,
    async (client) => {
      const terminal = process.stdin.isTTY === true && process.stdout.isTTY === true;
      const chat = new Chat(client, { terminal, style: createStyle(colorEnabled(process.stdout)), width: width() });
      const session = options.session ? await chat.resume(options.session) : await chat.start(agent, options.taskQueue);
      if (options.tools) await chat.serveTools(options.tools);
      return chat.loop(session);
    },
    options.taskQueue,
  );
}

interface ChatSettings {
  terminal: boolean;
  style: Style;
  width: number;
}

class Chat {
  private session!: SessionHandle;
  private readonly serving: { stop(): void }[] = [];
  private toolsModule?: string;
  private rl?: Interface;
  /** Lines of a pipe, read through one iterator for the whole chat so none is dropped between reads. */
  private pipeLines?: AsyncIterator<string>;
  private pendingInput = '';
  /** Set when the chat cannot go on by itself (a pipe, and a run that waits for a person). */
  private stuck = false;

  constructor(
    private readonly client: AgentClient,
    private readonly settings: ChatSettings,
  ) {}

  private get s(): Style {
    return this.settings.style;
  }

  private out(line = ''): void {
    process.stdout.write(`${line}\n`);
  }

  private err(line: string): void {
    process.stderr.write(`${line}\n`);
  }

  async start(agent: string, taskQueue?: string): Promise<SessionHandle> {
    // The chat shows each answer as it arrives: its session streams.
    const session = await this.client.startSession(agent, { options: { stream: true }, ...(taskQueue && { taskQueue }) });
    this.out(this.s.dim(`session ${session.workflowId} · agent ${agent} · ${session.uiUrl}`));
    if (this.settings.terminal) this.out(this.s.dim('Type a message, /help for the commands, /exit to leave.'));
    this.session = session;
    return session;
  }

  async resume(workflowId: string): Promise<SessionHandle> {
    const session = this.client.session(workflowId);
    let status;
    try {
      status = await session.status();
    } catch (e) {
      if ((e as Error)?.name === 'WorkflowNotFoundError') throw new CliError(`No session with ID "${workflowId}". List sessions with: keel list`);
      throw e;
    }
    if (status.kind !== 'session') throw new CliError(`"${workflowId}" is a ${status.kind}, not a session: start one with keel chat <agent>.`);
    if (status.status === 'ended') throw new CliError(`Session "${workflowId}" has ended (${status.ended}). Start a new one with: keel chat ${status.agent}`);
    this.out(this.s.dim(`session ${workflowId} · agent ${status.agent} · ${plural(status.messages, 'message')} · ${session.uiUrl}`));
    const transcript = await session.transcript();
    const all = spoken(transcript);
    if (all.length > RESUME_TAIL) this.out(this.s.dim('…'));
    for (const m of all.slice(-RESUME_TAIL)) this.out(this.said(m.role === 'user' ? 'you' : status.agent, m.text));
    if (status.status === 'awaiting_approval') this.out(this.s.yellow('The last run waits for approval: answer it below, or /discard.'));
    if (status.status === 'failed') this.out(this.s.yellow(`The last run failed${status.run?.error ? `: ${oneLine(status.run.error, 200)}` : ''}. /resume it, /discard it, or send a new message (which gives it up).`));
    this.session = session;
    return session;
  }

  async serveTools(module: string): Promise<void> {
    this.toolsModule = module;
    await this.startServing();
  }

  private async startServing(): Promise<void> {
    if (!this.toolsModule) return;
    const { ClientToolsLoadError, loadClientTools } = await import('../client-tools-loader.js');
    let handlers;
    try {
      handlers = await loadClientTools(this.toolsModule);
    } catch (e) {
      if (e instanceof ClientToolsLoadError) throw new CliError(e.message);
      throw e;
    }
    const controller = new AbortController();
    const served = this.session.run.serveClientTools(handlers, { signal: controller.signal });
    served.catch((e: unknown) => this.err(this.s.red(`✗ serving client tools stopped: ${(e as Error).message}`)));
    this.serving.push({ stop: () => controller.abort() });
  }

  private stopServing(): void {
    for (const s of this.serving.splice(0)) s.stop();
  }

  /** Reads and answers messages until /exit or the end of the input. */
  async loop(first: SessionHandle): Promise<number> {
    this.session = first;
    let code = 0;
    try {
      // A run left waiting for approval is answered before anything else.
      const status = await this.session.status();
      if (status.status === 'awaiting_approval' && status.run) code = await this.follow(status.run.run, await this.position(), true);
      for (;;) {
        const line = await this.read();
        if (line === undefined) break;
        const text = line.trim();
        if (text === '') continue;
        if (text.startsWith('/') && !text.startsWith('//')) {
          const result = await this.command(text);
          if (result === 'exit') break;
          if (typeof result === 'number') code = result;
          if (this.stuck) break;
          continue;
        }
        code = await this.send(text.startsWith('//') ? text.slice(1) : text);
        if (this.stuck) break;
      }
    } finally {
      this.stopServing();
      this.rl?.close();
    }
    this.out(this.s.dim(`Session ${this.session.workflowId} stays; resume it with: keel chat --session ${this.session.workflowId} ${(await this.session.status().catch(() => undefined))?.agent ?? '<agent>'}`));
    return code;
  }

  /** Where the run about to start can be followed from: the stream's offset, or the last event's seq. */
  private async position(): Promise<{ offset?: number; after: number; agent: string }> {
    const [offset, status] = await Promise.all([this.session.run.streamOffset(), this.session.status()]);
    return { ...(offset !== undefined && { offset }), after: status.lastSeq, agent: status.agent };
  }

  private async send(message: string): Promise<number> {
    let from: { offset?: number; after: number; agent: string };
    let runId: string;
    try {
      from = await this.position();
      runId = (await this.session.send(message, { wait: false })).run;
    } catch (e) {
      return this.refused(e);
    }
    return this.follow(runId, from, false);
  }

  /** Follows one run of the session to its end. Ctrl-C gives up that run, not the session. */
  private async follow(runId: string, from: { offset?: number; after: number; agent: string }, pendingFirst: boolean): Promise<number> {
    this.closeInput();
    const follower = new ChatFollower(this.session, runId, from.agent, { style: this.s, width: this.settings.width, write: (t) => process.stdout.write(t) });
    let interrupted = false;
    const onSigint = () => {
      if (interrupted) return;
      interrupted = true;
      this.err(this.s.yellow('\n⊘ Stopping this run (the session goes on)…'));
      this.session.discard().catch((e: unknown) => this.err(this.s.red(`✗ ${(e as Error).message}`)));
    };
    process.on('SIGINT', onSigint);
    try {
      const hooks = { pendingFirst, approve: async () => this.approve(onSigint) };
      const end: FollowEnd = from.offset !== undefined ? await follower.stream(from.offset, hooks) : await follower.poll(from.after, hooks);
      return this.ended(end);
    } finally {
      process.off('SIGINT', onSigint);
    }
  }

  /** Asks about the calls the run waits for; Ctrl-C at the prompt gives the run up. */
  private async approve(onSigint: () => void): Promise<'answered' | 'stop'> {
    const calls = await this.session.run.pending();
    if (calls.length === 0) return 'answered';
    if (!this.settings.terminal) {
      const names = calls.map((c) => `${c.tool} (call ${c.callId})`).join(', ');
      this.err(this.s.red(`✗ The run waits for approval of ${names}, and there is no terminal to ask in.`));
      this.err(`  Decide with: keel approve ${this.session.workflowId} <call>  ·  keel deny ${this.session.workflowId} <call>  ·  or chat in a terminal.`);
      return 'stop';
    }
    try {
      await promptForApprovals(calls, this.session.run, { input: process.stdin, output: process.stdout, terminal: true }, { style: this.s, width: this.settings.width });
      return 'answered';
    } catch (e) {
      if (!(e instanceof PromptInterrupted)) throw e;
      onSigint();
      return 'answered';
    }
  }

  private ended(end: FollowEnd): number {
    switch (end.status) {
      case 'completed':
      case 'max_turns':
        if (end.status === 'max_turns') this.out(this.s.yellow(`! stopped at the turn limit (${end.turns} turns)`));
        this.out(this.s.dim(`  ${formatUsage(end.usage)}`));
        return 0;
      case 'discarded':
        this.out(this.s.yellow('⊘ run given up (its message stays in the conversation; /rewind removes it).'));
        return 0;
      case 'blocked':
        this.err(this.s.red(`⊘ ${end.error ?? 'blocked by a guardrail'}`));
        return 3;
      case 'waiting':
        // Nobody here can answer: the next message would only be refused.
        this.stuck = !this.settings.terminal;
        return 1;
      default:
        this.err(this.s.red(`✗ the run failed: ${end.error ?? end.status}`));
        this.err(this.s.dim('  /resume runs it again from where it failed; /discard gives it up; a new message gives it up too.'));
        return 1;
    }
  }

  private refused(e: unknown): number {
    if (e instanceof SessionRefusedError) {
      this.err(this.s.red(`✗ ${e.message}`));
      return 1;
    }
    throw e;
  }

  private async command(line: string): Promise<'exit' | number | undefined> {
    const [name, ...rest] = line.split(/\s+/);
    const arg = rest.join(' ').trim();
    try {
      switch (name) {
        case '/exit':
        case '/quit':
          return 'exit';
        case '/help':
          for (const h of CHAT_HELP) this.out(`  ${h}`);
          this.out(this.s.dim('  //text sends a message that starts with "/". Ctrl-C during an answer stops that run.'));
          return undefined;
        case '/agent':
          this.out(`  ${(await this.session.status()).agent}`);
          return undefined;
        case '/state': {
          const state = (await this.session.status()).state;
          const keys = Object.keys(state);
          if (keys.length === 0) this.out(this.s.dim('  (the state is empty)'));
          for (const k of keys) this.out(`  ${this.s.bold(k)} = ${JSON.stringify(state[k])}`);
          return undefined;
        }
        case '/checkpoints': {
          const { checkpoints } = await this.session.status();
          if (checkpoints.length === 0) this.out(this.s.dim('  (no checkpoints yet: one is made per message)'));
          checkpoints.forEach((c, i) => this.out(`  ${String(i + 1).padStart(3)}  ${this.s.bold(c.id)}  ${this.s.dim(c.agent)}  ${oneLine(c.message, this.settings.width - c.id.length - c.agent.length - 12)}`));
          return undefined;
        }
        case '/rewind':
          return await this.rewind(arg);
        case '/fork':
        case '/clear': {
          const next = name === '/fork' ? await this.session.fork() : await this.session.clear();
          const from = this.session.workflowId;
          this.stopServing();
          this.session = next;
          await this.startServing();
          this.out(this.s.dim(`${name === '/fork' ? 'forked' : 'cleared'}: now in session ${next.workflowId} (${from} is kept)`));
          return undefined;
        }
        case '/resume': {
          const from = await this.position();
          const r = await this.session.resume({ wait: false });
          return await this.follow(r.run, from, false);
        }
        case '/discard':
          await this.session.discard();
          this.out(this.s.yellow('⊘ run given up.'));
          return undefined;
        default:
          this.err(this.s.red(`✗ No command ${name}. /help lists them; //text sends a message that starts with "/".`));
          return 1;
      }
    } catch (e) {
      return this.refused(e);
    }
  }

  private async rewind(arg: string): Promise<number | undefined> {
    const { checkpoints } = await this.session.status();
    if (checkpoints.length === 0) {
      this.err(this.s.red('✗ Nothing to rewind to: the session has no checkpoints yet.'));
      return 1;
    }
    let id = arg;
    if (id === '') {
      if (!this.settings.terminal) {
        this.err(this.s.red('✗ Name the checkpoint: /rewind <id> (/checkpoints lists them).'));
        return 1;
      }
      checkpoints.forEach((c, i) => this.out(`  ${String(i + 1).padStart(3)}  ${oneLine(c.message, this.settings.width - 10)}`));
      const answer = (await this.read(`rewind to before which message? [1-${checkpoints.length}, empty to cancel] `))?.trim();
      if (!answer) return undefined;
      const n = Number(answer);
      const chosen = Number.isInteger(n) ? checkpoints[n - 1] : checkpoints.find((c) => c.id === answer);
      if (!chosen) {
        this.err(this.s.red(`✗ No checkpoint ${answer}: answer a number from 1 to ${checkpoints.length}.`));
        return 1;
      }
      id = chosen.id;
    } else if (/^\d+$/.test(id) && !checkpoints.some((c) => c.id === id)) {
      id = checkpoints[Number(id) - 1]?.id ?? id;
    }
    const r = await this.session.rewind(id);
    this.out(this.s.dim(`rewound to before ${r.checkpoint}: ${plural(r.messages, 'message')} left, ${r.agent} answers next`));
    // The removed message comes back into the input, to edit and send again.
    if (this.settings.terminal) this.pendingInput = r.message;
    else this.out(this.s.dim(`removed: ${oneLine(r.message, this.settings.width - 10)}`));
    return undefined;
  }

  /** The next line of input, or undefined at its end. */
  private async read(prompt = 'you> '): Promise<string | undefined> {
    if (!this.settings.terminal) {
      this.pipeLines ??= (this.rl ??= createInterface({ input: process.stdin, terminal: false }))[Symbol.asyncIterator]();
      const next = await this.pipeLines.next();
      return next.done ? undefined : next.value;
    }
    const rl = (this.rl ??= this.openInput());
    const pending = this.pendingInput;
    this.pendingInput = '';
    const answer = rl.question(this.s.bold(prompt));
    if (pending) rl.write(pending);
    try {
      return await answer;
    } catch (e) {
      if ((e as Error)?.name === 'AbortError') return undefined;
      throw e;
    }
  }

  private openInput(): Interface {
    const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
    let closed = false;
    rl.on('close', () => (closed = true));
    // Ctrl-C at the prompt: a typed line is dropped; on an empty line it leaves.
    rl.on('SIGINT', () => {
      if (rl.line.length > 0) {
        rl.write(null, { ctrl: true, name: 'u' });
        return;
      }
      if (!closed) rl.close();
    });
    return rl;
  }

  /** While a run is followed, the terminal is left to its signals (Ctrl-C) and the approval prompt. */
  private closeInput(): void {
    if (!this.settings.terminal) return;
    this.rl?.close();
    this.rl = undefined;
  }

  private said(who: string, text: string): string {
    return who === 'you' ? `${this.s.bold('you>')} ${text}` : `${this.s.cyan(`${who}>`)} ${text}`;
  }
}

/** The user's messages and the agents' answers of a transcript, as text (tool traffic left out). */
function spoken(transcript: Message[]): { role: 'user' | 'assistant'; text: string }[] {
  const shown: { role: 'user' | 'assistant'; text: string }[] = [];
  for (const m of transcript) {
    if (m.role === 'tool' || m.content.trim() === '') continue;
    if (m.role === 'assistant' && m.toolCalls?.length) continue;
    shown.push({ role: m.role, text: oneLine(m.content, 300) });
  }
  return shown;
}
