/** keel: durable LLM agents on Temporal. The public API. */
export { defineAgent, defineTool } from './core/define.js';
export type { AgentDefinition, AgentOptions, InstructionsContext, ToolContext, ToolDefinition, ToolOptions } from './core/define.js';
export type { ApprovalContext, ApprovalOptions } from './core/define.js';
export { defineGuardrail } from './core/guardrails.js';
export { handoff, ref, DEFAULT_MAX_HANDOFFS } from './core/handoff.js';
export type { AgentRef, HandoffContext, HandoffDefinition, HandoffFilter, HandoffOptions, HandoffSpec } from './core/handoff.js';
export type { GuardrailContext, GuardrailDefinition, GuardrailKind, GuardrailOptions, GuardrailSubject, GuardrailVerdict, Tripwire } from './core/guardrails.js';
export { defineMiddleware } from './core/middleware.js';
export type { MiddlewareCall, MiddlewareDefinition, MiddlewareOptions, MiddlewareVerdict, ToolResultView } from './core/middleware.js';
export type { ApprovalAnswer, ApprovalDecision, ApprovalReceipt, ApprovalRequest, Approver, PendingApproval } from './core/approval.js';
export { PERMISSION_MODES } from './core/permissions/index.js';
export type { PermissionDecision, PermissionMode, PermissionSettings } from './core/permissions/index.js';
export type { CommandHook, HookEvent, HookHandler, HookMatcher, HooksConfig, HttpHook } from './core/hooks.js';
export { loadClaudeSettings } from './activities/claude-settings.js';
export type { JsonValue } from './core/json.js';
export type { AgentSpec, ApprovalSettings, ModelSettings, RetrySettings, ToolSpec } from './core/agent-spec.js';
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
export { createWorker, keelBundleOptions, workflowsPath } from './worker.js';
export type { CreateWorkerOptions, KeelWorker } from './worker.js';
export { keelPlugin, KeelPlugin } from './plugin.js';
export type { KeelPluginOptions } from './plugin.js';
export { AgentClient, ApprovalRejectedError, RunHandle, RunFailedError } from './client/agent-client.js';
export type { ApproveOptions, OutputOf, PendingRun, StartOptions } from './client/agent-client.js';
export type { RunTree, RunTreeHandoff, RunTreeKind, TreeOptions } from './client/tree.js';
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
