/**
 * The agent loop: one workflow per run. Each turn (src/workflows/turn.ts) is a model call and
 * the tool calls it asks for, all activities; the conversation and the event log are workflow
 * state, exposed by queries.
 */
import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ContinueAsNew,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { innermostError } from '../core/errors.js';
import { preview } from '../core/limits.js';
import { checkAgentRunInput } from '../core/schemas.js';
import { userMessage } from '../core/messages.js';
import type { AgentRunInput, AgentRunResult, RunStatus } from '../core/run.js';
import { zeroUsage } from '../core/usage.js';
import type { AgentActivities } from './activity-types.js';
import {
  agentSearchAttribute,
  statusQuery,
  statusSearchAttribute,
} from './api.js';
import type { Tripwire } from '../core/guardrails.js';
import { checkStart, sessionEnd } from './run-checks.js';
import { registerRunHandlers } from './run-handlers.js';
import { Run } from './run-state.js';
import { forwardEvents, reportPendingToParent } from './sub-agents.js';
import { RunBlocked } from './tool-gate.js';
import { runTurn } from './turn.js';

/** Continue as new past this many history events, well before Temporal's limits. */
const DEFAULT_CONTINUE_AS_NEW_EVENTS = 10_000;
/** ... or past this many bytes of history (Temporal's hard limit is 50 MB). */
const CONTINUE_AS_NEW_BYTES = 10 * 1024 * 1024;

const { resolveAgent } = proxyLocalActivities<AgentActivities>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 3 },
  summary: 'resolve agent',
});

export async function agentRun(input: AgentRunInput): Promise<AgentRunResult> {
  let run: Run | undefined;
  // Queries are answered from the first workflow task on, also while the agent is resolved.
  registerHandlers(input, () => run);
  try {
    checkInput(input);
    if (input.continued) {
      run = Run.resume(input.continued);
    } else {
      const spec = await resolveAgent({
        agent: input.agent,
        ...(input.context !== undefined && { context: input.context }),
        ...(input.overrides && { overrides: input.overrides }),
      });
      run = Run.start(spec, input.context);
      run.emit({ type: 'run.started', agent: spec.name, model: spec.model, input: preview(input.input) });
      let prompt: string;
      try {
        prompt = await checkStart(run, input.input);
      } catch (err) {
        if (err instanceof RunBlocked) return await finish(run, 'blocked', null, err.tripwire);
        throw err;
      }
      run.append([userMessage(prompt)]);
    }
    watchApprovals(run);
    if (input.parent) {
      run.parent = input.parent;
      reportPendingToParent(run, input.parent);
    }
    // A run started by a client that did not set the search attributes (for example the
    // `temporal` CLI) sets them itself, once.
    if (workflowInfo().typedSearchAttributes.get(statusSearchAttribute) !== 'running') {
      upsertSearchAttributes([
        { key: agentSearchAttribute, value: run.agent.name },
        { key: statusSearchAttribute, value: 'running' },
      ]);
    }
    return await loop(run, input);
  } catch (err) {
    // Continuing as new is how a long run goes on, not an end.
    if (err instanceof ContinueAsNew) throw err;
    // A cancelled run is cancelled, whatever its activities ended with while they stopped.
    const cancelled = isCancellation(err) || CancellationScope.current().consideredCancelled;
    const status = cancelled ? 'cancelled' : 'failed';
    if (run) {
      end(run, status, undefined, status === 'failed' ? innermostError(err).message : undefined);
      await run.background?.end();
      await sessionEnd(run, status);
    } else upsertSearchAttributes([{ key: statusSearchAttribute, value: status }]);
    if (!cancelled) throw asRunFailure(err);
    throw isCancellation(err) ? err : new CancelledFailure('The run was cancelled.', [], err instanceof Error ? err : undefined);
  }
}

