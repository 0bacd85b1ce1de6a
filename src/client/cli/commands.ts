/**
 * What the `keel` commands do. Loaded only once a command runs, so `keel --help` stays fast;
 * the Temporal worker (and its bundler) is imported only by `keel worker` and `keel demo`.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AgentClient, RunFailedError, type RunHandle } from '../agent-client.js';
import { StreamText, isDelta } from '../../core/stream.js';
import type { PendingApproval } from '../../core/approval.js';
import type { ClientToolHandlers } from '../../core/client-tools.js';
import { ClientToolsLoadError, loadClientTools } from '../client-tools-loader.js';
import { loadConnectConfig, type ConnectSettings } from '../connection.js';
import type { AgentDefinition } from '../../core/define.js';
import type { StateValues } from '../../core/state.js';
import type { Message } from '../../core/messages.js';
import type { MonitorState } from '../../core/monitor.js';
import type { SessionState } from '../../core/session.js';
import { oneLine } from '../../core/text.js';
import type { AgentRunInput, AgentRunResult, RunEvent, RunState } from '../../core/run.js';
import type { KeelWorker } from '../../worker.js';
import type * as ExamplesModule from '../../../examples/demo.js';
import { PromptInterrupted, promptForApprovals, type PromptStreams } from './approval-prompt.js';
import {
  colorEnabled,
  createStyle,
  decideCommands,
  formatEvent,
  formatLogEntry,
  formatResult,
  formatRunList,
  formatStatus,
  formatTranscript,
  formatTree,
  formatUsage,
  plural,
  type FollowContext,
  type Style,
} from './format.js';
import { CliError, DEFAULT_TASK_QUEUE, type GlobalOptions } from './common.js';

/**
 * The examples' agents, served by `keel worker` without --agents and by `keel demo`. The build
 * compiles examples/ beside src/ (dist/examples/demo.js), so the same relative path works from
 * the sources and from an installed package.
 */
const EXAMPLES_MODULE = new URL(`../../../examples/demo${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

const out = (line = '') => process.stdout.write(`${line}\n`);
const err = (line = '') => process.stderr.write(`${line}\n`);

function stdoutStyle(): Style {
  return createStyle(colorEnabled(process.stdout));
}
function stderrStyle(): Style {
  return createStyle(colorEnabled(process.stderr));
}
export function width(): number {
  return Math.min(160, Math.max(60, process.stdout.columns ?? 100));
}

function settingsOf(globals: GlobalOptions): ConnectSettings {
  return {
    ...(globals.address && { address: globals.address }),
    ...(globals.namespace && { namespace: globals.namespace }),
    ...(globals.profile && { profile: globals.profile }),
  };
}

export { uiUrlFor } from './common.js';
import { uiUrlFor } from './common.js';

interface Target {
  settings: ConnectSettings;
  address: string;
  namespace: string;
  uiUrl: string;
}

function target(globals: GlobalOptions): Target {
  const settings = settingsOf(globals);
  const config = loadConnectConfig(settings);
  const address = config.connectionOptions.address ?? 'localhost:7233';
  return { settings, address, namespace: config.namespace, uiUrl: uiUrlFor(address, globals.uiUrl) };
}

async function connectClient(t: Target, taskQueue?: string): Promise<AgentClient> {
  return AgentClient.connect({ ...t.settings, uiUrl: t.uiUrl, ...(taskQueue && { taskQueue }) });
}

export async function withClient<T>(globals: GlobalOptions, fn: (client: AgentClient, t: Target) => Promise<T>, taskQueue?: string) {
  const t = target(globals);
  const client = await connectClient(t, taskQueue);
  try {
    return await fn(client, t);
  } finally {
    await client.close().catch(() => undefined);
  }
}

/**
 * Worker logs: warnings and errors, one line each (KEEL_LOG_LEVEL=INFO or DEBUG for more,
 * KEEL_DEBUG=1 for Temporal's full entries with stacks). The CLI handles SIGINT/SIGTERM itself.
 */
async function installRuntime(): Promise<void> {
  const { DefaultLogger, Runtime } = await import('@temporalio/worker');
  const level = (process.env.KEEL_LOG_LEVEL ?? 'WARN').toUpperCase() as 'WARN';
  const s = stderrStyle();
  const logger = process.env.KEEL_DEBUG
    ? new DefaultLogger(level)
    : new DefaultLogger(level, (entry) => err(formatLogEntry(entry, s)));
  Runtime.install({ logger, shutdownSignals: [] });
}

/** The agents a module exports as `agents` or as its default export. */
export async function loadAgents(module?: string): Promise<{ agents: AgentDefinition[]; source: string }> {
  const url = module ? pathToFileURL(resolve(process.cwd(), module)) : EXAMPLES_MODULE;
  const source = module ?? 'examples/demo';
  let exports: Record<string, unknown>;
  try {
    exports = (await import(url.href)) as Record<string, unknown>;
  } catch (e) {
    throw agentsLoadError(source, e);
  }
  const value = exports.agents ?? exports.default;
  const list: unknown[] = Array.isArray(value) ? value : value !== undefined ? [value] : [];
  const agents = list.filter(isAgent);
  if (agents.length === 0 || agents.length !== list.length) {
    throw new CliError(
      `${source} exports no agents: export an array of defineAgent(...) results as \`agents\` or as the default export.`,
    );
  }
  return { agents, source };
}

