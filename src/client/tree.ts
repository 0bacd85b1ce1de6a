/**
 * A run and everything under it: who was in charge (its handoffs, from its events) and the child
 * workflows it started, sub-agents (`agentRun`) and background agents (`agentMonitor`), each
 * with its own tree. Children come from the run's events (`subagent.started`, across
 * continue-as-new), which never lag, and from visibility (`ParentWorkflowId`), which finds any
 * child, one no event names included, a moment after it starts; every status comes from
 * describe, which reads the workflow itself (visibility lags behind it).
 */
import { WorkflowNotFoundError, type WorkflowClient, type WorkflowExecutionDescription } from '@temporalio/client';
import { innermostError } from '../core/errors.js';
import type { RunEvent } from '../core/run.js';
import { AGENT_MONITOR_WORKFLOW, AGENT_RUN_WORKFLOW, AGENT_SESSION_WORKFLOW } from '../workflows/api.js';
import { readEvents } from './run-chain.js';
import { summarize } from './run-summary.js';

/** A top-level run or monitor, a sub-agent's run (a tool call's), a background agent (a monitor a run spawned). */
export type RunTreeKind = 'run' | 'monitor' | 'session' | 'sub-agent' | 'background';

export interface RunTreeHandoff {
  turn: number;
  from: string;
  to: string;
  callId: string;
}

export interface RunTree {
  workflowId: string;
  /** The latest execution; absent for a child that has not started (or never did). */
  runId?: string;
  /** The agent the run started with (the `KeelAgent` search attribute). */
  agent: string;
  kind: RunTreeKind;
  /** `KeelStatus`: running, awaiting_approval, sleeping, completed, blocked, ... */
  status: string;
  startTime?: Date;
  closeTime?: Date;
  /** A sub-agent's: the call of its parent it answers. */
  callId?: string;
  /** A background agent's: its name, the last part of its workflow ID. */
  name?: string;
  /** The run's handoffs in order (none: the agent it started with was in charge throughout). */
  handoffs: RunTreeHandoff[];
  /** Its children, oldest first. */
  children: RunTree[];
  /** What could not be read (its events, when no worker answers): its handoffs or children may be missing. */
  problems?: string[];
}

export interface TreeOptions {
  /** How long each run may take to answer the `events` query (a closed run needs a worker to replay it). Default 5 s. */
  queryTimeoutMs?: number;
}

/** What an event says of a child: the call it answers, its agent, its status at the end. */
interface Origin {
  callId: string;
  agent: string;
  finished?: string;
}

/** The tree of the run `workflowId`. Throws WorkflowNotFoundError when there is no such workflow. */
export async function readRunTree(client: WorkflowClient, workflowId: string, options: TreeOptions = {}): Promise<RunTree> {
  return (await readNode(client, workflowId, new Set([workflowId]), options.queryTimeoutMs ?? 5_000, false))!;
}

