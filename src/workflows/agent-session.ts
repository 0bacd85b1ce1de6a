/**
 * A session: a conversation of many messages in one workflow, the third driver on the shared
 * lifecycle (lifecycle.ts). Each message is one run: an episode of the one `Run` the session
 * holds (episode.ts), so the agent in charge, the recorded specs, the approvals' remembered rules
 * and the features (handoffs, sub-agents, background agents) persist from message to message, and
 * each message is stored in history once. Runs are serialized: the Updates (session-state.ts)
 * refuse a message while one runs. Between messages the session waits on a condition, costing
 * nothing; it continues as new before Temporal's limits, carrying its state and the model's view.
 */
import { CancellationScope, ContinueAsNew, condition, continueAsNew, setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { checkSessionInput } from '../core/boundary.js';
import { innermostError } from '../core/errors.js';
import type { JsonValue } from '../core/json.js';
import { preview } from '../core/limits.js';
import { userMessage } from '../core/messages.js';
import {
  DEFAULT_SESSION_CONTEXT_TOKENS,
  SESSION_UPDATES_PER_EXECUTION,
  sessionViewStart,
  type SessionEndReason,
  type SessionInput,
  type SessionResult,
  type SessionRunResult,
  type SessionStartSource,
} from '../core/session.js';
import { subtractUsage } from '../core/usage.js';
import { statusSearchAttribute } from './api.js';
import { runEpisode, type EpisodeEnd } from './episode.js';
import { Handoffs } from './handoff.js';
import { Lifecycle } from './lifecycle.js';
import { checkMessage, sessionEnd, sessionStart } from './run-checks.js';
import type { Run } from './run-state.js';
import { conversationActivity } from './scheduling.js';
import { Session, type SessionRun } from './session-state.js';
import { RunBlocked } from './tool-gate.js';

export async function agentSession(input: SessionInput): Promise<SessionResult> {
  const session = new Session(input);
  const life = new Lifecycle({
    start: { agent: input?.agent, prompt: '', ...(session.state && { state: session.state }) },
    continued: input?.continued?.run,
    stream: input?.options?.stream,
    needsSearchAttributes: (status) => status === undefined,
    onWaiting: (run, waiting) => {
      upsertSearchAttributes([{ key: statusSearchAttribute, value: waiting ? 'awaiting_approval' : 'running' }]);
      const pending = run.approvals.list();
      setCurrentDetails(
        waiting
          ? `${session.current?.id ?? 'a run'}: awaiting approval of ${pending.map((p) => `${p.tool} (${p.callId})`).join(', ')}. Decide with: keel approve ${workflowInfo().workflowId} <call>, or discard the run`
          : `${session.current?.id ?? 'a run'}: running ${run.agent.name}`,
      );
    },
    onEnd: (status) => upsertSearchAttributes([{ key: statusSearchAttribute, value: status }]),
    // A session runs its checks per message (input guardrails, UserPromptSubmit) and its
    // SessionStart and SessionEnd hooks with their sources, itself.
    runChecks: () => false,
  });
  session.register(() => life.run);
  try {
    checkSessionInput(input, workflowInfo().continuedFromExecutionRunId !== undefined);
    const { run } = await life.open();
    if (!input.continued) await begin(session, run, input);
    for (;;) {
      idle(session, run);
      await condition(() => session.work !== undefined);
      const work = session.work!;
      if (work.kind === 'end') {
        session.work = undefined;
        await ended(session, run, work.reason);
        // A cleared session is kept: a message to it later resumes it (SessionStart "resume").
        if (work.reason === 'clear') continue;
        return await finishSession(session, life, run, work.reason);
      }
      if (work.kind === 'rewind') {
        // The kept messages are in earlier executions: the next one starts from them.
        session.continuing = true;
        await life.continueAsNew(run, () => continueAsNew<typeof agentSession>({ ...input, origin: undefined, continued: session.carry(run, false) }));
      }
      session.work = undefined;
      const r = session.current!;
      if (work.kind === 'run') await message(session, run, r);
      else {
        if (r.carried) {
          r.firstTurn = run.turns;
          r.startUsage = run.usage;
          r.carried = undefined;
        }
        await episode(session, run, r);
      }
      // The stream's polls are Updates too: together they stay within what Temporal allows an execution.
      const updates = session.totalUpdates - (input.continued?.updates ?? 0) + (life.stream?.polls ?? 0);
      const due = updates >= (input.options?.continueAsNewAfterUpdates ?? SESSION_UPDATES_PER_EXECUTION);
      if (life.continueAsNewDue({ afterEvents: input.options?.continueAsNewAfterEvents, driver: due })) {
        session.continuing = true;
        await life.continueAsNew(run, () => continueAsNew<typeof agentSession>({ ...input, origin: undefined, continued: session.carry(run, true) }));
      }
    }
  } catch (err) {
    // A session cancelled or failed ends too: its SessionEnd hooks hear "other".
    if (life.run && !(err instanceof ContinueAsNew)) await ended(session, life.run, 'other');
    return await life.fail(err);
  }
}

/** A new session: a fork's conversation copied, then the SessionStart hooks with the session's source. */
async function begin(session: Session, run: Run, input: SessionInput): Promise<void> {
  const origin = input.origin;
  let source: SessionStartSource = 'startup';
  if (origin?.kind === 'fork') {
    source = 'fork';
    await copyConversation(run, origin.workflowId, origin.runId, origin.messages ?? 0);
  } else if (origin?.kind === 'clear') source = 'clear';
  session.startContext = await sessionStart(run, source);
  run.emit({ type: 'session.started', source, ...(origin && { from: origin.workflowId }), ...(origin?.kind === 'fork' && { messages: run.messageCount }) });
}

/**
 * A fork's conversation, read from its source in pages of at most about 1 MB each (activity
 * results: Temporal refuses a payload over 2 MB), so a session of many MB forks too; each message
 * is stored once in the fork's history, in the page that brought it.
 */
async function copyConversation(run: Run, workflowId: string, runId: string | undefined, total: number): Promise<void> {
  while (run.messageCount < total) {
    const from = run.messageCount;
    const page = await conversationActivity(`copy messages ${from}.. of ${total} from ${workflowId}`).readConversation({
      workflowId,
      ...(runId && { runId }),
      from,
      to: total,
    });
    run.append(page.messages);
  }
}

function idle(session: Session, run: Run): void {
  const last = session.last;
  if (session.current?.status === 'failed') setCurrentDetails(`${session.current.id} failed: ${preview(session.current.result?.error ?? '', 200)}. Resume it, discard it, or send a message`);
  else setCurrentDetails(`idle after ${session.runs} ${session.runs === 1 ? 'message' : 'messages'}${last ? ` (${last.run}: ${last.status})` : ''}; ${run.agent.name} answers the next`);
}

/** A message: its checks, its checkpoint, then its turns. */
async function message(session: Session, run: Run, r: SessionRun): Promise<void> {
  r.started = true;
  r.firstTurn = run.turns;
  r.startUsage = run.usage;
  // Each message is a new run: its own output attempts, Stop-hook state and handoff limit.
  run.outputAttempts = 0;
  run.stopHookActive = false;
  run.partialAnswer = '';
  run.lastAnswer = null;
  run.feature(Handoffs)?.newRun();
  let context = session.startContext;
  session.startContext = undefined;
  if (session.ended === 'clear') {
    // A cleared session that takes a message again is resumed, as Claude Code's --resume.
    session.ended = undefined;
    context = await sessionStart(run, 'resume');
    run.emit({ type: 'session.started', source: 'resume' });
  }
  let text: string;
  try {
    text = await checkMessage(run, r.message, context);
  } catch (err) {
    if (!(err instanceof RunBlocked)) throw err;
    // SessionStart's context goes with the first message that reaches the conversation.
    session.startContext = context;
    const error = `blocked by guardrail "${err.tripwire.guardrail}": ${err.tripwire.reason}`;
    run.emit({ type: 'session.run_started', run: r.id, agent: run.agent.name, message: preview(r.message) });
    finished(session, run, r, { status: 'blocked', error });
    return;
  }
  if (r.discardRequested) return session.giveUp(run, r, 'discarded');
  const checkpoint = session.addCheckpoint(run, r, run.messageCount);
  run.append([userMessage(text)]);
  run.emit({ type: 'session.run_started', run: r.id, checkpoint: checkpoint.id, agent: run.agent.name, message: preview(r.message) });
  await episode(session, run, r);
}

/** The run's turns, in a scope `discard` cancels; a failure leaves it to resume or discard. */
async function episode(session: Session, run: Run, r: SessionRun): Promise<void> {
  // Discarded between its resume and its start.
  if (r.discardRequested) return session.giveUp(run, r, 'discarded');
  const scope = new CancellationScope();
  r.scope = scope;
  setCurrentDetails(`${r.id}: running ${run.agent.name}`);
  let end: EpisodeEnd;
  try {
    end = await scope.run(() => runEpisode(run, { mayTurn: () => run.turns - r.firstTurn < run.agent.maxTurns }));
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    if (r.discardRequested) return session.giveUp(run, r, 'discarded');
    // The session itself was cancelled: that is its end, not the run's failure.
    if (CancellationScope.current().consideredCancelled) throw err;
    finished(session, run, r, { status: 'failed', error: innermostError(err).message });
    return;
  } finally {
    r.scope = undefined;
  }
  if (end.status === 'blocked') finished(session, run, r, { status: 'blocked', error: end.blocked.message });
  else finished(session, run, r, { status: end.status, output: end.output });
}

/** Records a run's end: its result, its share of the model's view, the event. */
function finished(session: Session, run: Run, r: SessionRun, end: { status: SessionRunResult['status']; output?: unknown; error?: string }): void {
  const result: SessionRunResult = {
    run: r.id,
    status: end.status,
    ...(r.checkpoint && { checkpoint: r.checkpoint }),
    agent: run.agent.name,
    turns: run.turns - r.firstTurn,
    usage: subtractUsage(run.usage, r.startUsage),
    ...answerOf(run, end.output),
    ...(end.error !== undefined && { error: end.error }),
  };
  session.settle(r, result);
  const cp = session.checkpoints.find((c) => c.id === r.checkpoint);
  if (cp) cp.chars = run.charsSince(cp.index);
  const budgetChars = (session.input.options?.contextTokens ?? DEFAULT_SESSION_CONTEXT_TOKENS) * 4;
  const from = sessionViewStart(session.checkpoints, budgetChars);
  run.viewFrom = from > 1 ? from : 0;
  run.emit({ type: 'session.run_finished', run: r.id, status: end.status, ...(end.error !== undefined && { error: preview(end.error, 500) }) });
}

/**
 * Where the answer is: a text answer is the last assistant message (stored once, there: the
 * result names its index); a structured output, or text that is not one message (an answer cut
 * off and continued), is the result's `output`.
 */
function answerOf(run: Run, output: unknown): Pick<SessionRunResult, 'answer' | 'output'> {
  if (output === undefined || output === null) return {};
  const last = run.messageCount - 1;
  const message = last >= run.firstMessage ? run.transcriptPage({ from: last, to: last + 1 }).messages[0] : undefined;
  if (typeof output === 'string' && message?.role === 'assistant' && message.content === output) return { answer: last };
  return { output: output as JsonValue };
}

/** SessionEnd hooks with the reason, once per time the session ends (a cleared session that is resumed can end again). */
async function ended(session: Session, run: Run, reason: SessionEndReason): Promise<void> {
  if (session.ended !== undefined) return;
  session.ended = reason;
  await sessionEnd(run, 'completed', reason);
  run.emit({ type: 'session.ended', reason });
}

async function finishSession(session: Session, life: Lifecycle, run: Run, reason: SessionEndReason): Promise<SessionResult> {
  await life.close(run, 'completed', undefined);
  return { kind: 'session', status: 'completed', reason, output: null, agent: run.agent.name, runs: session.runs, messages: run.messageCount, turns: run.turns, usage: run.usage };
}
