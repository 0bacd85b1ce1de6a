/**
 * How the `keel` CLI writes runs, events, transcripts and tables. Pure functions of their
 * input (and of a Style, which decides about colors), so they are unit-testable.
 */
import type { DecisionSource, PendingApproval } from '../../core/approval.js';
import type { PendingClientCall } from '../../core/client-tools.js';
import type { GuardrailKind, Tripwire } from '../../core/guardrails.js';
import type { Message } from '../../core/messages.js';
import type { AgentRunResult, RunEvent, RunState } from '../../core/run.js';
import type { Usage } from '../../core/usage.js';
import { oneLine } from '../../core/text.js';
import type { RunTree } from '../tree.js';

export interface Style {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  blue(text: string): string;
  magenta(text: string): string;
  cyan(text: string): string;
}

/** ANSI styles when `enabled`, the identity otherwise. */
export function createStyle(enabled: boolean): Style {
  const wrap = (open: number, close: number) => (text: string) =>
    enabled && text !== '' ? `\u001b[${open}m${text}\u001b[${close}m` : text;
  return {
    enabled,
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    blue: wrap(34, 39),
    magenta: wrap(35, 39),
    cyan: wrap(36, 39),
  };
}

/** Colors only for a terminal, and never with NO_COLOR (https://no-color.org); FORCE_COLOR forces them. */
export function colorEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0') return true;
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

/** Removes ANSI escapes (for measuring widths and for tests). */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching escapes is the point
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}



/** JSON text in its compact form (when it parses), on one line, shortened. */
export function shortJson(text: string, max = 100): string {
  let compact = text;
  try {
    compact = JSON.stringify(JSON.parse(text));
  } catch {
    // not JSON: show it as it is
  }
  if (compact.length <= max) return oneLine(compact, max);
  // Cut after the last complete field that fits, as in {"city":"Lisbon",...}
  const line = oneLine(compact, Number.MAX_SAFE_INTEGER);
  const cut = line.lastIndexOf(',', max - 5);
  if ((line.startsWith('{') || line.startsWith('[')) && cut > 0) {
    return `${line.slice(0, cut)},...${line.startsWith('{') ? '}' : ']'}`;
  }
  return oneLine(line, max);
}

/** What the formatter of a followed run remembers between events. */
export interface FollowContext {
  model?: string;
}

/**
 * One line for a live event, or undefined for events that say nothing new to a person
 * (`tool.started`, `run.finished`: the answer is printed from the result).
 */
