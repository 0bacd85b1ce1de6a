/** The agent's stopWhen conditions, decided in the workflow from what the spec recorded. */
import type { StopCondition } from './agent-spec.js';
import type { ToolResultMessage } from './messages.js';
import type { Usage } from './usage.js';

export interface TurnFacts {
  turn: number;
  usage: Usage;
  /** The turn's tool results, when it ran tools. */
  results?: ToolResultMessage[];
}

/** The first condition that holds, described for the run's event; undefined when none does. */
export function stopConditionMet(conditions: StopCondition[] | undefined, facts: TurnFacts): string | undefined {
  for (const c of conditions ?? []) {
    if ('toolCalled' in c && facts.results?.some((r) => r.toolName === c.toolCalled && !r.isError)) return `toolCalled ${c.toolCalled}`;
    if ('turns' in c && facts.turn >= c.turns) return `turns ${c.turns}`;
    if ('totalTokens' in c && facts.usage.inputTokens + facts.usage.outputTokens >= c.totalTokens) return `totalTokens ${c.totalTokens}`;
  }
  return undefined;
}

/** A clear message for a condition that is not one keel knows; undefined when it is. */
export function stopConditionProblem(c: unknown): string | undefined {
  const known = 'use { toolCalled: "<tool>" }, { turns: <n> } or { totalTokens: <n> }';
  if (typeof c !== 'object' || c === null || Array.isArray(c)) return `a stop condition must be an object: ${known}`;
  const keys = Object.keys(c);
  if (keys.length !== 1) return `a stop condition has exactly one key: ${known}`;
  const [key] = keys;
  const value = (c as Record<string, unknown>)[key!];
  if (key === 'toolCalled') return typeof value === 'string' && value !== '' ? undefined : 'toolCalled names a tool';
  if (key === 'turns' || key === 'totalTokens') {
    return Number.isInteger(value) && (value as number) > 0 ? undefined : `${key} must be a whole number above 0`;
  }
  return `unknown stop condition "${key}": ${known}`;
}
