/**
 * Asking a person, inline, about the calls a run waits for: allow, deny (with a reason the
 * model reads), edit the arguments, or allow always (remembered for the rest of the run).
 * It reads and writes the streams it is given (a terminal for `keel run` and `keel demo`,
 * PassThrough streams in the tests) and decides through the run's `approve` Update.
 */
import { createInterface } from 'node:readline/promises';
import type { ApprovalDecision, ApprovalReceipt, PendingApproval } from '../../core/approval.js';
import { oneLine } from '../../core/text.js';
import { createStyle, plural, shortJson, type Style } from './format.js';

/** Where decisions go: a RunHandle is one. */
export interface ApprovalTarget {
  readonly workflowId: string;
  /** Sends a decision as the `approve` Update; throws ApprovalRejectedError when the run refuses it. */
  decide(decision: ApprovalDecision): Promise<ApprovalReceipt>;
  /** The calls waiting now. */
  pending(): Promise<PendingApproval[]>;
}

export interface PromptStreams {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Whether `input` is a terminal (line editing, echo, Ctrl-C). Default: `input.isTTY`. */
  terminal?: boolean;
}

/** What became of one call. */
export type PromptOutcome =
  | { callId: string; kind: 'decided'; decision: ApprovalDecision; receipt: ApprovalReceipt }
  /** Decided elsewhere meanwhile (or it stopped waiting): the run said so. */
  | { callId: string; kind: 'gone'; message: string }
  /** The input ended before an answer: the call still waits for someone else. */
  | { callId: string; kind: 'unanswered' };

/** The person pressed Ctrl-C at a prompt. */
export class PromptInterrupted extends Error {
  constructor() {
    super('Interrupted at the approval prompt.');
    this.name = 'PromptInterrupted';
  }
}

export const CHOICES = '[a]llow, [d]eny, [e]dit, allow [A]lways (remember)';

/**
 * Asks about each call in turn and sends each answer. Returns what became of every call; throws
 * PromptInterrupted on Ctrl-C, and whatever else deciding throws (a lost connection).
 */
export async function promptForApprovals(
  calls: PendingApproval[],
  target: ApprovalTarget,
  streams: PromptStreams,
  options: { style?: Style; width?: number } = {},
): Promise<PromptOutcome[]> {
  const s = options.style ?? createStyle(false);
  const width = options.width ?? 100;
  const terminal = streams.terminal ?? (streams.input as { isTTY?: boolean }).isTTY === true;
  const rl = createInterface({ input: streams.input, output: streams.output, terminal });
  // Lines are read through the iterator, which queues them: an answer typed (or written by a
  // test) before its prompt shows is kept, where rl.question() would drop it.
  const lines = rl[Symbol.asyncIterator]();
  let interrupt: () => void = () => undefined;
  const interrupted = new Promise<never>((_, reject) => {
    interrupt = () => reject(new PromptInterrupted());
  });
  interrupted.catch(() => undefined);
  rl.on('SIGINT', () => interrupt());
  let ended = false;
  const write = (text: string) => streams.output.write(`${text}\n`);
  /** The next line after the prompt, or undefined once the input has ended. */
  const ask = async (prompt: string): Promise<string | undefined> => {
    if (ended) return undefined;
    rl.setPrompt(prompt);
    rl.prompt();
    const next = await Promise.race([lines.next(), interrupted]);
    if (next.done) {
      ended = true;
      streams.output.write('\n');
      return undefined;
    }
    return next.value;
  };

  const outcomes: PromptOutcome[] = [];
  try {
    for (const [i, call] of calls.entries()) {
      write('');
      const count = calls.length > 1 ? ` (${i + 1} of ${calls.length})` : '';
      write(`${s.yellow('?')} ${s.bold(`Allow ${call.tool}?`)}${s.dim(`${count} · call ${call.callId} · turn ${call.turn} · run ${target.workflowId}`)}`);
      write(`  ${s.dim('arguments')}  ${shortJson(JSON.stringify(call.arguments), Math.max(40, width - 13))}`);
      write(`  ${s.dim('asked by ')}  ${call.stage}: ${oneLine(call.reason, Math.max(20, width - 15 - call.stage.length))}`);
      outcomes.push(await decideOne(call, target, ask, write, s));
      if (ended) {
        // Nobody is left to answer: the rest wait too.
        for (const rest of calls.slice(i + 1)) outcomes.push({ callId: rest.callId, kind: 'unanswered' });
        break;
      }
    }
  } finally {
    rl.close();
  }
  return outcomes;
}