export function formatEvent(event: RunEvent, context: FollowContext, s: Style, width = 100): string | undefined {
  switch (event.type) {
    case 'run.started':
      context.model = event.model;
      return `${s.bold(`▶ ${event.agent}`)} ${s.dim(`· ${event.model} · ${oneLine(event.input, Math.max(20, width - 20))}`)}`;
    case 'turn.started':
      return s.cyan(`turn ${event.turn}${context.model ? ` · ${context.model}` : ''}`);
    case 'turn.finished': {
      const cut = event.truncated ? `  ${s.yellow('!')} the answer was cut off at the token limit` : undefined;
      // Text beside tool calls is the model thinking aloud; text alone is the answer, printed at the end.
      const aloud = event.toolCalls.length > 0 && event.text.trim() !== '' ? `  ${s.dim(`“${oneLine(event.text, width - 4)}”`)}` : undefined;
      return [aloud, cut].filter((line) => line !== undefined).join('\n') || undefined;
    }
    case 'tool.requested':
      return `  ${s.magenta('→')} ${s.bold(event.tool)} ${s.dim(shortJson(event.arguments, width - event.tool.length - 6))}`;
    case 'tool.started':
      return undefined;
    case 'tool.finished': {
      const cut = event.truncatedFrom !== undefined ? s.yellow(` (cut from ${formatBytes(event.truncatedFrom)})`) : '';
      const room = width - event.tool.length - 6 - stripAnsi(cut).length;
      const by = event.by === 'client' ? s.dim(' · by the client') : '';
      return event.isError
        ? `  ${s.red('✗')} ${s.bold(event.tool)} ${s.red(oneLine(event.result, room))}${cut}${by}`
        : `  ${s.green('←')} ${s.bold(event.tool)} ${s.dim(shortJson(event.result, room))}${cut}${by}`;
    }
    case 'client_tool.requested':
      return `  ${s.yellow('⇢')} ${s.bold(event.tool)} ${s.yellow('waits for a client')} ${s.dim(`(call ${event.callId}, until ${event.expires})`)}`;
    case 'output.invalid':
      return `  ${s.yellow('!')} output does not match the schema (attempt ${event.attempt}): ${oneLine(event.error, width - 40)}`;
    case 'tool.decided': {
      const what = event.decision === 'rewrite' ? 'rewrote the arguments' : `says ${DECISION_COLORS[event.decision](s)(event.decision)}`;
      return `  ${s.dim('·')} ${s.bold(event.tool)} ${s.dim(`${event.stage}`)} ${what}${s.dim(`: ${oneLine(event.reason, Math.max(20, width - event.tool.length - event.stage.length - 30))}`)}`;
    }
    case 'approval.requested':
      return (
        `  ${s.yellow('?')} ${s.bold(event.tool)} ${s.yellow('waits for approval')} ${s.dim(`(call ${event.callId})`)}` +
        s.dim(` · ${event.stage}: ${oneLine(event.reason, Math.max(20, width - event.tool.length - event.callId.length - 40))}`)
      );
    case 'approval.decided': {
      const mark = event.decision === 'allow' ? s.green('✓') : s.red('✗');
      const verb = event.decision === 'allow' ? s.green('allowed') : s.red('denied');
      const extras = [
        event.edited ? 'with edited arguments' : undefined,
        event.remembered ? `remembered as ${event.remembered}` : undefined,
      ].filter((x) => x !== undefined);
      const reason = event.reason ? `: ${oneLine(event.reason, Math.max(20, width - 60))}` : '';
      return `  ${mark} ${s.bold(event.tool)} ${verb} ${decidedBy(event.by)}${extras.length ? `, ${extras.join(', ')}` : ''}${s.dim(reason)}`;
    }
    case 'approval.rejected':
      return `  ${s.yellow('!')} a decision was refused${event.callId ? ` (call ${event.callId})` : ''}: ${oneLine(event.error, Math.max(20, width - 40))}`;
    case 'signal.rejected':
      return `  ${s.yellow('!')} a ${s.bold(event.signal)} signal was refused: ${oneLine(event.error, Math.max(20, width - 40))}`;
    case 'permission.mode':
      return `  ${s.cyan('⚙')} permission mode ${s.bold(event.mode)} ${s.dim(`(set by ${event.by})`)}`;
    case 'state.changed':
      return `  ${s.cyan('⚙')} state: ${oneLine(event.keys.join(', '), width - 30)} ${s.dim(`(${event.tool ? `by ${event.tool}, ` : ''}version ${event.version})`)}`;
    case 'guardrail.tripped':
      return (
        `  ${s.red('⊘')} guardrail ${s.bold(event.guardrail)} ${s.red('tripped')} on ${GUARDRAIL_SUBJECTS[event.kind]}` +
        `${event.callId ? ` (call ${event.callId})` : ''}: ${oneLine(event.reason, Math.max(20, width - 50))}`
      );
    case 'hook.failed':
      return `  ${s.yellow('!')} ${event.event} hook failed${event.callId ? ` (call ${event.callId})` : ''}: ${oneLine(event.error, Math.max(20, width - 40))}`;
    case 'hook.context':
      return s.dim(`  ℹ ${event.event} hook added context: ${oneLine(event.text, Math.max(20, width - 40))}`);
    case 'run.continued':
      return s.dim(`↻ continued as new after ${event.turns} turns`);
    case 'run.finished':
      return undefined;
    case 'monitor.turn':
      return s.cyan(`— monitor turn ${event.turn}${event.inbox > 0 ? ` (${event.inbox} from the inbox)` : ''}: ${oneLine(event.prompt.split('\n').at(-1) ?? '', width - 30)}`);
    case 'monitor.sleep':
      return s.dim(`  ⏾ sleeping until ${event.until}: ${oneLine(event.reason, width - 40)}`);
    case 'monitor.wake':
      return s.dim(`  ☀ woke (${event.cause})`);
    case 'monitor.injected':
      return `  ${s.magenta('✉')} ${oneLine(event.message, width - 6)}`;
    case 'monitor.paused':
      return s.yellow('  ‖ paused');
    case 'monitor.resumed':
      return s.dim('  ▶ resumed');
    case 'monitor.warning':
      return `  ${s.yellow('!')} ${oneLine(event.message, width - 6)}`;
    case 'monitor.turn_failed':
      return `  ${s.red('✗')} turn ${event.turn} failed (attempt ${event.attempt}, ${event.action}): ${oneLine(event.error, width - 40)}`;
  }
}

