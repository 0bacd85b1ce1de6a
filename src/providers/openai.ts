/**
 * OpenAI Chat Completions adapter. The SDK never retries (`maxRetries: 0`): every HTTP attempt
 * is one visible attempt of the model activity, and Temporal's retry policy does the rest.
 */
import OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsBase,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { ModelProvider, ModelRequest, ModelResponse, StopReason } from '../core/model.js';
import type { Message, ToolCall } from '../core/messages.js';
import { IncompleteStreamError, MalformedResponseError, callProvider, throwIfAborted } from './errors.js';

export interface OpenAIProviderOptions {
  apiKey: string;
  baseURL?: string;
  /** Default per-request timeout in milliseconds; `settings.timeoutMs` wins. Default 120 s. */
  timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 120_000;

export function createOpenAIProvider(options: OpenAIProviderOptions): ModelProvider {
  const client = new OpenAI({
    apiKey: options.apiKey,
    ...(options.baseURL !== undefined && { baseURL: options.baseURL }),
    maxRetries: 0,
  });
  return {
    name: 'openai',
    generate(request) {
      const timeoutMs = request.settings.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      return callProvider(
        {
          provider: 'openai',
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

/** The request body, without `stream`. Exported for tests and debugging. */
export function toOpenAIRequest(request: ModelRequest): ChatCompletionCreateParamsBase {
  const body: ChatCompletionCreateParamsBase = {
    model: request.model,
    messages: toOpenAIMessages(request.system, request.messages),
  };
  if (request.tools.length > 0) {
    body.tools = request.tools.map(
      (t): ChatCompletionTool => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }),
    );
  }
  if (request.outputSchema) {
    body.response_format = {
      type: 'json_schema',
      json_schema: { name: 'output', schema: request.outputSchema, strict: false },
    };
  }
  if (request.settings.temperature !== undefined) body.temperature = request.settings.temperature;
  if (request.settings.maxTokens !== undefined) body.max_completion_tokens = request.settings.maxTokens;
  return body;
}

export function toOpenAIMessages(system: string, messages: Message[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (system) out.push({ role: 'system', content: system });
  for (const m of messages) {
    switch (m.role) {
      case 'user':
        out.push({ role: 'user', content: m.content });
        break;
      case 'assistant':
        if (m.toolCalls && m.toolCalls.length > 0) {
          out.push({
            role: 'assistant',
            content: m.content === '' ? null : m.content,
            tool_calls: m.toolCalls.map((c) => ({
              id: c.id,
              type: 'function' as const,
              function: { name: c.name, arguments: c.arguments },
            })),
          });
        } else {
          out.push({ role: 'assistant', content: m.content });
        }
        break;
      case 'tool':
        out.push({ role: 'tool', tool_call_id: m.toolCallId, content: toolResultContent(m.content, m.isError) });
        break;
    }
  }
  return out;
}

/** Chat Completions has no error flag on tool results: say it in the text unless it already does. */
function toolResultContent(content: string, isError: boolean | undefined): string {
  if (!isError || /^\s*\W*error\b/i.test(content)) return content;
  return `Error: ${content}`;
}

export function openAIStopReason(finishReason: string | null | undefined): StopReason {
  switch (finishReason) {
    case 'stop':
      return 'end';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'length':
      return 'max_tokens';
    default:
      return 'other';
  }
}

async function generateJson(
  client: OpenAI,
  request: ModelRequest,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<ModelResponse> {
  const completion: unknown = await client.chat.completions.create(
    { ...toOpenAIRequest(request), stream: false },
    { signal, timeout: timeoutMs },
  );
  if (typeof completion !== 'object' || completion === null || !Array.isArray((completion as ChatCompletion).choices)) {
    throw new MalformedResponseError(
      `expected a chat completion object, got ${typeof completion === 'string' ? `text "${completion.slice(0, 100)}"` : typeof completion}`,
    );
  }
  const c = completion as ChatCompletion;
  const choice = c.choices[0];
  if (!choice) throw new MalformedResponseError('the chat completion has no choices');
  if (typeof choice.message !== 'object' || choice.message === null) {
    throw new MalformedResponseError('the chat completion\'s first choice has no message');
  }
  const toolCalls: ToolCall[] = [];
  for (const [i, call] of (choice.message.tool_calls ?? []).entries()) {
    if (call.type === 'custom') {
      toolCalls.push({ id: call.id, name: call.custom.name, arguments: call.custom.input });
    } else {
      toolCalls.push({
        id: call.id || `call_${i}`,
        name: call.function.name,
        arguments: call.function.arguments || '{}',
      });
    }
  }
  return {
    message: {
      role: 'assistant',
      content: choice.message.content ?? choice.message.refusal ?? '',
      ...(toolCalls.length > 0 && { toolCalls }),
    },
    usage: { inputTokens: c.usage?.prompt_tokens ?? 0, outputTokens: c.usage?.completion_tokens ?? 0 },
    stopReason: openAIStopReason(choice.finish_reason),
  };
}

async function generateStreaming(
  client: OpenAI,
  request: ModelRequest,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<ModelResponse> {
  const stream = await client.chat.completions.create(
    { ...toOpenAIRequest(request), stream: true, stream_options: { include_usage: true } },
    { signal, timeout: timeoutMs },
  );
  let text = '';
  let refusal = '';
  let finishReason: string | null | undefined;
  let usage: ChatCompletionChunk['usage'];
  let chunks = 0;
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  for await (const chunk of stream) {
    chunks++;
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    if (choice.delta?.content) {
      text += choice.delta.content;
      request.onDelta?.({ kind: 'text', text: choice.delta.content });
    }
    if (choice.delta?.refusal) refusal += choice.delta.refusal;
    for (const d of choice.delta?.tool_calls ?? []) {
      let call = calls.get(d.index);
      if (!call) {
        call = { id: '', name: '', arguments: '' };
        calls.set(d.index, call);
      }
      if (d.id) call.id = d.id;
      if (d.function?.name) call.name += d.function.name;
      if (d.function?.arguments) call.arguments += d.function.arguments;
      request.onDelta?.({
        kind: 'tool_call',
        index: d.index,
        ...(d.id && { id: d.id }),
        ...(d.function?.name && { name: d.function.name }),
        arguments: d.function?.arguments ?? '',
      });
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
  throwIfAborted(signal, 'The OpenAI stream');
  if (chunks === 0) throw new MalformedResponseError('the answer has no stream events: it is not a Chat Completions stream');
  if (finishReason === undefined) throw new IncompleteStreamError(`no finish_reason after ${chunks} chunks`);
  const toolCalls: ToolCall[] = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, c]) => ({ id: c.id || `call_${index}`, name: c.name, arguments: c.arguments || '{}' }));
  return {
    message: {
      role: 'assistant',
      content: text || refusal,
      ...(toolCalls.length > 0 && { toolCalls }),
    },
    usage: { inputTokens: usage?.prompt_tokens ?? 0, outputTokens: usage?.completion_tokens ?? 0 },
    stopReason: openAIStopReason(finishReason),
  };
}
