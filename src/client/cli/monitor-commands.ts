/**
 * The `keel` commands for monitors: start one, talk to it (inject, wake, pause, resume, stop).
 * `keel status` shows a monitor's phase, next wake and budgets used.
 */
import { readFileSync } from 'node:fs';
import type { MonitorBudgets, MonitorState, PriceTable } from '../../core/monitor.js';
import { AgentClient } from '../agent-client.js';
import { loadConnectConfig } from '../connection.js';
import { CliError, uiUrlFor, type GlobalOptions } from './common.js';
import { colorEnabled, createStyle } from './format.js';

const out = (line = '') => process.stdout.write(`${line}\n`);

async function withClient<T>(globals: GlobalOptions, taskQueue: string | undefined, fn: (client: AgentClient) => Promise<T>): Promise<T> {
  const settings = {
    ...(globals.address && { address: globals.address }),
    ...(globals.namespace && { namespace: globals.namespace }),
    ...(globals.profile && { profile: globals.profile }),
  };
  const address = loadConnectConfig(settings).connectionOptions.address ?? 'localhost:7233';
  const client = await AgentClient.connect({ ...settings, uiUrl: uiUrlFor(address, globals.uiUrl), ...(taskQueue && { taskQueue }) });
  try {
    return await fn(client);
  } finally {
    await client.close().catch(() => undefined);
  }
}

export interface MonitorStartOptions {
  goal: string;
  id?: string;
  maxTurns?: number;
  maxInputTokens?: number;
  maxOutputTokens?: number;
  maxCost?: number;
  wallclock?: string;
  turnTimeout?: string;
  prices?: string;
  json?: boolean;
  taskQueue?: string;
}

export async function monitorStartCommand(agent: string, options: MonitorStartOptions, globals: GlobalOptions): Promise<number> {
  const budgets: MonitorBudgets = {
    ...(options.maxTurns !== undefined && { maxTurns: options.maxTurns }),
    ...(options.maxInputTokens !== undefined && { maxInputTokens: options.maxInputTokens }),
    ...(options.maxOutputTokens !== undefined && { maxOutputTokens: options.maxOutputTokens }),
    ...(options.maxCost !== undefined && { maxCostUsd: options.maxCost }),
    ...(options.wallclock !== undefined && { wallclock: options.wallclock }),
    ...(options.turnTimeout !== undefined && { turnTimeout: options.turnTimeout }),
  };
  const prices = options.prices ? readPrices(options.prices) : undefined;
  return withClient(globals, options.taskQueue, async (client) => {
    const monitor = await client.startMonitor(agent, options.goal, {
      ...(options.id && { workflowId: options.id }),
      budgets,
      ...(prices && { options: { prices } }),
    });
    if (options.json) {
      out(JSON.stringify({ workflowId: monitor.workflowId, uiUrl: monitor.uiUrl }));
      return 0;
    }
    const s = createStyle(colorEnabled(process.stdout));
    out(`${s.bold('monitor')} ${monitor.workflowId} ${s.dim(`· ${agent}`)}`);
    out(`${s.dim('Temporal UI:')} ${s.blue(monitor.uiUrl)}`);
    out(s.dim(`Talk to it: keel status ${monitor.workflowId} · keel inject ${monitor.workflowId} "..." · keel wake|pause|resume|stop ${monitor.workflowId}`));
    return 0;
  });
}

/** A price table file: `{ "openai:gpt-4.1": { "input": 2, "output": 8 } }`, US dollars per million tokens. */
function readPrices(path: string): PriceTable {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new CliError(`Cannot read the price table ${path}: ${(err as Error).message}`);
  }
  const ok =
    typeof value === 'object' &&
    value !== null &&
    Object.values(value).every(
      (p) => typeof p === 'object' && p !== null && typeof (p as { input?: unknown }).input === 'number' && typeof (p as { output?: unknown }).output === 'number',
    );
  if (!ok) {
    throw new CliError(`${path} is not a price table: expected {"provider:model": {"input": <USD per million tokens>, "output": <USD per million tokens>}, ...}.`);
  }
  return value as PriceTable;
}

export type MonitorAction = 'inject' | 'wake' | 'pause' | 'resume' | 'stop';

export async function monitorActionCommand(action: MonitorAction, workflowId: string, message: string | undefined, globals: GlobalOptions): Promise<number> {
  return withClient(globals, undefined, async (client) => {
    const monitor = client.getMonitor(workflowId);
    let summary;
    try {
      summary = await monitor.run.describe();
    } catch (err) {
      if ((err as Error)?.name === 'WorkflowNotFoundError') throw new CliError(`No monitor with workflow ID "${workflowId}" (list runs with: keel list).`);
      throw err;
    }
    if (summary.kind !== 'monitor') throw new CliError(`${workflowId} is a plain run, not a monitor: only monitors take ${action}.`);
    if (!['running', 'sleeping', 'paused'].includes(summary.status)) throw new CliError(`Monitor ${workflowId} has ended (${summary.status}).`);
    switch (action) {
      case 'inject': {
        if (!message || message.trim() === '') throw new CliError('Give the message to inject: keel inject <workflowId> "<message>".');
        const { queued } = await monitor.inject(message);
        out(`Queued for the next turn (${queued} in the inbox); a sleeping monitor wakes now.`);
        break;
      }
      case 'wake':
        await monitor.wake();
        out('Asked to wake: a sleeping monitor starts its next turn now.');
        break;
      case 'pause':
        await monitor.pause();
        out('Asked to pause: it holds at the next turn boundary (asleep, it stays asleep). Resume with: keel resume ' + workflowId);
        break;
      case 'resume':
        await monitor.resume();
        out('Resumed.');
        break;
      case 'stop':
        await monitor.stop(message);
        out('Asked to stop: the current turn is cancelled, and the monitor ends cancelled.');
        break;
    }
    return 0;
  });
}

/** The rows `keel status` adds for a monitor. */
export function monitorRows(state: MonitorState): [string, string][] {
  const rows: [string, string][] = [['phase', state.phase]];
  if (state.nextWakeAt) rows.push(['next wake', `${state.nextWakeAt}${state.wakeReason ? ` · ${state.wakeReason}` : ''}`]);
  rows.push(['turns', `${state.turns}${state.budgets.maxTurns ? ` of at most ${state.budgets.maxTurns}` : state.budgets.maxTurns === 0 ? '' : ' of at most 50'}`]);
  rows.push(['tokens', `${state.usage.inputTokens} in${state.budgets.maxInputTokens ? ` / ${state.budgets.maxInputTokens}` : ''} · ${state.usage.outputTokens} out${state.budgets.maxOutputTokens ? ` / ${state.budgets.maxOutputTokens}` : ''}`]);
  rows.push(['cost', `$${state.cost.toFixed(4)}${state.budgets.maxCostUsd !== undefined ? ` of at most $${state.budgets.maxCostUsd}` : ''}`]);
  if (state.budgets.wallclock !== undefined) rows.push(['wallclock', String(state.budgets.wallclock)]);
  if (state.inbox > 0) rows.push(['inbox', `${state.inbox} waiting`]);
  if (state.lastTurn) {
    rows.push(['last turn', `${state.lastTurn.turn} · ${state.lastTurn.outcome}${state.lastTurn.error ? ` · ${state.lastTurn.error}` : state.lastTurn.text ? ` · ${state.lastTurn.text.split('\n')[0]}` : ''}`]);
  }
  return rows;
}