const DECISION_COLORS: Record<'allow' | 'ask' | 'deny', (s: Style) => (text: string) => string> = {
  allow: (s) => s.green,
  ask: (s) => s.yellow,
  deny: (s) => s.red,
};

/** What a guardrail of each kind looked at. */
const GUARDRAIL_SUBJECTS: Record<GuardrailKind, string> = {
  input: 'the input',
  output: 'the answer',
  toolInput: "a tool call's arguments",
  toolOutput: 'a tool result',
};

/** Who decided a call, for `approval.decided`. */
export function decidedBy(by: DecisionSource): string {
  switch (by) {
    case 'update':
      return 'by an Update';
    case 'signal':
      return 'by a Signal';
    case 'approver':
      return "by the worker's approver";
    case 'timeout':
      return 'at the timeout (its default)';
    case 'early':
      return 'by a decision sent before it waited';
  }
}

/** Bytes the way a person reads them: 900 B, 64 KB, 3.0 MB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** The final answer: text as it is, structured output as indented JSON. */
export function formatOutput(output: unknown): string {
  if (output === null || output === undefined) return '(no answer)';
  if (typeof output === 'string') return output.trim() === '' ? '(empty answer)' : output;
  return JSON.stringify(output, null, 2);
}

export function formatUsage(usage: Usage): string {
  return `${usage.inputTokens.toLocaleString('en-US')} input + ${usage.outputTokens.toLocaleString('en-US')} output tokens`;
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** What tripped a guardrail, in one line: `guardrail "no-secrets" (a tool call's arguments, call c1 of send): why`. */
export function formatTripwire(t: Tripwire): string {
  const where = [GUARDRAIL_SUBJECTS[t.kind], t.callId ? `call ${t.callId}${t.tool ? ` of ${t.tool}` : ''}` : undefined].filter(Boolean).join(', ');
  return `guardrail "${t.guardrail}" (${where}): ${t.reason}`;
}

/** The end of a followed run: the answer (or what blocked it), the status with turns and usage, the UI link. */
/** `shown`: the answer is on the screen already (it was streamed): it is not printed again. */
export function formatResult(result: AgentRunResult, uiUrl: string, s: Style, options: { shown?: boolean } = {}): string[] {
  const lines =
    result.status === 'blocked'
      ? ['', s.bold(s.red('Blocked')), result.blocked ? `Stopped by ${formatTripwire(result.blocked)}` : 'Stopped by a guardrail.', '']
      : options.shown
        ? ['']
        : ['', s.bold('Answer'), formatOutput(result.output), ''];
  const status =
    result.status === 'completed' ? s.green('completed') : result.status === 'blocked' ? s.red('blocked') : s.yellow('stopped at max turns');
  lines.push(`${status} ${s.dim(`· ${plural(result.turns, 'turn')} · ${formatUsage(result.usage)}`)}`);
  lines.push(`${s.dim('Temporal UI:')} ${s.blue(uiUrl)}`);
  return lines;
}

/** `2025-03-01 14:05:09` in local time. */
export function formatTime(date: Date | undefined): string {
  if (!date || Number.isNaN(date.getTime())) return '-';
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
  );
}

export function colorStatus(status: string, s: Style): string {
  switch (status) {
    case 'completed':
      return s.green(status);
    case 'running':
    case 'sleeping':
      return s.cyan(status);
    case 'max_turns':
    case 'awaiting_approval':
    case 'paused':
    case 'starting':
      return s.yellow(status);
    default:
      return s.red(status);
  }
}

