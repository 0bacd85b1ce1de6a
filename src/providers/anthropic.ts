/**
 * Anthropic Messages adapter. The SDK never retries (`maxRetries: 0`): every HTTP attempt is one
 * visible attempt of the model activity, and Temporal's retry policy does the rest.
 */
import Anthropic from '@anthropic-ai/sdk';
import type {
  ContentBlockParam,
  Message as AnthropicMessage,
  MessageCreateParamsBase,
  MessageParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages';
import type { JsonSchema } from '../core/json-schema.js';
import type { Message, ToolCall } from '../core/messages.js';
import type { ModelProvider, ModelRequest, ModelResponse, StopReason } from '../core/model.js';
import type { Usage } from '../core/usage.js';
import { IncompleteStreamError, MalformedResponseError, callProvider, throwIfAborted } from './errors.js';

export interface AnthropicProviderOptions {
  apiKey: string;
  baseURL?: string;
  /** Default per-request timeout in milliseconds; `settings.timeoutMs` wins. Default 120 s. */
  timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 120_000;
/** Anthropic requires `max_tokens`; this is used when the agent's settings do not say. */
export const DEFAULT_MAX_TOKENS = 4096;

export function createAnthropicProvider(options: AnthropicProviderOptions): ModelProvider {
  const client = new Anthropic({
    apiKey: options.apiKey,
    ...(options.baseURL !== undefined && { baseURL: options.baseURL }),
    maxRetries: 0,
  });
  return {
    name: 'anthropic',
    generate(request) {
      const timeoutMs = request.settings.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      return callProvider(
        {
          provider: 'anthropic',
          model: request.model,
          timeoutMs,
          baseURL: client.baseURL,
          ...(request.signal && { signal: request.signal }),
        },
        (signal) =>
          request.settings.stream
            ? generateStreaming(client, request, signal, timeoutMs)
            : generateJson(client, request, signal, timeoutMs),
      );
    },
  };
}

/** The instruction appended to the system prompt when the agent has an output schema. */
export function outputInstruction(schema: JsonSchema): string {
  return (
    'When you give your final answer (rather than calling a tool), reply with only a JSON value that ' +
    'matches the following JSON Schema: no other text, no Markdown code fences.\n' +
    `JSON Schema:\n${JSON.stringify(schema)}`
  );
}

/** The request body, without `stream`. Exported for tests and debugging. */
export function toAnthropicRequest(request: ModelRequest): MessageCreateParamsBase {
  let system = request.system;
  if (request.outputSchema) {
    const instruction = outputInstruction(request.outputSchema);
    system = system ? `${system}\n\n${instruction}` : instruction;
  }
  const body: MessageCreateParamsBase = {
    model: request.model,
    max_tokens: request.settings.maxTokens ?? DEFAULT_MAX_TOKENS,
    messages: toAnthropicMessages(request.messages),
  };
  if (system) body.system = system;
  if (request.tools.length > 0) {
    body.tools = request.tools.map(
      (t): Tool => ({
        name: t.name,
        description: t.description,
        input_schema: t.parameters as Tool.InputSchema,
      }),
    );
  }
  if (request.settings.temperature !== undefined) {
    // No longer in the SDK's types (deprecated for newer models), but the agent asked for it.
    (body as MessageCreateParamsBase & { temperature?: number }).temperature = request.settings.temperature;
  }
  return body;
}

function parseArguments(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // fall through: the model produced arguments that are not a JSON object
  }
  return {};
}

/**
 * Tool results go back as `tool_result` blocks of a user message; consecutive results (and any
 * user text right after them) share one user message, since roles must alternate.
 */
export function toAnthropicMessages(messages: Message[]): MessageParam[] {
  const out: MessageParam[] = [];
  const userBlocks = (): ContentBlockParam[] => {
    const last = out.at(-1);
    if (last && last.role === 'user' && Array.isArray(last.content)) return last.content;
    const blocks: ContentBlockParam[] = [];
    out.push({ role: 'user', content: blocks });
    return blocks;
  };
  for (const m of messages) {
    switch (m.role) {
      case 'user': {
        const last = out.at(-1);
        if (last && last.role === 'user' && Array.isArray(last.content)) {
          last.content.push({ type: 'text', text: m.content });
        } else {
          out.push({ role: 'user', content: m.content });
        }
        break;
      }
      case 'tool':
        userBlocks().push({
          type: 'tool_result',
          tool_use_id: m.toolCallId,
          content: m.content,
          ...(m.isError && { is_error: true }),
        });
        break;
      case 'assistant': {
        const blocks: ContentBlockParam[] = [];
        if (m.content !== '') blocks.push({ type: 'text', text: m.content });
        for (const c of m.toolCalls ?? []) {
          blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: parseArguments(c.arguments) });
        }
        out.push({ role: 'assistant', content: blocks.length > 0 ? blocks : m.content });
        break;
      }
    }
  }
  return out;
}

export function anthropicStopReason(stopReason: string | null | undefined): StopReason {
  switch (stopReason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'end';
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
      return 'max_tokens';
    default:
      return 'other';
  }
}

