import { ApplicationFailure, Context } from '@temporalio/activity';
import { ErrorTypes } from '../core/errors.js';
import { StateView } from '../core/state.js';
import type { TurnEndInput, TurnEndResult } from '../workflows/activity-types.js';
import type { AgentRegistry } from './registry.js';
import { readState, type StateReaderDeps } from './state-reader.js';

/** The agent's onTurnEnd, on the worker: input that continues the loop, or nothing; and what it wrote to the state. */
export async function turnEnd(registry: AgentRegistry, input: TurnEndInput, deps: StateReaderDeps): Promise<TurnEndResult> {
  const agent = registry.serving(input.agent);
  if (!agent.onTurnEnd) return {};
  const state = new StateView(await readState(deps, input.state));
  const answer = await agent.onTurnEnd({
    agent: input.agent,
    turn: input.turn,
    answer: input.answer,
    context: input.context,
    state,
    workflowId: Context.current().info.workflowExecution?.workflowId ?? '',
  });
  const changes = state.changes();
  const written = changes ? { stateChanges: changes } : {};
  if (answer === undefined || answer === null || answer === '') return written;
  if (typeof answer !== 'string') {
    throw ApplicationFailure.create({
      type: ErrorTypes.InvalidInput,
      nonRetryable: true,
      message: `The onTurnEnd function of agent "${input.agent}" must return a string (input that continues the run) or nothing, got ${typeof answer}.`,
    });
  }
  return { input: answer, ...written };
}