/** The run's tree; for a child the server does not know, undefined. */
async function readNode(client: WorkflowClient, workflowId: string, seen: Set<string>, queryMs: number, child: boolean): Promise<RunTree | undefined> {
  let description: WorkflowExecutionDescription;
  try {
    description = await client.getHandle(workflowId).describe();
  } catch (err) {
    if (child && err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
  const summary = summarize(description);
  const parentId = description.parentExecution?.workflowId ?? undefined;
  // A session's forks and clears are sessions of their own, started as its children.
  const kind: RunTreeKind =
    parentId === undefined || description.type === AGENT_SESSION_WORKFLOW ? summary.kind : description.type === AGENT_MONITOR_WORKFLOW ? 'background' : 'sub-agent';
  const problems: string[] = [];

  // Children listed by visibility are read at once, while the events query (which may wait for a worker) runs.
  const events = client.withDeadline(Date.now() + queryMs, () => readEvents(client, workflowId, undefined, 0)).catch((err: unknown) => {
    // A closed run answers queries through a worker that replays it; without one the query fails or times out.
    const message = innermostError(err).message;
    const why = /deadline|cancel|poller|worker/i.test(message) ? 'no worker answered' : message;
    problems.push(`events unread (${why}): handoffs unknown, children from visibility only`);
    return [] as RunEvent[];
  });
  const reads = new Map<string, Promise<RunTree | undefined>>();
  const read = (id: string) => {
    if (seen.has(id)) return;
    seen.add(id);
    const node = readNode(client, id, seen, queryMs, true);
    node.catch(() => undefined); // awaited below, once the events are in: not an unhandled rejection meanwhile
    reads.set(id, node);
  };
  const listed = await listChildren(client, description).catch((err: unknown) => {
    problems.push(`visibility failed (${innermostError(err).message}): children from events only`);
    return [] as string[];
  });
  listed.forEach(read);

  const handoffs: RunTreeHandoff[] = [];
  const origins = new Map<string, Origin>();
  for (const event of await events) {
    if (event.type === 'handoff') handoffs.push({ turn: event.turn, from: event.from, to: event.to, callId: event.callId });
    else if (event.type === 'subagent.started') origins.set(event.workflowId, { callId: event.callId, agent: event.agent });
    else if (event.type === 'subagent.finished') origins.set(event.workflowId, { callId: event.callId, agent: event.agent, finished: event.status });
  }
  // Visibility lags: a child an event names is read even when visibility does not list it yet.
  [...origins.keys()].forEach(read);
  const children: RunTree[] = [];
  for (const [id, pending] of reads) {
    const child = await pending;
    const origin = origins.get(id);
    if (child) children.push(origin && child.kind === 'sub-agent' ? { ...child, callId: origin.callId } : child);
    // An event names a child the server does not know: it is being started, or its start failed.
    else if (origin) children.push({ workflowId: id, agent: origin.agent, kind: 'sub-agent', status: origin.finished ?? 'starting', callId: origin.callId, handoffs: [], children: [] });
  }
  children.sort((a, b) => (a.startTime?.getTime() ?? Infinity) - (b.startTime?.getTime() ?? Infinity));

  // A child's origin from its ID: `<parent>/<agent>-<call ID>` for a sub-agent, `<parent>/<name>` for a background agent.
  const rest = parentId !== undefined && workflowId.startsWith(`${parentId}/`) ? workflowId.slice(parentId.length + 1) : undefined;
  const callId = kind === 'sub-agent' && rest?.startsWith(`${summary.agent}-`) ? rest.slice(summary.agent.length + 1) : undefined;
  return {
    workflowId,
    runId: summary.runId,
    agent: summary.agent,
    kind,
    status: summary.status,
    startTime: summary.startTime,
    ...(summary.closeTime && { closeTime: summary.closeTime }),
    ...(callId !== undefined && { callId }),
    ...(kind === 'background' && { name: rest ?? workflowId }),
    handoffs,
    children,
    ...(problems.length > 0 && { problems }),
  };
}

/**
 * keel's child workflows of the run, from visibility: those whose parent has this workflow ID and
 * that started after the run's first execution did (a run that continued as new keeps its ID;
 * an earlier run that had the same ID does not count).
 */
async function listChildren(client: WorkflowClient, description: WorkflowExecutionDescription): Promise<string[]> {
  const clauses = [
    `ParentWorkflowId = ${quote(description.workflowId)}`,
    `WorkflowType IN (${quote(AGENT_RUN_WORKFLOW)}, ${quote(AGENT_MONITOR_WORKFLOW)})`,
  ];
  const since = await chainStart(client, description);
  if (since) clauses.push(`StartTime >= ${quote(since.toISOString())}`);
  const ids: string[] = [];
  for await (const info of client.list({ query: clauses.join(' AND ') })) ids.push(info.workflowId);
  return ids;
}

/** When the run's first execution started (undefined when it cannot be read any more). */
async function chainStart(client: WorkflowClient, description: WorkflowExecutionDescription): Promise<Date | undefined> {
  const first = description.raw.workflowExecutionInfo?.firstRunId;
  if (!first || first === description.runId) return description.startTime;
  return client
    .getHandle(description.workflowId, first)
    .describe()
    .then((d) => d.startTime)
    .catch(() => undefined);
}

function quote(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
