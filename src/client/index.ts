/**
 * `keel/client`: what a process that only starts and reads runs needs (a web server, a script,
 * another service). It never loads the Temporal worker, its bundler or its native runtime:
 * only `@temporalio/client` and the run's definitions. Workers import `keel`.
 *
 *   import { AgentClient } from 'keel/client';
 *   const client = await AgentClient.connect();
 *   const run = await client.start('demo', 'Weather in Lisbon?');
 *   console.log((await run.result()).output);
 */
export { AgentClient, ApprovalRejectedError, RunHandle, RunFailedError } from './agent-client.js';
export type { AgentClientOptions, ApproveOptions, OutputOf, PendingRun, RunSummary, StartOptions } from './agent-client.js';
export type { RunTree, RunTreeHandoff, RunTreeKind, TreeOptions } from './tree.js';
export { AgentSchedules, OVERLAP_POLICIES, ScheduleInputError } from './schedules.js';
export type {
  AgentScheduleDescription,
  AgentScheduleSummary,
  AgentSchedulesOptions,
  CreateScheduleOptions,
  OverlapPolicy,
  ScheduledRun,
  ScheduleKind,
  ScheduleTiming,
} from './schedules.js';
export { ServerUnreachableError } from './connection.js';
export type { ConnectSettings } from './connection.js';
// Defining agents loads zod only, so a client may pass an agent itself to start().
export { defineAgent, defineTool } from '../core/define.js';
export { handoff, ref } from '../core/handoff.js';
export type { AgentDefinition, AgentOptions, InstructionsContext, ToolContext, ToolDefinition, ToolOptions } from '../core/define.js';
export type { JsonValue } from '../core/json.js';
export type { AgentSpec, ModelSettings, RetrySettings, ToolSpec } from '../core/agent-spec.js';
export type { AssistantMessage, Message, ToolCall, ToolResultMessage, UserMessage } from '../core/messages.js';
export type {
  AgentRunInput,
  AgentRunResult,
  EventPage,
  RunEvent,
  RunEventType,
  RunOptions,
  RunOverrides,
  RunState,
  RunStatus,
  TranscriptPage,
} from '../core/run.js';
export type { Usage } from '../core/usage.js';
export { ErrorTypes } from '../core/errors.js';
// The run's interface, for any Temporal client: workflow type, queries, search attributes.
export {
  AGENT_MONITOR_WORKFLOW,
  AGENT_RUN_WORKFLOW,
  DEFAULT_TASK_QUEUE,
  agentSearchAttribute,
  eventsQuery,
  specQuery,
  statusQuery,
  statusSearchAttribute,
  transcriptQuery,
  workerProblemSignal,
} from '../workflows/api.js';
export type { TranscriptRange, WorkerProblem } from '../workflows/api.js';