async function loop(run: Run, input: AgentRunInput): Promise<AgentRunResult> {
  // The events a sub-agent's run has sent its parent so far.
  const forwarded = { seq: input.continued ? run.log.lastSeq : 0 };
  for (;;) {
    if (run.turns >= run.agent.maxTurns) return finish(run, 'max_turns', run.lastAnswer);
    if (shouldContinueAsNew(input)) {
      await condition(allHandlersFinished);
      run.emit({ type: 'run.continued', turns: run.turns });
      return await continueAsNew<typeof agentRun>({ ...input, continued: run.carry() });
    }
    // What the background agents reported since the last turn, read before the model answers.
    const reports = run.background?.takeBlock();
    if (reports) run.append([userMessage(reports)]);
    let outcome;
    try {
      outcome = await runTurn(run);
    } catch (err) {
      if (err instanceof RunBlocked) return finish(run, 'blocked', null, err.tripwire);
      throw err;
    }
    await forwardEvents(run, input.parent, forwarded);
    if (outcome.done) return finish(run, outcome.status, outcome.output, undefined, () => forwardEvents(run, input.parent, forwarded));
  }
}

/** The run's result: it completed, stopped at its turn limit, or a guardrail blocked it. */
async function finish(
  run: Run,
  status: AgentRunResult['status'],
  output: unknown,
  tripwire?: Tripwire,
  beforeEnd?: () => Promise<void>,
): Promise<AgentRunResult> {
  end(run, status, output, tripwire && `blocked by guardrail "${tripwire.guardrail}": ${tripwire.reason}`);
  await beforeEnd?.();
  await run.background?.end();
  await sessionEnd(run, status);
  return { status, output: output ?? null, usage: run.usage, turns: run.turns, agent: run.agent.name, ...(tripwire && { blocked: tripwire }) };
}

/** While calls wait for a person the run's status, its search attribute and the UI say so. */
function watchApprovals(run: Run): void {
  run.approvals.onWaiting = (waiting) => {
    run.status = waiting ? 'awaiting_approval' : 'running';
    upsertSearchAttributes([{ key: statusSearchAttribute, value: run.status }]);
    const pending = run.approvals.list();
    setCurrentDetails(
      waiting
        ? `turn ${run.turns}: awaiting approval of ${pending.map((p) => `${p.tool} (${p.callId})`).join(', ')}. Decide with: keel approve ${workflowInfo().workflowId} <call>`
        : `turn ${run.turns}: running ${run.agent.name}`,
    );
  };
}

/** Records the end of the run: its status (one search attribute upsert) and the last event. */
function end(run: Run, status: RunStatus, output?: unknown, error?: string): void {
  run.status = status;
  setCurrentDetails(`${status.replace('_', ' ')} after ${run.turns} ${run.turns === 1 ? 'turn' : 'turns'}`);
  upsertSearchAttributes([{ key: statusSearchAttribute, value: status }]);
  run.emit({
    type: 'run.finished',
    status,
    ...(output !== undefined && { output }),
    ...(error !== undefined && { error }),
  });
}

function registerHandlers(input: AgentRunInput, current: () => Run | undefined): void {
  setHandler(statusQuery, () => {
    const run = current();
    if (run) return run.state();
    const agent = typeof input?.agent === 'string' ? input.agent : '';
    return { agent, status: 'running', turns: 0, usage: zeroUsage(), messages: 0, lastSeq: 0 };
  });
  registerRunHandlers(current, () => current()?.turns ?? 0);
}

function checkInput(input: AgentRunInput): void {
  checkAgentRunInput(input, workflowInfo().continuedFromExecutionRunId !== undefined);
}

function shouldContinueAsNew(input: AgentRunInput): boolean {
  const info = workflowInfo();
  const limit = input.options?.continueAsNewAfterEvents ?? DEFAULT_CONTINUE_AS_NEW_EVENTS;
  return info.continueAsNewSuggested || info.historyLength >= limit || info.historySize >= CONTINUE_AS_NEW_BYTES;
}


/**
 * Surface an activity's failure as the run's own failure, keeping its type, so the run fails
 * with the error that explains it rather than with a generic "activity failed".
 */
function asRunFailure(err: unknown): unknown {
  const root = innermostError(err);
  if (root instanceof ApplicationFailure && root !== err) {
    return ApplicationFailure.create({
      message: root.message,
      type: root.type ?? undefined,
      nonRetryable: true,
      details: root.details ?? undefined,
      cause: err instanceof Error ? err : undefined,
    });
  }
  return err;
}
