import type { ModelSettings, ToolSpec } from './agent-spec.js';
import type { JsonSchema } from './json-schema.js';
import type { AssistantMessage, Message } from './messages.js';
import type { Usage } from './usage.js';

/** One request to a model, independent of the provider. */
export interface ModelRequest {
  /** The model's name within its provider (the part after `provider:`). */
  model: string;
  system: string;
  messages: Message[];
  tools: ToolSpec[];
  /** When set, the model is asked for a final answer that is JSON matching this schema. */
  outputSchema?: JsonSchema;
  settings: ModelSettings;
  signal?: AbortSignal;
  /**
   * Hears the answer as it is produced (a streaming request: `settings.stream`). The response
   * is the same with or without it.
   */
  onDelta?: (delta: ModelDelta) => void;
}

/** A piece of an answer being streamed: text, or a piece of a tool call (its name once known, its arguments' JSON text). */
export type ModelDelta =
  | { kind: 'text'; text: string }
  | { kind: 'tool_call'; index: number; id?: string; name?: string; arguments: string };

/** Why the model stopped: it answered, it asked for tools, or it ran out of output tokens. */
export type StopReason = 'end' | 'tool_calls' | 'max_tokens' | 'other';

export interface ModelResponse {
  message: AssistantMessage;
  usage: Usage;
  stopReason: StopReason;
}

/** One adapter per model API. Errors are classified inside the adapter (see `ProviderError`). */
export interface ModelProvider {
  readonly name: string;
  generate(request: ModelRequest): Promise<ModelResponse>;
}