/**
 * Why a module of agents did not load. Node (20, and 22 without type stripping) loads no
 * TypeScript by itself: keel is compiled, so a `.ts` module needs the user's own loader.
 */
export function agentsLoadError(source: string, e: unknown): CliError {
  const error = e as NodeJS.ErrnoException | undefined;
  const message = error?.message ?? String(e);
  if (error?.code === 'ERR_UNKNOWN_FILE_EXTENSION' && /\.[cm]?tsx?\b/.test(message)) {
    return new CliError(
      `Cannot load agents from ${source}: Node runs no TypeScript by itself (${message}).\n` +
        'Run keel through a TypeScript loader (npm install --save-dev tsx), for example:\n' +
        `  node --import tsx node_modules/.bin/keel worker --agents ${source}\n` +
        `  NODE_OPTIONS='--import tsx' npx keel worker --agents ${source}\n` +
        'or compile your agents to JavaScript and pass the .js file.',
    );
  }
  return new CliError(`Cannot load agents from ${source}: ${message}`);
}

function isAgent(value: unknown): value is AgentDefinition {
  return typeof value === 'object' && value !== null && (value as AgentDefinition).kind === 'agent' && 'spec' in value;
}

function waitForSignal(onSignal: (signal: NodeJS.Signals, count: number) => void): () => void {
  let count = 0;
  const handler = (signal: NodeJS.Signals) => onSignal(signal, ++count);
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}

// ---------------------------------------------------------------------------------------------
// keel worker

export async function workerCommand(options: { agents?: string; taskQueue?: string }, globals: GlobalOptions): Promise<number> {
  const s = stdoutStyle();
  const t = target(globals);
  const taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
  const { agents, source } = await loadAgents(options.agents);
  await installRuntime();
  const { createWorker } = await import('../../worker.js');
  out(s.dim(`Starting a keel worker for ${plural(agents.length, 'agent')} from ${source} (bundling the workflow code)...`));
  const worker = await createWorker({ agents, taskQueue, connection: t.settings });

  out(`${s.bold('keel worker')} serving ${plural(agents.length, 'agent')}:`);
  const nameWidth = Math.max(...agents.map((a) => a.name.length));
  for (const agent of agents) out(`  ${s.bold(agent.name.padEnd(nameWidth))}  ${s.dim(agent.spec.model)}`);
  out(`task queue ${s.cyan(taskQueue)} · server ${t.address} · namespace ${t.namespace}`);
  out(s.dim(`Ready: polling for runs. Try: keel run ${agents[0]?.name ?? '<agent>'} "..."${taskQueue === DEFAULT_TASK_QUEUE ? '' : ` --task-queue ${taskQueue}`}   (Ctrl-C stops)`));

  const stopSignals = waitForSignal((signal, count) => {
    if (count > 1) {
      err(`Received ${signal} again: exiting without waiting for the worker.`);
      process.exit(130);
    }
    err(`Received ${signal}: shutting down the worker (running activities finish first)...`);
    worker.shutdown();
  });
  try {
    await worker.run();
  } finally {
    stopSignals();
  }
  out('Worker stopped.');
  return 0;
}

