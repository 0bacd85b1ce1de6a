/** A run as Temporal records it (describe, visibility): what `list`, `status` and `tree` show of it. */
import type { WorkflowExecutionInfo } from '@temporalio/client';
import type { RunStatus } from '../core/run.js';
import { AGENT_MONITOR_WORKFLOW, AGENT_SESSION_WORKFLOW, agentSearchAttribute, statusSearchAttribute } from '../workflows/api.js';

export interface RunSummary {
  workflowId: string;
  runId: string;
  agent: string;
  /** A plain run (`agentRun`) or a monitor (`agentMonitor`). */
  kind: 'run' | 'monitor' | 'session';
  status: RunStatus | string;
  startTime: Date;
  closeTime?: Date;
}

export function summarize(info: Omit<WorkflowExecutionInfo, 'raw'>): RunSummary {
  const agent = info.typedSearchAttributes.get(agentSearchAttribute);
  const status = info.typedSearchAttributes.get(statusSearchAttribute);
  const open = info.status.name === 'RUNNING';
  const live = status === undefined || status === 'running' || status === 'sleeping' || status === 'paused' || status === 'awaiting_approval';
  return {
    workflowId: info.workflowId,
    runId: info.runId,
    agent: agent ?? '?',
    kind: info.type === AGENT_MONITOR_WORKFLOW ? 'monitor' : info.type === AGENT_SESSION_WORKFLOW ? 'session' : 'run',
    // A run that was terminated or timed out never wrote its final status: Temporal's is the truth then.
    status: open ? (status ?? 'running') : live ? info.status.name.toLowerCase() : status,
    startTime: info.startTime,
    ...(info.closeTime && { closeTime: info.closeTime }),
  };
}