/** Left-aligned columns, two spaces apart; widths ignore color escapes. */
export function formatTable(headers: string[], rows: string[][], s: Style): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => stripAnsi(r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - stripAnsi(cell).length)))
      .join('  ')
      .trimEnd();
  return [s.bold(line(headers)), ...rows.map(line)];
}

export interface RunRow {
  workflowId: string;
  agent: string;
  status: string;
  startTime: Date;
  closeTime?: Date;
}

export function formatRunList(runs: RunRow[], s: Style): string[] {
  if (runs.length === 0) return [s.dim('No runs found.')];
  return formatTable(
    ['WORKFLOW ID', 'AGENT', 'STATUS', 'STARTED'],
    runs.map((r) => [r.workflowId, r.agent, colorStatus(r.status, s), formatTime(r.startTime)]),
    s,
  );
}

/** `keel status`: Temporal's record of the run, and the `status` query's answer when a worker gave one. */
export function formatStatus(
  run: RunRow & { uiUrl: string },
  state: RunState | undefined,
  s: Style,
  details?: string,
  /** A monitor's rows (phase, next wake, budgets used), in place of a run's. */
  monitor?: [string, string][],
  /** Calls waiting for a decision (a monitor's, which its state does not type), the time now, the width. */
  extra: { pending?: PendingApproval[]; clientCalls?: PendingClientCall[]; now?: number; width?: number } = {},
): string[] {
  const status = state && state.status !== 'running' ? state.status : run.status;
  const rows: [string, string][] = [
    ['workflow', run.workflowId],
    ['agent', state?.agent ?? run.agent],
    ['status', colorStatus(status, s)],
  ];
  if (details) rows.push(['now', details]);
  if (monitor) rows.push(...monitor);
  if (state) {
    rows.push(['turns', String(state.turns)]);
    rows.push(['usage', formatUsage(state.usage)]);
    rows.push(['messages', String(state.messages)]);
    if (state.permissionMode) rows.push(['mode', `${state.permissionMode} ${s.dim('(permission mode; change it with: keel mode <run> <mode>)')}`]);
    if (state.rememberedRules?.length) rows.push(['remembered', state.rememberedRules.join(', ')]);
  }
  rows.push(['started', formatTime(run.startTime)]);
  rows.push(['closed', run.closeTime ? formatTime(run.closeTime) : '-']);
  rows.push(['ui', s.blue(run.uiUrl)]);
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `${s.dim(k.padEnd(width))}  ${v}`);
  if (!state && !monitor) lines.push(s.dim('(no worker answered the status query: turns and usage are unknown; this is Temporal’s record)'));
  const pending = state?.pending ?? extra.pending ?? [];
  if (pending.length > 0) {
    lines.push('', s.bold(`Waiting for approval (${plural(pending.length, 'call')})`));
    for (const call of pending) lines.push(...formatPendingCall(run.workflowId, call, s, extra.width, extra.now));
  }
  const clientCalls = state?.clientCalls ?? extra.clientCalls ?? [];
  if (clientCalls.length > 0) {
    lines.push('', s.bold(`Waiting for a client (${plural(clientCalls.length, 'call')})`));
    for (const call of clientCalls) {
      const args = shortJson(JSON.stringify(call.arguments), Math.max(20, (extra.width ?? 100) - 10));
      lines.push(`  ${s.bold(call.tool)} ${s.dim(`(call ${call.callId}${call.run ? ` in ${call.run}` : ''}) until ${formatTime(new Date(call.expires))}`)}`, `    ${s.dim(args)}`);
    }
    lines.push(s.dim(`  Serve them with: keel run --tools <module>, or RunHandle.serveClientTools`));
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// keel tree

/** The agents in charge of a run, in order: `triage → billing → triage`. */
export function handoffChain(tree: Pick<RunTree, 'agent' | 'handoffs'>): string[] {
  return tree.handoffs.length === 0 ? [tree.agent] : [tree.handoffs[0]!.from, ...tree.handoffs.map((h) => h.to)];
}

/** How a run of a tree is named: its agent, and for a child the call it answers or the name it was spawned as. */
function treeLabel(node: RunTree): string {
  if (node.callId !== undefined) return `${node.agent} (call ${node.callId})`;
  if (node.kind === 'background') return `${node.agent} (${node.name && node.name !== node.agent ? `spawned as ${node.name}` : 'spawned'})`;
  return node.agent;
}

/**
 * `keel tree`: the run on the first line, then under it its handoffs and its children, each
 * with its kind and status, its workflow ID in a column on the right.
 *
 *   lead-1a2b3c4d  lead · run · completed
 *   ├─ handoffs: lead → billing → lead
 *   └─ researcher (call c1) · sub-agent · completed   lead-1a2b3c4d/researcher-c1
 */
export function formatTree(tree: RunTree, s: Style): string[] {
  const rows: { left: string; id?: string }[] = [];
  const describe = (node: RunTree) => `${treeLabel(node)} ${s.dim('·')} ${node.kind} ${s.dim('·')} ${colorStatus(node.status, s)}`;
  const walk = (node: RunTree, indent: string) => {
    const items: { left: string; node?: RunTree }[] = [
      ...(node.handoffs.length > 0 ? [{ left: `${s.dim('handoffs:')} ${handoffChain(node).join(s.dim(' → '))}` }] : []),
      ...(node.problems ?? []).map((p) => ({ left: `${s.yellow('!')} ${s.dim(p)}` })),
      ...node.children.map((child) => ({ left: describe(child), node: child })),
    ];
    items.forEach((item, i) => {
      const last = i === items.length - 1;
      rows.push({ left: `${indent}${s.dim(last ? '└─ ' : '├─ ')}${item.left}`, ...(item.node && { id: item.node.workflowId }) });
      if (item.node) walk(item.node, `${indent}${s.dim(last ? '   ' : '│  ')}`);
    });
  };
  walk(tree, '');
  const width = Math.max(0, ...rows.filter((r) => r.id !== undefined).map((r) => stripAnsi(r.left).length));
  return [
    `${s.bold(tree.workflowId)}  ${describe(tree)}`,
    ...rows.map((r) => (r.id === undefined ? r.left : `${r.left}${' '.repeat(width - stripAnsi(r.left).length)}   ${s.dim(r.id)}`)),
  ];
}

// ---------------------------------------------------------------------------------------------
// Approvals

/** A span of time in its largest unit: 42s, 5m, 3h, 2d. */
function formatSpan(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h`;
  return `${Math.floor(hours / 24)}d`;
}

/** How long ago an ISO time was: "just now", "42s ago", "5m ago", "3h ago", "2d ago". */
export function formatAgo(iso: string, now = Date.now()): string {
  const ms = now - new Date(iso).getTime();
  if (Number.isNaN(ms)) return '-';
  // A few seconds either way are clock skew between the server and here.
  if (ms < 5_000) return 'just now';
  return `${formatSpan(ms)} ago`;
}

/** How soon an ISO time comes: "in 5m", or "now" once it has passed. */
export function formatIn(iso: string, now = Date.now()): string {
  const ms = new Date(iso).getTime() - now;
  if (Number.isNaN(ms)) return '-';
  return ms < 1_000 ? 'now' : `in ${formatSpan(ms)}`;
}

/** A word as a POSIX shell reads it: as it is when it is safe, else in single quotes. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_.:/@%+=,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The commands that decide a pending call. */
export function decideCommands(workflowId: string, callId: string): { approve: string; deny: string } {
  const target = `${shellQuote(workflowId)} ${shellQuote(callId)}`;
  return { approve: `keel approve ${target}`, deny: `keel deny ${target} --reason "..."` };
}

/** One pending call: tool, call ID, since when, its arguments, who asked and why, the commands that decide it. */
export function formatPendingCall(workflowId: string, call: PendingApproval, s: Style, width = 100, now = Date.now()): string[] {
  const when = [`call ${call.callId}`, `turn ${call.turn}`, `waiting since ${formatAgo(call.since, now)}`];
  if (call.expires) when.push(`expires ${formatIn(call.expires, now)}`);
  const commands = decideCommands(workflowId, call.callId);
  return [
    `  ${s.yellow('?')} ${s.bold(call.tool)} ${s.dim(when.join(' · '))}`,
    `    ${s.dim('arguments')}  ${shortJson(JSON.stringify(call.arguments), Math.max(20, width - 15))}`,
    `    ${s.dim('asked by ')}  ${call.stage}: ${oneLine(call.reason, Math.max(20, width - 17 - call.stage.length))}`,
    `    ${s.dim('allow    ')}  ${commands.approve}`,
    `    ${s.dim('deny     ')}  ${commands.deny}`,
  ];
}

/** A run waiting for approval, as `keel pending` lists it. */
export interface PendingRunRow {
  workflowId: string;
  agent: string;
  calls: PendingApproval[];
  /** The run's calls could not be read: no worker answered. */
  unreachable?: string;
}

/** `keel pending`: each waiting run with its calls, or a plain sentence when none waits. */
export function formatPending(runs: PendingRunRow[], s: Style, options: { agent?: string; width?: number; now?: number } = {}): string[] {
  if (runs.length === 0) {
    return [options.agent ? `No run of agent ${options.agent} is waiting for approval.` : 'No run is waiting for approval.'];
  }
  const calls = runs.reduce((n, r) => n + r.calls.length, 0);
  const lines = [`${plural(calls, 'call')} of ${plural(runs.length, 'run')} ${calls === 1 ? 'waits' : 'wait'} for approval:`];
  for (const run of runs) {
    lines.push('', `${s.bold(run.workflowId)} ${s.dim(`· ${run.agent}`)}`);
    if (run.unreachable) lines.push(`  ${s.yellow('!')} its calls cannot be read now: ${run.unreachable}. Start its worker; a decision by --signal still reaches it.`);
    for (const call of run.calls) lines.push(...formatPendingCall(run.workflowId, call, s, options.width, options.now));
  }
  return lines;
}

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((line, i) => (i === 0 ? line : prefix + line))
    .join('\n');
}

/** The conversation, one block per message, tool calls and results in short. */
export function formatTranscript(messages: Message[], s: Style, width = 100): string[] {
  const lines: string[] = [];
  for (const m of messages) {
    switch (m.role) {
      case 'user':
        lines.push(`${s.bold(s.blue('user'))}       ${indent(m.content, ' '.repeat(11))}`);
        break;
      case 'assistant': {
        if (m.content.trim() !== '' || !m.toolCalls?.length) {
          lines.push(`${s.bold(s.green('assistant'))}  ${indent(m.content || '(empty)', ' '.repeat(11))}`);
        } else {
          lines.push(`${s.bold(s.green('assistant'))}  ${s.dim(`(calls ${plural(m.toolCalls.length, 'tool')})`)}`);
        }
        for (const call of m.toolCalls ?? []) {
          lines.push(
            `${' '.repeat(11)}${s.magenta('→')} ${s.bold(call.name)} ${s.dim(shortJson(call.arguments, width - call.name.length - 16))}`,
          );
        }
        break;
      }
      case 'tool': {
        const mark = m.isError ? s.red('✗') : s.green('←');
        const body = m.isError ? s.red(oneLine(m.content, width - 20)) : s.dim(shortJson(m.content, width - m.toolName.length - 16));
        lines.push(`${s.bold(s.yellow('tool'))}       ${mark} ${s.bold(m.toolName)} ${body}`);
        break;
      }
    }
  }
  return lines;
}

/** A Temporal worker log entry, as the CLI's worker prints it. */
export interface LogLine {
  level: string;
  message: string;
  timestampNanos: bigint;
  meta?: Record<string, unknown>;
}

/** One line per log entry: time, level, message, the run and activity it is about, the error's message (no stack). */
export function formatLogEntry(entry: LogLine, s: Style, width = 160): string {
  const time = formatTime(new Date(Number(entry.timestampNanos / 1_000_000n))).slice(11);
  const level = entry.level === 'ERROR' ? s.red(entry.level) : entry.level === 'WARN' ? s.yellow(entry.level) : s.dim(entry.level);
  const meta = entry.meta ?? {};
  const parts = [entry.message];
  if (typeof meta.workflowId === 'string') parts.push(`workflow ${meta.workflowId}`);
  if (typeof meta.activityType === 'string') parts.push(`activity ${meta.activityType}`);
  const error = meta.error ?? meta.failure;
  if (error instanceof Error) parts.push(error.message);
  else if (typeof error === 'string') parts.push(error);
  return `${s.dim(time)} ${level} ${oneLine(parts.join(' · '), width)}`;
}

// ---------------------------------------------------------------------------------------------
// keel schedule

/** What `keel schedule` formats: a schedule as `AgentSchedules` lists or describes it. */
export interface ScheduleRow {
  name: string;
  agent: string;
  kind: string;
  spec: { cron?: string; every?: string; timezone?: string };
  paused: boolean;
  note?: string;
  nextActionTimes: Date[];
}

/** `every 15m`, `cron 0 9 * * MON-FRI (UTC)`: a cron expression's times are UTC unless it names a zone. */
export function formatScheduleTiming(spec: ScheduleRow['spec']): string {
  const zone = spec.timezone ? ` (${spec.timezone})` : '';
  if (spec.cron !== undefined) return `cron ${spec.cron}${zone || (/^(CRON_)?TZ=/.test(spec.cron) ? '' : ' (UTC)')}`;
  if (spec.every !== undefined) return `every ${spec.every}${zone}`;
  return 'calendar (made outside keel: see the Temporal UI)';
}

function scheduleState(row: ScheduleRow, s: Style): string {
  return row.paused ? s.yellow('paused') : s.green('active');
}

export function formatScheduleList(rows: ScheduleRow[], s: Style): string[] {
  if (rows.length === 0) return [s.dim('No schedules. Create one with: keel schedule create <name> --agent <agent> --every 1h --prompt "..."')];
  return formatTable(
    ['NAME', 'AGENT', 'KIND', 'WHEN', 'STATE', 'NEXT RUN'],
    rows.map((r) => [
      r.name,
      r.agent,
      r.kind,
      formatScheduleTiming(r.spec),
      scheduleState(r, s),
      r.paused ? '-' : formatTime(r.nextActionTimes[0]),
    ]),
    s,
  );
}

/** `keel schedule describe`: the schedule, its next times and the runs it started (with their status when known). */
export function formatScheduleDescription(
  d: ScheduleRow & {
    prompt: string;
    taskQueue: string;
    overlap: string;
    actionsTaken: number;
    actionsSkipped: number;
    runningActions: unknown[];
    uiUrl: string;
    recentActions: { workflowId: string; takenAt: Date; running: boolean; status?: string }[];
  },
  s: Style,
  width = 100,
): string[] {
  const rows: [string, string][] = [
    ['schedule', s.bold(d.name)],
    ['agent', `${d.agent} ${s.dim(d.kind === 'monitor' ? '(a monitor each time)' : '(a plain run each time)')}`],
    ['prompt', oneLine(d.prompt, width - 12)],
    ['when', formatScheduleTiming(d.spec)],
    ['overlap', d.overlap],
    ['state', `${scheduleState(d, s)}${d.note ? s.dim(` · ${d.note}`) : ''}`],
    ['task queue', d.taskQueue],
    ['runs', `${d.actionsTaken} started · ${d.actionsSkipped} skipped (overlap) · ${d.runningActions.length} running`],
    ['next', d.paused ? s.dim('(paused)') : d.nextActionTimes.slice(0, 3).map(formatTime).join(', ') || '-'],
    ['ui', s.blue(d.uiUrl)],
  ];
  const keyWidth = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `${s.dim(k.padEnd(keyWidth))}  ${v}`);
  lines.push('', s.bold('Recent runs'));
  if (d.recentActions.length === 0) lines.push(s.dim('  none yet'));
  // Newest first, as `keel list` shows runs.
  for (const run of [...d.recentActions].reverse()) {
    const status = run.running ? 'running' : run.status;
    lines.push(`  ${formatTime(run.takenAt)}  ${run.workflowId}  ${status ? colorStatus(status, s) : s.dim('-')}`);
  }
  return lines;
}