// ---------------------------------------------------------------------------------------------
// keel run

export interface RunCommandOptions {
  id?: string;
  detach?: boolean;
  json?: boolean;
  /** false with --no-input: never ask about approvals. */
  input?: boolean;
  /** false with --no-stream: the run does not stream (its events are followed by query). */
  stream?: boolean;
  taskQueue?: string;
  /** A module of client tool handlers: this process runs the run's client tools. */
  tools?: string;
  /** --state: the run's state at its start, as JSON. */
  state?: string;
}

/** Whether a person sits at this process: stdin and stdout are terminals. */
export function interactive(): boolean {
  return process.stdin.isTTY === true && process.stdout.isTTY === true;
}

/** Exit codes of a followed run. */
export const EXIT = { completed: 0, failed: 1, blocked: 3, interrupted: 130 } as const;

export async function runCommand(agent: string, prompt: string, options: RunCommandOptions, globals: GlobalOptions) {
  return withClient(
    globals,
    async (client) => {
      if (options.tools && options.detach) throw new CliError('--tools needs a followed run (this process runs the client tools): leave out --detach.');
      // Loaded before the run starts: a module that cannot serve is an error before anything runs.
      const tools = options.tools ? await loadToolsOrFail(options.tools) : undefined;
      const stream = options.stream !== false;
      const handle = await startRun(client, agent, prompt, options.id, { stream, ...(options.state !== undefined && { state: parseState(options.state) }) });
      if (options.detach) {
        if (options.json) out(JSON.stringify({ workflowId: handle.workflowId, uiUrl: handle.uiUrl }));
        else {
          const s = stdoutStyle();
          out(handle.workflowId);
          out(`${s.dim('Temporal UI:')} ${s.blue(handle.uiUrl)}`);
          out(s.dim(`Follow it with: keel status ${handle.workflowId} · keel show ${handle.workflowId}`));
        }
        return 0;
      }
      const ask = options.input !== false && !options.json && interactive();
      const follow = { json: options.json ?? false, taskQueue: client.taskQueue, approvals: ask ? ('prompt' as const) : ('print' as const), stream };
      if (!tools) return followRun(handle, follow);
      return withClientTools(handle, tools, options.json ?? false, () => followRun(handle, follow));
    },
    options.taskQueue,
  );
}

async function loadToolsOrFail(module: string): Promise<ClientToolHandlers> {
  try {
    return await loadClientTools(module);
  } catch (e) {
    if (e instanceof ClientToolsLoadError) throw new CliError(e.message);
    throw e;
  }
}

/** Serves the run's client tools from this process while `follow` follows it; a refused answer is said on stderr. */
async function withClientTools(handle: RunHandle, tools: ClientToolHandlers, json: boolean, follow: () => Promise<number>): Promise<number> {
  const stop = new AbortController();
  const serving = handle.serveClientTools(tools, {
    signal: stop.signal,
    onCall: (served) => {
      if (served.outcome === 'refused' || served.outcome === 'unsent') {
        err(stderrStyle().yellow(`  ! the answer to ${served.tool} (call ${served.callId}) was ${served.outcome === 'refused' ? 'refused' : 'not sent'}: ${served.detail}`));
      } else if (!json && served.outcome === 'error') {
        err(stderrStyle().yellow(`  ! ${served.tool} failed here: ${served.detail}`));
      }
    },
  });
  try {
    return await follow();
  } finally {
    stop.abort();
    await serving.catch(() => undefined);
  }
}

