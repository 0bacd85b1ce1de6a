/**
 * The typed client: start runs, read them, follow them live.
 *
 *   const client = await AgentClient.connect();
 *   const run = await client.start('demo', 'Weather in Lisbon?');
 *   for await (const event of run.follow()) console.log(event.type);
 *   console.log((await run.result()).output);
 */
import { Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { ApprovalReceipt, PendingApproval } from '../core/approval.js';
import type { AgentDefinition } from '../core/define.js';
import { type PermissionMode } from '../core/permissions/index.js';
import type { JsonValue } from '../core/json.js';
import type { AgentRunInput, RunOptions, RunOverrides } from '../core/run.js';
import type { MonitorBudgets, MonitorInput, MonitorOptions } from '../core/monitor.js';
import { jsonProblem, type StateValues } from '../core/state.js';
import type { StreamSetting } from '../core/stream.js';
import { MonitorHandle } from './monitor-handle.js';
import { SessionHandle } from './session-handle.js';
import type { SessionInput, SessionOptions } from '../core/session.js';
import { RunHandle, type ApproveOptions } from './run-handle.js';
import {
  AGENT_MONITOR_WORKFLOW,
  AGENT_RUN_WORKFLOW,
  AGENT_SESSION_WORKFLOW,
  DEFAULT_TASK_QUEUE,
  agentSearchAttribute,
  statusSearchAttribute,
} from '../workflows/api.js';
import { innermostError } from '../core/errors.js';
import { oneLine } from '../core/text.js';
import { connect, type ConnectSettings } from './connection.js';
import { summarize, type RunSummary } from './run-summary.js';
import { AgentSchedules } from './schedules.js';
import { type RunTree, type TreeOptions } from './tree.js';

export type { RunSummary } from './run-summary.js';
export { ApprovalRejectedError, RunFailedError, RunHandle, type ApproveOptions } from './run-handle.js';

export interface StartOptions {
  /** Default: `<agent>-<short id>`. */
  workflowId?: string;
  taskQueue?: string;
  /** Plain JSON the run's tools and instructions see (`ctx.context`); recorded with the run. */
  context?: JsonValue;
  /**
   * The run's state at its start: plain JSON values by key that its tools, hooks and middleware
   * read and write (`ctx.state`), and that fill `{key}` placeholders in static instructions.
   */
  state?: StateValues;
  /** This run's model (`provider:model`) or turn limit, instead of the agent's. */
  model?: string;
  maxTurns?: number;
  /** The permission mode the run starts in: `default`, `acceptEdits`, `plan`, `dontAsk` or `bypassPermissions`. */
  permissionMode?: PermissionMode;
  /** Live streaming (read with `handle.stream()`): the same as `options.stream`. */
  stream?: StreamSetting;
  options?: RunOptions;
}

export interface SessionStartOptions {
  /** The session's workflow ID. Default: `<agent>-session-<short id>`. */
  id?: string;
  taskQueue?: string;
  /** The session's state: a JSON key-value map handed to each run, carried through fork, clear and continue-as-new. */
  state?: Record<string, JsonValue>;
  options?: SessionOptions;
}

export interface MonitorStartOptions {
  /** Default: `<agent>-monitor-<short id>`. */
  workflowId?: string;
  taskQueue?: string;
  context?: JsonValue;
  /** The monitor's state at its start (see StartOptions.state). */
  state?: StateValues;
  /** This monitor's model (`provider:model`), instead of the agent's. */
  model?: string;
  budgets?: MonitorBudgets;
  options?: MonitorOptions;
}

/** The output type of an agent: its zod schema's output, or the answer's text. */
export type OutputOf<A> = A extends AgentDefinition<infer O> ? (O extends z.ZodType ? z.output<O> : string) : unknown;

export interface AgentClientOptions {
  client: Client;
  taskQueue?: string;
  /** Base URL of the Temporal Web UI, for links to runs. Default http://localhost:8233. */
  uiUrl?: string;
}

/** A run waiting for approval, with its pending calls. */
export interface PendingRun {
  run: RunSummary;
  calls: PendingApproval[];
  /** Why the run's pending calls could not be read (its workers are down); a decision by Signal still reaches it. */
  unreachable?: string;
}

/** How long `pending()` waits for each run to answer. */
const PENDING_QUERY_MS = 5_000;

export class AgentClient {
  readonly client: Client;
  readonly taskQueue: string;
  readonly uiUrl: string;
  private readonly ownsConnection: boolean;

  constructor(options: AgentClientOptions, ownsConnection = false) {
    this.client = options.client;
    this.taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUE;
    this.uiUrl = (options.uiUrl ?? process.env.KEEL_UI_URL ?? 'http://localhost:8233').replace(/\/$/, '');
    this.ownsConnection = ownsConnection;
  }

  /** Connects with Temporal's environment configuration (TEMPORAL_ADDRESS, profiles, ...). */
  static async connect(settings: ConnectSettings & { taskQueue?: string; uiUrl?: string } = {}): Promise<AgentClient> {
    const { connection, namespace } = await connect(settings);
    return new AgentClient({ client: new Client({ connection, namespace }), ...settings }, true);
  }

  /**
   * Starts a run. Given the agent's definition (rather than its name), the handle's
   * `result().output` has the type of the agent's output schema.
   */
  async start<A extends string | AgentDefinition>(agent: A, input: string, options: StartOptions = {}): Promise<RunHandle<OutputOf<A>>> {
    const name = typeof agent === 'string' ? agent : agent.name;
    if (!name) throw new Error('Name the agent to run.');
    if (typeof input !== 'string') throw new Error('The input of a run is a prompt string.');
    const workflowId = options.workflowId ?? `${name}-${randomUUID().slice(0, 8)}`;
    const overrides: RunOverrides = {
      ...(options.model !== undefined && { model: options.model }),
      ...(options.maxTurns !== undefined && { maxTurns: options.maxTurns }),
      ...(options.permissionMode !== undefined && { permissionMode: options.permissionMode }),
    };
    const args: AgentRunInput = {
      agent: name,
      input,
      ...(options.context !== undefined && { context: options.context }),
      ...(options.state !== undefined && { state: checkedState(options.state) }),
      ...(Object.keys(overrides).length > 0 && { overrides }),
      ...((options.options || options.stream !== undefined) && { options: { ...options.options, ...(options.stream !== undefined && { stream: options.stream }) } }),
    };
    await this.launch(AGENT_RUN_WORKFLOW, workflowId, name, args, input, options.taskQueue);
    return this.getHandle<OutputOf<A>>(workflowId);
  }

  /**
   * Starts a monitor: the agent works toward `goal` turn after turn, sleeping between turns
   * until the time it schedules (or a message, or a wake), within its budgets.
   */
  async startMonitor(agent: string | AgentDefinition, goal: string, options: MonitorStartOptions = {}): Promise<MonitorHandle> {
    const name = typeof agent === 'string' ? agent : agent.name;
    if (!name) throw new Error('Name the agent to run as a monitor.');
    if (typeof goal !== 'string' || goal.trim() === '') throw new Error('A monitor needs a goal: its first prompt.');
    const workflowId = options.workflowId ?? `${name}-monitor-${randomUUID().slice(0, 8)}`;
    const args: MonitorInput = {
      agent: name,
      goal,
      ...(options.context !== undefined && { context: options.context }),
      ...(options.state !== undefined && { state: checkedState(options.state) }),
      ...(options.model !== undefined && { overrides: { model: options.model } }),
      ...(options.budgets && { budgets: options.budgets }),
      ...(options.options && { options: options.options }),
    };
    await this.launch(AGENT_MONITOR_WORKFLOW, workflowId, name, args, goal, options.taskQueue);
    return this.getMonitor(workflowId);
  }

  /**
   * Starts a session: a conversation with the agent, one run per message (`send`), with
   * checkpoints to rewind to, fork and clear. `state`: the session's JSON key-value map.
   */
  async startSession(agent: string | AgentDefinition, options: SessionStartOptions = {}): Promise<SessionHandle> {
    const name = typeof agent === 'string' ? agent : agent.name;
    if (!name) throw new Error('Name the agent the session talks to.');
    const workflowId = options.id ?? `${name}-session-${randomUUID().slice(0, 8)}`;
    const args: SessionInput = {
      agent: name,
      ...(options.state !== undefined && { state: options.state }),
      ...(options.options && { options: options.options }),
    };
    await this.launch(AGENT_SESSION_WORKFLOW, workflowId, name, args, `session with ${name}`, options.taskQueue);
    return this.session(workflowId);
  }

  /** The session with this workflow ID (across continue-as-new). */
  session(workflowId: string): SessionHandle {
    return new SessionHandle(this.getHandle(workflowId), (id) => this.session(id));
  }

  /** The monitor with this workflow ID. */
  getMonitor(workflowId: string): MonitorHandle {
    return new MonitorHandle(this.getHandle(workflowId));
  }

  private async launch(type: string, workflowId: string, agent: string, args: unknown, prompt: string, taskQueue?: string): Promise<void> {
    try {
      await this.client.workflow.start(type, {
        workflowId,
        taskQueue: taskQueue ?? this.taskQueue,
        args: [args],
        typedSearchAttributes: [
          { key: agentSearchAttribute, value: agent },
          { key: statusSearchAttribute, value: 'running' },
        ],
        memo: { prompt },
        staticSummary: `${agent}: ${oneLine(prompt, 120)}`,
      });
    } catch (err) {
      throw explainStartFailure(err, this.client.options.namespace);
    }
  }

  /** The run with this workflow ID; it follows the run across continue-as-new. */
  getHandle<O = unknown>(workflowId: string): RunHandle<O> {
    return new RunHandle<O>(this.client.workflow.getHandle(workflowId), this.uiUrl, this.client.options.namespace);
  }

  /** Recent runs, newest first, from Temporal visibility. */
  async list(options: { limit?: number; agent?: string; status?: string } = {}): Promise<RunSummary[]> {
    // A long run is a chain of executions under one workflow ID: list each run once, by its latest.
    const clauses = [`WorkflowType IN ('${AGENT_RUN_WORKFLOW}', '${AGENT_MONITOR_WORKFLOW}', '${AGENT_SESSION_WORKFLOW}')`, `ExecutionStatus != 'ContinuedAsNew'`];
    if (options.agent) clauses.push(`KeelAgent = '${options.agent.replace(/'/g, "\\'")}'`);
    if (options.status) clauses.push(`KeelStatus = '${options.status.replace(/'/g, "\\'")}'`);
    const limit = options.limit ?? 20;
    const runs: RunSummary[] = [];
    for await (const info of this.client.workflow.list({ query: clauses.join(' AND '), pageSize: limit })) {
      runs.push(summarize(info));
      if (runs.length >= limit) break;
    }
    return runs;
  }

  /**
   * Runs waiting for approval (status `awaiting_approval`, kept current in the `KeelStatus`
   * search attribute), each with its pending calls.
   */
  async pending(options: { limit?: number; agent?: string } = {}): Promise<PendingRun[]> {
    const runs = await this.list({ ...options, status: 'awaiting_approval', limit: options.limit ?? 100 });
    const found = await Promise.all(
      runs.map(async (run): Promise<PendingRun> => {
        try {
          // A run whose workers are all down cannot answer: say so rather than wait for it.
          const calls = await this.client.withDeadline(Date.now() + PENDING_QUERY_MS, () => this.getHandle(run.workflowId).pending());
          return { run, calls };
        } catch (err) {
          return { run, calls: [], unreachable: `no worker answered for this run (${innermostError(err).message})` };
        }
      }),
    );
    // Visibility lags a moment behind the run: a run decided since has nothing pending.
    return found.filter((p) => p.calls.length > 0 || p.unreachable);
  }

  /**
   * The run and everything under it: its handoffs and its sub-agents and background agents
   * (child workflows), recursively, each with its status. Throws WorkflowNotFoundError for an
   * unknown workflow ID.
   */
  tree(workflowId: string, options: TreeOptions = {}): Promise<RunTree> {
    return this.getHandle(workflowId).tree(options);
  }

  /** Allows a pending call of a run (by Update: rejected at once if the call is not pending or an edit fails its schema). */
  approve(workflowId: string, callId: string, options: ApproveOptions = {}): Promise<ApprovalReceipt> {
    return this.getHandle(workflowId).approve(callId, options);
  }

  /** Denies a pending call of a run; the model reads the reason as the call's result. */
  deny(workflowId: string, callId: string, reason?: string): Promise<ApprovalReceipt> {
    return this.getHandle(workflowId).deny(callId, reason);
  }

  /** Temporal Schedules that start runs of agents (on this client's connection and task queue). */
  get schedules(): AgentSchedules {
    return new AgentSchedules(this);
  }

  async close(): Promise<void> {
    if (this.ownsConnection) await this.client.connection.close();
  }
}

/** keel's search attributes must be registered in the namespace; say how when they are not. */
function explainStartFailure(err: unknown, namespace: string): unknown {
  const message = err instanceof Error ? innermostError(err).message : '';
  if (!/search attribute/i.test(message) || !/Keel(Agent|Status)/.test(message)) return err;
  return new Error(
    `The namespace "${namespace}" does not know keel's search attributes (${message}). Register them once:\n` +
      `  temporal operator search-attribute create --namespace ${namespace} --name KeelAgent --type Keyword\n` +
      `  temporal operator search-attribute create --namespace ${namespace} --name KeelStatus --type Keyword\n` +
      '(./temporal-dev.sh start registers them on the local dev server.)',
    { cause: err },
  );
}



/** A state to start with, checked before anything is sent: an object of plain JSON values. */
function checkedState(state: StateValues): StateValues {
  if (typeof state !== 'object' || state === null || Array.isArray(state)) {
    throw new TypeError('The state must be an object of keys and values, such as { user: "ada" }.');
  }
  const problem = jsonProblem(state, 'state');
  if (problem) throw new TypeError(`Cannot start with this state: ${problem}. A run's state holds plain JSON only.`);
  return state;
}