/** Tool input as the raw argument text: a string input (malformed arguments) passes through verbatim. */
function argumentsText(input: unknown): string {
  if (typeof input === 'string') return input;
  return JSON.stringify(input ?? {});
}

interface UsageLike {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

function toUsage(u: UsageLike | undefined): Usage {
  return {
    inputTokens: (u?.input_tokens ?? 0) + (u?.cache_creation_input_tokens ?? 0) + (u?.cache_read_input_tokens ?? 0),
    outputTokens: u?.output_tokens ?? 0,
  };
}

/** With an output schema, a model sometimes wraps its JSON in a Markdown fence: unwrap it. */
function unfence(text: string, request: ModelRequest): string {
  if (!request.outputSchema) return text;
  const m = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/i.exec(text);
  return m?.[1] !== undefined ? m[1] : text;
}

function response(
  request: ModelRequest,
  texts: string[],
  toolCalls: ToolCall[],
  usage: Usage,
  stopReason: string | null | undefined,
): ModelResponse {
  return {
    message: {
      role: 'assistant',
      content: unfence(texts.join(''), request),
      ...(toolCalls.length > 0 && { toolCalls }),
    },
    usage,
    stopReason: anthropicStopReason(stopReason),
  };
}

async function generateJson(
  client: Anthropic,
  request: ModelRequest,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<ModelResponse> {
  const msg: unknown = await client.messages.create(
    { ...toAnthropicRequest(request), stream: false },
    { signal, timeout: timeoutMs },
  );
  if (typeof msg !== 'object' || msg === null || !Array.isArray((msg as AnthropicMessage).content)) {
    throw new MalformedResponseError(
      `expected a message object, got ${typeof msg === 'string' ? `text "${msg.slice(0, 100)}"` : typeof msg}`,
    );
  }
  const m = msg as AnthropicMessage;
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const block of m.content) {
    if (block.type === 'text') texts.push(block.text);
    else if (block.type === 'tool_use') {
      toolCalls.push({ id: block.id, name: block.name, arguments: argumentsText(block.input) });
    }
  }
  return response(request, texts, toolCalls, toUsage(m.usage), m.stop_reason);
}

interface StreamBlock {
  type: string;
  text: string;
  id: string;
  name: string;
  /** Accumulated `input_json_delta` text, verbatim. */
  json: string;
  /** The input given in `content_block_start`, used when no deltas follow. */
  startInput: unknown;
}

async function generateStreaming(
  client: Anthropic,
  request: ModelRequest,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<ModelResponse> {
  const stream = await client.messages.create(
    { ...toAnthropicRequest(request), stream: true },
    { signal, timeout: timeoutMs },
  );
  const blocks = new Map<number, StreamBlock>();
  let usage: UsageLike = {};
  let stopReason: string | null | undefined;
  let stopped = false;
  let started = false;
  let events = 0;
  for await (const event of stream) {
    events++;
    switch (event.type) {
      case 'message_start':
        started = true;
        usage = { ...event.message.usage };
        stopReason = event.message.stop_reason;
        break;
      case 'content_block_start': {
        const b = event.content_block;
        if (b.type === 'text' && b.text) request.onDelta?.({ kind: 'text', text: b.text });
        if (b.type === 'tool_use') request.onDelta?.({ kind: 'tool_call', index: event.index, id: b.id, name: b.name, arguments: '' });
        blocks.set(event.index, {
          type: b.type,
          text: b.type === 'text' ? b.text : '',
          id: 'id' in b && typeof b.id === 'string' ? b.id : '',
          name: 'name' in b && typeof b.name === 'string' ? b.name : '',
          json: '',
          startInput: 'input' in b ? b.input : undefined,
        });
        break;
      }
      case 'content_block_delta': {
        const b = blocks.get(event.index);
        if (!b) break;
        if (event.delta.type === 'text_delta') {
          b.text += event.delta.text;
          request.onDelta?.({ kind: 'text', text: event.delta.text });
        } else if (event.delta.type === 'input_json_delta') {
          b.json += event.delta.partial_json;
          request.onDelta?.({ kind: 'tool_call', index: event.index, arguments: event.delta.partial_json });
        }
        break;
      }
      case 'message_delta': {
        const u = event.usage as UsageLike | undefined;
        if (u) {
          for (const key of Object.keys(u) as (keyof UsageLike)[]) {
            const v = u[key];
            if (typeof v === 'number') usage[key] = v;
          }
        }
        if (event.delta.stop_reason) stopReason = event.delta.stop_reason;
        break;
      }
      case 'message_stop':
        stopped = true;
        break;
      default:
        break;
    }
  }
  throwIfAborted(signal, 'The Anthropic stream');
  if (!started) throw new MalformedResponseError(`the answer has no message_start event (${events} events): it is not a Messages stream`);
  if (!stopped) throw new IncompleteStreamError(`no message_stop after ${events} events`);
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const [, b] of [...blocks.entries()].sort(([a], [c]) => a - c)) {
    if (b.type === 'text') texts.push(b.text);
    else if (b.type === 'tool_use') {
      toolCalls.push({ id: b.id, name: b.name, arguments: b.json !== '' ? b.json : argumentsText(b.startInput) });
    }
  }
  return response(request, texts, toolCalls, toUsage(usage), stopReason);
}