/** `--state`: a JSON object, or a clear error. */
function parseState(text: string): StateValues {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CliError(`--state must be JSON, such as '{"user": "ada"}'; got ${JSON.stringify(text)}.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CliError(`--state must be a JSON object of keys and values, such as '{"user": "ada"}'.`);
  return value as StateValues;
}

async function startRun(client: AgentClient, agent: string, prompt: string, workflowId: string | undefined, start: { stream: boolean; state?: StateValues }): Promise<RunHandle> {
  try {
    return await client.start(agent, prompt, { ...(workflowId && { workflowId }), ...(start.stream && { stream: true }), ...(start.state && { state: start.state }) });
  } catch (e) {
    if ((e as Error)?.name === 'WorkflowExecutionAlreadyStartedError') {
      throw new CliError(`A run with workflow ID "${workflowId}" is already running: pick another --id.`);
    }
    throw e;
  }
}

/**
 * What following a run does when a call waits for approval: ask inline (a terminal), print the
 * commands that decide it and keep following (no terminal, or --no-input), or allow it after
 * saying how a person would have (the demo without a terminal).
 */
export type ApprovalHandling = 'prompt' | 'print' | 'auto';

export interface FollowOptions {
  json: boolean;
  taskQueue: string;
  /** Default 'print'. */
  approvals?: ApprovalHandling;
  /** Where 'prompt' asks. Default: stdin and stdout. */
  streams?: PromptStreams;
  /** The run streams: its text is printed as it arrives (with --json, each chunk is a line). */
  stream?: boolean;
}

/**
 * Follows a run live until it ends; prints its answer (or failure). Returns the exit code:
 * 0 completed or stopped at its turn limit, 1 failed or cancelled, 3 blocked by a guardrail,
 * 130 interrupted at an approval prompt (the run goes on).
 */
export async function followRun(handle: RunHandle, options: FollowOptions): Promise<number> {
  const s = stdoutStyle();
  const context: FollowContext = {};
  if (!options.json) out(s.dim(`run ${handle.workflowId} · task queue ${options.taskQueue}`));
  const approvals = new ApprovalFollower(handle, options);

  // A run waits for a worker; say so when nothing happens for a while.
  const hint = setTimeout(() => {
    err(
      stderrStyle().yellow(
        `Waiting for a worker on task queue "${options.taskQueue}"... Is one running? ` +
          `Start one with: keel worker${options.taskQueue === DEFAULT_TASK_QUEUE ? '' : ` --task-queue ${options.taskQueue}`}`,
      ),
    );
  }, 8_000);
  hint.unref();
  const stopSignals = waitForSignal(() => {
    err(`\nStopped following. The run goes on: keel status ${handle.workflowId}`);
    process.exit(EXIT.interrupted);
  });

  const live = new LiveText(s);
  try {
    for await (const event of options.stream ? live.events(handle, options.json) : handle.follow()) {
      clearTimeout(hint);
      live.settle(event);
      if (options.json) out(JSON.stringify(event));
      else {
        const line = formatEvent(event, context, s, width());
        if (line !== undefined) out(line);
      }
      if (event.type === 'approval.requested') {
        try {
          await approvals.requested(event.callId, event.tool);
        } catch (e) {
          if (!(e instanceof PromptInterrupted)) throw e;
          err(`\nStopped following. The run goes on, waiting for a decision: keel pending · keel status ${handle.workflowId}`);
          return EXIT.interrupted;
        }
      }
    }
    clearTimeout(hint);

    let result: AgentRunResult;
    try {
      result = await handle.result();
    } catch (e) {
      if (!(e instanceof RunFailedError)) throw e;
      if (options.json) {
        out(JSON.stringify({ type: 'error', workflowId: handle.workflowId, error: e.message, errorType: e.type ?? null, uiUrl: handle.uiUrl }));
      }
      const es = stderrStyle();
      err(es.red(`✗ ${e.message}`));
      err(`${es.dim('Temporal UI:')} ${es.blue(handle.uiUrl)}`);
      return EXIT.failed;
    }
    if (options.json) out(JSON.stringify({ type: 'result', workflowId: handle.workflowId, uiUrl: handle.uiUrl, ...result }));
    else for (const line of formatResult(result, handle.uiUrl, s, { shown: live.shown(result.output) })) out(line);
    return result.status === 'blocked' ? EXIT.blocked : EXIT.completed;
  } finally {
    clearTimeout(hint);
    stopSignals();
  }
}

/**
 * A streaming run's text as it arrives: each turn's deltas written as they come (a retried turn
 * starts again on a new line, saying so), its events passed on to be printed as usual.
 */
class LiveText {
  private readonly text = new StreamText();
  /** The turn whose text is being written, and how much of it is on the screen. */
  private turn: number | undefined;
  private written = '';
  private lastText = '';

  constructor(private readonly s: Style) {}

  async *events(handle: RunHandle, json: boolean): AsyncGenerator<RunEvent> {
    for await (const chunk of handle.stream()) {
      if (chunk.type === 'stream.end') return;
      if (!isDelta(chunk)) {
        const { offset: _offset, ...event } = chunk;
        yield event as RunEvent;
        continue;
      }
      if (json) {
        out(JSON.stringify(chunk));
        continue;
      }
      if (chunk.type === 'tool_call.delta' || !this.text.apply(chunk)) continue;
      const now = this.text.text(chunk.turn);
      if (this.turn !== chunk.turn || !now.startsWith(this.written)) {
        if (this.written !== '') process.stdout.write('\n');
        if (chunk.type === 'turn.reset' || (this.turn === chunk.turn && this.written !== '')) {
          out(this.s.dim(`  (the model's answer starts again: attempt ${chunk.attempt})`));
        }
        this.turn = chunk.turn;
        this.written = '';
      }
      const more = now.slice(this.written.length);
      if (more === '') continue;
      if (this.written === '') process.stdout.write('  ');
      process.stdout.write(more.replace(/\n/g, '\n  '));
      this.written = now;
    }
  }

  /** An event after some text: the text's line ends first, and its turn's text is not printed again. */
  settle(event: RunEvent): void {
    if (this.written === '') return;
    process.stdout.write('\n');
    if (event.type === 'turn.finished' && event.turn === this.turn) {
      this.lastText = this.written;
      // Printed already: the event says only what the text did not.
      (event as { text: string }).text = '';
    }
    this.written = '';
  }

  /** Whether the final answer is on the screen already (streamed as the last turn's text). */
  shown(output: unknown): boolean {
    return typeof output === 'string' && output !== '' && output === this.lastText;
  }
}