async function decideOne(
  call: PendingApproval,
  target: ApprovalTarget,
  ask: (prompt: string) => Promise<string | undefined>,
  write: (text: string) => void,
  s: Style,
): Promise<PromptOutcome> {
  const { callId } = call;
  for (;;) {
    const answer = await ask(`  ${CHOICES} > `);
    if (answer === undefined) return { callId, kind: 'unanswered' };
    const choice = parseChoice(answer);
    let decision: ApprovalDecision;
    switch (choice) {
      case 'allow':
        decision = { callId, decision: 'allow' };
        break;
      case 'always':
        decision = { callId, decision: 'allow', remember: true };
        break;
      case 'deny': {
        const reason = await ask('  Why? The model reads it (Enter for no reason) > ');
        if (reason === undefined) return { callId, kind: 'unanswered' };
        decision = { callId, decision: 'deny', ...(reason.trim() !== '' && { reason: reason.trim() }) };
        break;
      }
      case 'edit': {
        const edited = await editArguments(call, target, ask, write, s);
        if (edited === 'back') continue;
        return edited;
      }
      default:
        write(s.yellow(`  Answer a (allow), d (deny), e (edit the arguments) or A (allow always).`));
        continue;
    }
    const sent = await send(decision, target, write, s);
    if (sent === 'refused') continue;
    return sent;
  }
}

/** Asks for edited arguments until they parse as a JSON object and the run takes them; 'back' returns to the choices. */
async function editArguments(
  call: PendingApproval,
  target: ApprovalTarget,
  ask: (prompt: string) => Promise<string | undefined>,
  write: (text: string) => void,
  s: Style,
): Promise<PromptOutcome | 'back'> {
  write(s.dim(`  Now: ${JSON.stringify(call.arguments)}`));
  for (;;) {
    const text = await ask('  Arguments as a JSON object (Enter to go back) > ');
    if (text === undefined) return { callId: call.callId, kind: 'unanswered' };
    if (text.trim() === '') return 'back';
    const parsed = parseJsonObject(text);
    if (typeof parsed === 'string') {
      write(s.red(`  ${parsed} Try again.`));
      continue;
    }
    const sent = await send({ callId: call.callId, decision: 'allow', arguments: parsed }, target, write, s);
    if (sent === 'refused') continue;
    return sent;
  }
}

/** Sends a decision; a refusal is shown, then the call is asked about again if it still waits. */
async function send(
  decision: ApprovalDecision,
  target: ApprovalTarget,
  write: (text: string) => void,
  s: Style,
): Promise<PromptOutcome | 'refused'> {
  let receipt: ApprovalReceipt;
  try {
    receipt = await target.decide(decision);
  } catch (err) {
    if ((err as Error)?.name !== 'ApprovalRejectedError') throw err;
    const message = (err as Error).message;
    write(s.red(`  ✗ The run refused it: ${message}`));
    const still = (await target.pending()).some((p) => p.callId === decision.callId);
    if (!still) return { callId: decision.callId, kind: 'gone', message };
    return 'refused';
  }
  const what =
    decision.decision === 'deny'
      ? s.red('denied')
      : `${s.green('allowed')}${decision.arguments ? ' with the edited arguments' : ''}${decision.remember ? ' (and calls like it, for the rest of the run)' : ''}`;
  const rest = receipt.pending > 0 ? `; ${plural(receipt.pending, 'other call')} still ${receipt.pending === 1 ? 'waits' : 'wait'}` : '';
  write(`  ${decision.decision === 'deny' ? s.red('✗') : s.green('✓')} ${what}${s.dim(rest)}`);
  return { callId: decision.callId, kind: 'decided', decision, receipt };
}

export type Choice = 'allow' | 'deny' | 'edit' | 'always';

/** a, d, e, A (case matters: A is "always"), or the words. */
export function parseChoice(answer: string): Choice | undefined {
  const text = answer.trim();
  if (text === 'A') return 'always';
  switch (text.toLowerCase()) {
    case 'a':
    case 'allow':
    case 'y':
    case 'yes':
      return 'allow';
    case 'always':
    case 'allow always':
      return 'always';
    case 'd':
    case 'deny':
    case 'n':
    case 'no':
      return 'deny';
    case 'e':
    case 'edit':
      return 'edit';
    default:
      return undefined;
  }
}

/** The text as a JSON object, or a sentence saying why it is not one. */
export function parseJsonObject(text: string): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return `That is not JSON (${(err as Error).message}).`;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `That is JSON, but not an object: give the arguments as {"name": value, ...}.`;
  }
  return value as Record<string, unknown>;
}
