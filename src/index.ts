/** keel: durable LLM agents on Temporal. The public API. */
export { defineAgent, defineTool } from './core/define.js';
export type { AgentDefinition, AgentOptions, InstructionsContext, ToolContext, ToolDefinition, ToolOptions } from './core/define.js';
export type { JsonValue } from './core/json.js';
export type { AgentSpec, ModelSettings, RetrySettings, ToolSpec } from './core/agent-spec.js';
export type { AssistantMessage, Message, ToolCall, ToolResultMessage, UserMessage } from './core/messages.js';
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
} from './core/run.js';
export type { Usage } from './core/usage.js';
export { ErrorTypes, ProviderError } from './core/errors.js';
export type { ModelProvider, ModelRequest, ModelResponse } from './core/model.js';
export { createWorker, workflowsPath } from './worker.js';
export type { CreateWorkerOptions, KeelWorker } from './worker.js';
export { AgentClient, RunHandle, RunFailedError } from './client/agent-client.js';
export type { OutputOf, StartOptions } from './client/agent-client.js';
export { AgentSchedules, OVERLAP_POLICIES, ScheduleInputError } from './client/schedules.js';
export type {
  AgentScheduleDescription,
  AgentScheduleSummary,
  AgentSchedulesOptions,
  CreateScheduleOptions,
  OverlapPolicy,
  ScheduledRun,
  ScheduleKind,
  ScheduleTiming,
} from './client/schedules.js';
export { AGENT_MONITOR_WORKFLOW, AGENT_RUN_WORKFLOW, DEFAULT_TASK_QUEUE } from './workflows/api.js';
export type { ProvidersConfig } from './providers/index.js';