/** What a followed run does about each call that waits for approval (see ApprovalHandling). */
class ApprovalFollower {
  private mode: ApprovalHandling;
  /** Calls asked about, printed or allowed already: each is handled once. */
  private readonly handled = new Set<string>();

  constructor(
    private readonly handle: RunHandle,
    private readonly options: FollowOptions,
  ) {
    this.mode = options.approvals ?? 'print';
  }

  async requested(callId: string, tool: string): Promise<void> {
    if (this.handled.has(callId)) return;
    switch (this.mode) {
      case 'print':
        this.handled.add(callId);
        this.printHint(callId, tool);
        return;
      case 'auto':
        this.handled.add(callId);
        await this.allowForDemo(callId, tool);
        return;
      case 'prompt':
        await this.prompt();
        return;
    }
  }

  /** Asks about every call that waits now (the event's and its siblings of the same turn). */
  private async prompt(): Promise<void> {
    const calls: PendingApproval[] = (await this.handle.pending()).filter((c) => !this.handled.has(c.callId));
    for (const call of calls) this.handled.add(call.callId);
    if (calls.length === 0) return; // decided meanwhile, elsewhere
    const streams = this.options.streams ?? { input: process.stdin, output: process.stdout };
    const outcomes = await promptForApprovals(calls, this.handle, streams, { style: stdoutStyle(), width: width() });
    const unanswered = outcomes.filter((o) => o.kind === 'unanswered');
    if (unanswered.length > 0) {
      // The input ended: nobody answers here any more.
      this.mode = 'print';
      for (const o of unanswered) this.printHint(o.callId, calls.find((c) => c.callId === o.callId)?.tool ?? 'the call');
    }
    out();
  }

