/**
 * Background agents: a run starts other agents as monitors of their own (child workflows), goes
 * on, and hears back from them: their alerts and their ends arrive as reports, shown to the
 * model as a `[Background reports]` block at its next turn. The vocabulary and pure decisions.
 */
import type { ToolSpec } from './agent-spec.js';
import type { MonitorBudgets } from './monitor.js';

export const DEFAULT_MAX_CONCURRENT = 8;
export const DEFAULT_BACKGROUND_DEPTH = 2;
/** A spawned agent's budgets when the spawn gives none. */
export const DEFAULT_SPAWN_BUDGETS: MonitorBudgets = { maxTurns: 20 };

export const SPAWN_TOOL = 'spawn_agent';
export const LIST_TOOL = 'list_agents';
export const CHECK_TOOL = 'check_agent';
export const STOP_TOOL = 'stop_agent';
export const ALERT_TOOL = 'report_alert';
export const BACKGROUND_TOOLS = [SPAWN_TOOL, LIST_TOOL, CHECK_TOOL, STOP_TOOL];

/** What an agent's spec records of its background settings. */
export interface BackgroundSpec {
  /** The agent spawned agents run as (its tools are the catalog a spawn picks from). */
  agent: string;
  maxConcurrent: number;
  /** How deep background agents may nest (a spawn of a spawn is depth 2). */
  maxDepth: number;
  budgets: MonitorBudgets;
  /** When the run ends: cancel the agents it spawned (default), or let them run. */
  onParentEnd: 'cancel' | 'continue';
  /** Task queues a spawn may name (remote agents, served by other workers). */
  taskQueues: string[];
  /** The tools a spawn may pick from (the base agent's), when known where the spec was made. */
  catalog?: string[];
}

/** A spawned agent's link to the run that spawned it. */
export interface ParentLink {
  workflowId: string;
  name: string;
  depth: number;
  maxDepth: number;
}

export type ReportKind = 'alert' | 'completed' | 'failed' | 'stopped';

/** From a background agent to the run that spawned it. `seq` counts the agent's reports, from 1. */
export interface BackgroundReport {
  name: string;
  seq: number;
  kind: ReportKind;
  text: string;
  at: string;
}

export type ChildStatus = 'running' | 'completed' | 'failed' | 'stopped';

export interface BackgroundChild {
  name: string;
  workflowId: string;
  goal: string;
  status: ChildStatus;
  spawnedAt: string;
  taskQueue?: string;
  lastReport?: BackgroundReport;
}

export const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,39}$/;

export function backgroundTools(catalog: readonly string[]): ToolSpec[] {
  const obj = (properties: Record<string, unknown>, required: string[]) => ({ type: 'object', properties, required, additionalProperties: false });
  return [
    {
      name: SPAWN_TOOL,
      description:
        'Start an agent in the background that works toward a goal on its own, turn after turn, sleeping between turns. ' +
        'It reports back (alerts, and when it ends) at your next turn. Tools it may have: ' +
        (catalog.length ? catalog.join(', ') : 'none') +
        '.',
      parameters: obj(
        {
          name: { type: 'string', description: 'A unique short name: lowercase letters, digits, - and _.' },
          goal: { type: 'string', description: 'What it should achieve or watch for, self-contained.' },
          instructions: { type: 'string', description: 'Its system prompt (default: the base agent\'s).' },
          tools: { type: 'array', items: { type: 'string' }, description: 'Names of the tools it may use (default: all it may have).' },
          budgets: {
            type: 'object',
            properties: { maxTurns: { type: 'integer', minimum: 1 }, wallclock: { type: 'string' } },
            additionalProperties: false,
          },
          schedule: { type: 'string', description: 'When to take its first turn: an ISO 8601 time or a delay such as "10m" (default: now).' },
          taskQueue: { type: 'string', description: 'Run it on the workers of this task queue (a remote agent).' },
        },
        ['name', 'goal'],
      ),
      readOnly: false,
    },
    { name: LIST_TOOL, description: 'List the agents you started in the background, with their status.', parameters: obj({}, []), readOnly: true },
    {
      name: CHECK_TOOL,
      description: 'The status and last report of one background agent.',
      parameters: obj({ name: { type: 'string' } }, ['name']),
      readOnly: true,
    },
    {
      name: STOP_TOOL,
      description: 'Stop a background agent; it reports that it stopped.',
      parameters: obj({ name: { type: 'string' }, reason: { type: 'string' } }, ['name']),
      readOnly: false,
    },
  ] as ToolSpec[];
}

export function alertTool(): ToolSpec {
  return {
    name: ALERT_TOOL,
    description: 'Tell the agent that started you something it should know now (it hears it at its next turn, and is woken if asleep).',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    readOnly: false,
  } as ToolSpec;
}

/** The block the model reads at its next turn. */
export function reportsBlock(reports: readonly BackgroundReport[]): string {
  const lines = reports.map((r) => `- ${r.name} (${r.kind === 'alert' ? 'alert' : r.kind}): ${r.text}`);
  return `[Background reports]\n${lines.join('\n')}`;
}
