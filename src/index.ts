/**
 * keel: durable LLM agents on Temporal. The public API: everything of `keel/client` (defining
 * agents, starting and reading runs and monitors, the workflows' interfaces), and what only a
 * worker needs (the worker, providers, Claude Code settings).
 */
export * from './client/index.js';
export { PERMISSION_MODES } from './core/permissions/index.js';
export type { PermissionDecision, PermissionMode, PermissionSettings } from './core/permissions/index.js';
export { loadClaudeSettings } from './activities/claude-settings.js';
export { ProviderError } from './core/errors.js';
export type { ModelProvider, ModelRequest, ModelResponse } from './core/model.js';
export { createWorker, keelBundleOptions, workflowsPath } from './worker.js';
export type { CreateWorkerOptions, KeelWorker } from './worker.js';
export { keelPlugin, KeelPlugin } from './plugin.js';
export type { KeelPluginOptions } from './plugin.js';
export type { ProvidersConfig } from './providers/index.js';