  private printHint(callId: string, tool: string): void {
    const { approve, deny } = decideCommands(this.handle.workflowId, callId);
    // With --json, stdout holds only JSON lines.
    const write = this.options.json ? err : out;
    const s = this.options.json ? stderrStyle() : stdoutStyle();
    write(s.yellow(`  ⏸ The run waits for a decision on ${tool} (call ${callId}). Decide with:`));
    write(`      ${approve}`);
    write(`      ${deny}`);
    write(s.dim('    (still following: the run goes on once someone decides)'));
  }

  /** `keel demo` without a terminal: nobody can be asked, so the demo allows the call itself. */
  private async allowForDemo(callId: string, tool: string): Promise<void> {
    const s = stdoutStyle();
    const { approve, deny } = decideCommands(this.handle.workflowId, callId);
    out(s.yellow(`  ⏸ ${tool} needs approval. With no terminal to ask in, the demo allows it itself; a person would run:`));
    out(`      ${approve}     ${s.dim(`(or: ${deny})`)}`);
    try {
      await this.handle.approve(callId, { reason: 'keel demo: no terminal to ask in' });
    } catch (e) {
      if ((e as Error)?.name !== 'ApprovalRejectedError') throw e;
      err(stderrStyle().red(`  ✗ The run refused the demo's approval: ${(e as Error).message}`));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// keel status / show / list

/** A query, or undefined when no worker answers within `ms` (a closed run needs a worker to replay it). */
export async function tryQuery<T>(client: AgentClient, ms: number, fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await client.client.connection.withDeadline(Date.now() + ms, fn);
  } catch (e) {
    if ((e as Error)?.name === 'WorkflowNotFoundError') throw e;
    return undefined;
  }
}

export async function statusCommand(workflowId: string, options: { json?: boolean }, globals: GlobalOptions) {
  return withClient(globals, async (client) => {
    const handle = client.getHandle(workflowId);
    const summary = await describeRun(handle);
    if (summary.kind === 'monitor') {
      // A monitor answers `status` with its phase, next wake and totals.
      const state = await tryQuery<MonitorState>(client, 3_000, () => client.getMonitor(workflowId).status());
      if (options.json) out(JSON.stringify({ ...summary, uiUrl: handle.uiUrl, state: state ?? null }, null, 2));
      else {
        const { monitorRows } = await import('./monitor-commands.js');
        const lines = formatStatus({ ...summary, uiUrl: handle.uiUrl }, undefined, stdoutStyle(), undefined, state ? monitorRows(state) : undefined, {
          ...(state?.pending && { pending: state.pending }),
          ...(state?.clientCalls && { clientCalls: state.clientCalls }),
          width: width(),
        });
        for (const line of lines) out(line);
      }
      return 0;
    }
    if (summary.kind === 'session') {
      // A session answers `status` with its conversation: the agent in charge, checkpoints, the current run.
      const state = await tryQuery<SessionState>(client, 3_000, () => client.session(workflowId).status());
      if (options.json) out(JSON.stringify({ ...summary, uiUrl: handle.uiUrl, state: state ?? null }, null, 2));
      else {
        const lines = formatStatus({ ...summary, uiUrl: handle.uiUrl }, undefined, stdoutStyle(), undefined, state ? sessionRows(state) : undefined, {
          ...(state?.pending && { pending: state.pending }),
          width: width(),
        });
        for (const line of lines) out(line);
        if (state && state.checkpoints.length > 0) {
          const s = stdoutStyle();
          out();
          out(s.bold(`Checkpoints (${state.checkpoints.length}; rewind with keel chat --session ${workflowId}, /rewind)`));
          for (const c of state.checkpoints.slice(-10)) out(`  ${c.id}  ${s.dim(c.agent)}  ${oneLine(c.message, Math.max(20, width() - c.id.length - c.agent.length - 8))}`);
        }
      }
      return 0;
    }
    const state = await tryQuery<RunState>(client, 3_000, () => handle.status());
    // What the run waits for now (the Temporal UI's "current details"), while it runs.
    const details =
      state?.status === 'running' || state?.status === 'awaiting_approval'
        ? await tryQuery<string | undefined>(client, 3_000, () => handle.currentDetails())
        : undefined;
    if (options.json) {
      out(JSON.stringify({ ...summary, uiUrl: handle.uiUrl, state: state ?? null, details: details ?? null }, null, 2));
    } else {
      for (const line of formatStatus({ ...summary, uiUrl: handle.uiUrl }, state, stdoutStyle(), details, undefined, { width: width() })) out(line);
    }
    return 0;
  });
}

/** A session's rows for `keel status`: its phase, the agent that answers next, its size and its current run. */
export function sessionRows(state: SessionState): [string, string][] {
  const rows: [string, string][] = [['phase', state.ended ? `ended (${state.ended})` : state.status]];
  rows.push(['next', `${state.agent} answers the next message`]);
  rows.push(['messages', `${state.messages} in ${plural(state.runs, 'run')}`]);
  rows.push(['turns', String(state.turns)]);
  rows.push(['usage', formatUsage(state.usage)]);
  if (state.run) rows.push(['run', `${state.run.run} · ${state.run.status}${state.run.error ? ` · ${oneLine(state.run.error, 120)}` : ''}`]);
  const keys = Object.keys(state.state);
  if (keys.length > 0) rows.push(['state', keys.join(', ')]);
  return rows;
}

export async function describeRun(handle: RunHandle) {
  try {
    return await handle.describe();
  } catch (e) {
    if ((e as Error)?.name === 'WorkflowNotFoundError') {
      throw new CliError(`No run with workflow ID "${handle.workflowId}" (list recent runs with: keel list).`);
    }
    throw e;
  }
}

/** `keel state <id>`: the run's state, as JSON (any kind of run answers the state query). */
export async function stateCommand(workflowId: string, globals: GlobalOptions) {
  return withClient(globals, async (client) => {
    const handle = client.getHandle(workflowId);
    const state = await tryQuery<StateValues>(client, 5_000, () => handle.state());
    if (state === undefined) throw new CliError(`No worker answered the state query of ${workflowId}: start a worker on the run's task queue.`);
    out(JSON.stringify(state, null, 2));
    return 0;
  });
}

export async function showCommand(workflowId: string, options: { json?: boolean }, globals: GlobalOptions) {
  return withClient(globals, async (client) => {
    const handle = client.getHandle(workflowId);
    const summary = await describeRun(handle);
    let messages = await tryQuery<Message[]>(client, 5_000, () => handle.transcript());
    const partial = messages === undefined;
    messages ??= await transcriptFromHistory(handle);
    if (options.json) {
      out(JSON.stringify(messages, null, 2));
      return 0;
    }
    const s = stdoutStyle();
    out(`${s.bold(summary.workflowId)} ${s.dim(`· ${summary.agent} · ${summary.status} · ${handle.uiUrl}`)}`);
    out();
    for (const line of formatTranscript(messages, s, width())) out(line);
    if (partial) {
      out();
      out(s.dim('(No worker answered the transcript query: this is the prompt and the answer from Temporal’s history.'));
      out(s.dim(' Start a worker on the run’s task queue to see the whole conversation.)'));
    }
    return 0;
  });
}

/** What the history alone tells: the prompt (or the carried conversation) and the final answer. */
async function transcriptFromHistory(handle: RunHandle): Promise<Message[]> {
  const { defaultPayloadConverter } = await import('@temporalio/common');
  type Payload = Parameters<typeof defaultPayloadConverter.fromPayload>[0];
  const history = await handle.workflow.fetchHistory();
  const messages: Message[] = [];
  const first = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (first) {
    const input = defaultPayloadConverter.fromPayload<AgentRunInput>(first as Payload);
    // A continued execution's input holds no messages: the earlier executions have them.
    if (!input.continued) messages.push({ role: 'user', content: input.input });
  }
  for (const event of history.events ?? []) {
    const payload = event.workflowExecutionCompletedEventAttributes?.result?.payloads?.[0];
    if (payload) {
      const result = defaultPayloadConverter.fromPayload<AgentRunResult>(payload as Payload);
      const content = typeof result.output === 'string' ? result.output : JSON.stringify(result.output);
      messages.push({ role: 'assistant', content });
    }
  }
  return messages;
}

export async function listCommand(
  options: { limit?: number; agent?: string; status?: string; json?: boolean },
  globals: GlobalOptions,
) {
  return withClient(globals, async (client) => {
    const runs = await client.list({
      limit: options.limit ?? 20,
      ...(options.agent && { agent: options.agent }),
      ...(options.status && { status: options.status }),
    });
    if (options.json) out(JSON.stringify(runs, null, 2));
    else for (const line of formatRunList(runs, stdoutStyle())) out(line);
    return 0;
  });
}

export async function treeCommand(workflowId: string, options: { json?: boolean }, globals: GlobalOptions) {
  return withClient(globals, async (client) => {
    let tree;
    try {
      tree = await client.tree(workflowId);
    } catch (e) {
      if ((e as Error)?.name === 'WorkflowNotFoundError') {
        throw new CliError(`No run with workflow ID "${workflowId}" (list recent runs with: keel list).`);
      }
      throw e;
    }
    if (options.json) out(JSON.stringify(tree, null, 2));
    else for (const line of formatTree(tree, stdoutStyle())) out(line);
    return 0;
  });
}

// ---------------------------------------------------------------------------------------------
// keel demo

/** Which model the demo agent uses, and why. */
export function describeDemoModel(model: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.KEEL_MODEL) return `${model} (from KEEL_MODEL)`;
  if (env.OPENAI_API_KEY) return `${model} (OPENAI_API_KEY is set)`;
  if (env.ANTHROPIC_API_KEY) return `${model} (ANTHROPIC_API_KEY is set)`;
  return `${model} (the offline demo model: no API key needed; set OPENAI_API_KEY, ANTHROPIC_API_KEY or KEEL_MODEL for a real one)`;
}

export async function demoCommand(prompt: string | undefined, options: { taskQueue?: string }, globals: GlobalOptions) {
  const s = stdoutStyle();
  const t = target(globals);
  const taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
  const examples = (await import(EXAMPLES_MODULE.href)) as typeof ExamplesModule;

  out(`${s.bold('keel demo')} ${s.dim('· durable LLM agents on Temporal')}`);
  out(`${s.dim('model ')} ${describeDemoModel(examples.demo.spec.model)}`);
  out(`${s.dim('server')} ${t.address} · namespace ${t.namespace} · task queue ${taskQueue}`);

  // Connect first: an unreachable server fails fast, before the worker bundles its code.
  const client = await connectClient(t, taskQueue);
  let worker: KeelWorker | undefined;
  let running: Promise<void> | undefined;
  const stopSignals = waitForSignal((signal, count) => {
    if (count > 1 || !worker) process.exit(130);
    err(`\nReceived ${signal}: stopping the demo worker...`);
    worker.shutdown();
  });
  try {
    await installRuntime();
    const { createWorker } = await import('../../worker.js');
    out(s.dim('Starting an in-process worker (bundling the workflow code)...'));
    worker = await createWorker({ agents: examples.agents, taskQueue, connection: t.settings });
    running = worker.run();
    const stopped = running.then(() => {
      throw new CliError('The demo worker stopped before the run ended.');
    });
    out();
    const handle = await client.start(examples.demo, prompt ?? examples.DEMO_PROMPT);
    stopSignals();
    // In a terminal the demo asks, as `keel run` does; otherwise it allows the call itself.
    return await Promise.race([followRun(handle, { json: false, taskQueue, approvals: interactive() ? 'prompt' : 'auto' }), stopped]);
  } finally {
    stopSignals();
    if (worker && running) {
      try {
        worker.shutdown();
      } catch {
        // already stopping
      }
      await running.catch(() => undefined);
    }
    await client.close().catch(() => undefined);
  }
}
