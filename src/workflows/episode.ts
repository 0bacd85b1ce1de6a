/**
 * An episode: turns until the model answers, within limits. Every driver runs its turns through
 * here (a plain run's whole life is one episode; each monitor turn is one). Around each turn the
 * run's features speak (background reports before it, events forwarded after it); after a
 * turn's tool calls the agent's `stopWhen` conditions may end the episode; when the model
 * answers without tool calls, the agent's `onTurnEnd` function (an activity, recorded) may give
 * input that continues it. Both are bounded by the turn limit.
 */
import { userMessage } from '../core/messages.js';
import { preview } from '../core/limits.js';
import { stopConditionMet } from '../core/stop-when.js';
import type { Run } from './run-state.js';
import { turnEndActivity } from './scheduling.js';
import { RunBlocked } from './tool-gate.js';
import { runTurn } from './turn.js';

export type EpisodeEnd =
  /** `stopCondition`: a stopWhen condition ended it, naming which. */
  | { status: 'completed'; output: unknown; stopCondition?: string }
  | { status: 'max_turns'; output: unknown }
  | { status: 'blocked'; blocked: RunBlocked };

export interface EpisodeLimits {
  /** Whether another turn may start (the turn limit, a driver's own). */
  mayTurn(): boolean;
  /** Before each turn (a plain run continues as new here when its history is due). */
  beforeTurn?(): Promise<void>;
  /** After each turn: true ends the episode as completed (a monitor's report_done). */
  afterTurn?(): boolean;
}

export async function runEpisode(run: Run, limits: EpisodeLimits): Promise<EpisodeEnd> {
  for (;;) {
    if (!limits.mayTurn()) return { status: 'max_turns', output: run.lastAnswer };
    await limits.beforeTurn?.();
    for (const f of run.composed) {
      const text = f.beforeTurn?.();
      if (text) run.append([userMessage(text)]);
    }
    let outcome;
    try {
      outcome = await runTurn(run);
    } catch (err) {
      if (err instanceof RunBlocked) return { status: 'blocked', blocked: err };
      throw err;
    }
    for (const f of run.composed) await f.afterTurn?.();
    if (limits.afterTurn?.()) return { status: 'completed', output: run.lastAnswer };
    if (outcome.done) {
      if (outcome.answered && run.agent.continuesOnTurnEnd && limits.mayTurn()) {
        const input = await continuation(run, outcome.output);
        if (input !== undefined) continue;
      }
      return { status: 'completed', output: outcome.output };
    }
    const met = stopConditionMet(run.agent.stopWhen, { turn: run.turns, usage: run.usage, results: outcome.results });
    if (met) {
      run.emit({ type: 'run.stop_condition', turn: run.turns, condition: met });
      return { status: 'completed', output: run.lastAnswer, stopCondition: met };
    }
  }
}

/** The agent's onTurnEnd, on the worker: input that continues the loop, recorded as a user message. */
async function continuation(run: Run, answer: unknown): Promise<string | undefined> {
  const { input, stateChanges } = await turnEndActivity().turnEnd({
    agent: run.agent.name,
    spec: run.specHash,
    turn: run.turns,
    answer: typeof answer === 'string' ? answer : JSON.stringify(answer),
    ...(run.context !== undefined && { context: run.context }),
    ...run.state.ref(),
  });
  run.changeState(stateChanges, { turn: run.turns });
  if (input === undefined || input === '') return undefined;
  run.emit({ type: 'turn.continued', turn: run.turns, input: preview(input) });
  run.append([userMessage(input)]);
  return input;
}
