import { ApplicationFailure, Context } from '@temporalio/activity';
import { ErrorTypes } from '../core/errors.js';
import type { TurnEndInput, TurnEndResult } from '../workflows/activity-types.js';
import type { AgentRegistry } from './registry.js';

/** The agent's onTurnEnd, on the worker: input that continues the loop, or nothing. */
export async function turnEnd(registry: AgentRegistry, input: TurnEndInput): Promise<TurnEndResult> {
  const agent = registry.serving(input.agent);
  if (!agent.onTurnEnd) return {};
  const answer = await agent.onTurnEnd({
    agent: input.agent,
    turn: input.turn,
    answer: input.answer,
    context: input.context,
    workflowId: Context.current().info.workflowExecution?.workflowId ?? '',
  });
  if (answer === undefined || answer === null || answer === '') return {};
  if (typeof answer !== 'string') {
    throw ApplicationFailure.create({
      type: ErrorTypes.InvalidInput,
      nonRetryable: true,
      message: `The onTurnEnd function of agent "${input.agent}" must return a string (input that continues the run) or nothing, got ${typeof answer}.`,
    });
  }
  return { input: answer };
}
