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
export type { AgentClientOptions, ApproveOptions, MonitorStartOptions, SessionStartOptions, OutputOf, PendingRun, RunSummary, StartOptions } from './agent-client.js';
export { MonitorHandle } from './monitor-handle.js';
export { SessionHandle, SessionRefusedError, type SessionAnswer } from './session-handle.js';
export type {
  Checkpoint,
  EndInput,
  NewSessionInput,
  NewSessionResult,
  RewindInput,
  RewindResult,
  SendInput,
  SessionEndReason,
  SessionInput,
  SessionOptions,
  SessionResult,
  SessionRunResult,
  SessionRunStatus,
  SessionStartSource,
  SessionState,
} from '../core/session.js';
export { ClientToolRejectedError, clientToolUpdateId } from './client-tools.js';
export type { ServeClientToolsOptions, ServedCall } from './client-tools.js';
export { ClientToolsLoadError, loadClientTools } from './client-tools-loader.js';
export type { ClientToolAnswerer, ClientToolContext, ClientToolHandler, ClientToolHandlers, ClientToolReceipt, ClientToolResult, PendingClientCall } from '../core/client-tools.js';
export { RunNotStreamingError, readStream } from './run-stream.js';
export type { StreamReadOptions } from './run-stream.js';
export { STREAM_TOPICS, StreamText, isDelta } from '../core/stream.js';
export type { StreamChunk, StreamDelta, StreamEnd, StreamItem, StreamSetting, TextDelta, ToolCallDelta, TurnReset } from '../core/stream.js';
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
export type { AgentDefinition, AgentOptions, ApprovalContext, ApprovalOptions, BackgroundOptions, InstructionsContext, ToolContext, ToolDefinition, ToolOptions } from '../core/define.js';
export { defineGuardrail } from '../core/guardrails.js';
export type { GuardrailContext, GuardrailDefinition, GuardrailKind, GuardrailOptions, GuardrailSubject, GuardrailVerdict, Tripwire } from '../core/guardrails.js';
export { handoff, ref, DEFAULT_MAX_HANDOFFS } from '../core/handoff.js';
export type { AgentRef, HandoffContext, HandoffDefinition, HandoffFilter, HandoffOptions, HandoffSpec } from '../core/handoff.js';
export { defineMiddleware } from '../core/middleware.js';
export type { MiddlewareCall, MiddlewareDefinition, MiddlewareOptions, MiddlewareVerdict, ToolResultView } from '../core/middleware.js';
export type { ApprovalAnswer, ApprovalDecision, ApprovalReceipt, ApprovalRequest, Approver, PendingApproval } from '../core/approval.js';
export type { CommandHook, HookEvent, HookHandler, HookMatcher, HooksConfig, HttpHook } from '../core/hooks.js';
export type { JsonValue } from '../core/json.js';
export type { StateAccess, StateChanges, StateSnapshot, StateValues } from '../core/state.js';
export type { AgentSpec, ApprovalSettings, ModelSettings, RetrySettings, ToolSpec } from '../core/agent-spec.js';
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
export type {
  LastTurn,
  MonitorBudgets,
  MonitorInput,
  MonitorOptions,
  MonitorPhase,
  MonitorResult,
  MonitorState,
  MonitorStopReason,
  PriceTable,
  TurnRetryAction,
  TurnRetryRule,
} from '../core/monitor.js';
export type { BackgroundReport, ReportKind } from '../core/background.js';
export type { Usage } from '../core/usage.js';
export { ErrorTypes } from '../core/errors.js';
export type { ErrorType } from '../core/errors.js';
// The contract as zod schemas (the same that contract/*.schema.json are made from).
export { KEEL_STATUSES, agentMonitorContract, agentRunContract, agentSessionContract, runEventSchema } from '../core/contract.js';
// The run's and the monitor's interfaces, for any Temporal client: workflow types, queries, signals, Updates, search attributes.
export {
  AGENT_MONITOR_WORKFLOW,
  AGENT_RUN_WORKFLOW,
  AGENT_SESSION_WORKFLOW,
  DEFAULT_TASK_QUEUE,
  agentSearchAttribute,
  approveSignal,
  clearUpdate,
  discardUpdate,
  endUpdate,
  forkUpdate,
  resumeUpdate,
  rewindUpdate,
  runResultUpdate,
  sendUpdate,
  sessionStatusQuery,
  approveUpdate,
  clientToolCallsQuery,
  clientToolResultUpdate,
  eventsQuery,
  injectSignal,
  injectUpdate,
  monitorStatusQuery,
  pauseSignal,
  permissionModeSignal,
  resumeSignal,
  specQuery,
  stateQuery,
  statusQuery,
  statusSearchAttribute,
  stopSignal,
  transcriptQuery,
  wakeSignal,
  workerProblemSignal,
} from '../workflows/api.js';
export type { InjectInput, TranscriptRange, WorkerProblem } from '../workflows/api.js';
