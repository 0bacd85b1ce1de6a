import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ToolSpec } from '../src/core/agent-spec.js';
import { ProviderError } from '../src/core/errors.js';
import type { Message } from '../src/core/messages.js';
import type { ModelProvider, ModelRequest } from '../src/core/model.js';
import { createAnthropicProvider } from '../src/providers/anthropic.js';
import { createDemoProvider, findPlaces } from '../src/providers/demo.js';
import { classifyProviderError, isAbortError, readRetryAfter, retryAfterMsFromHeaders } from '../src/providers/errors.js';
import { ProviderConfigError, createProviderRegistry } from '../src/providers/index.js';
import { createOpenAIProvider } from '../src/providers/openai.js';
import { startModelServer, type ModelServer } from './support/model-server.js';
import { until } from './support/until.js';

type Api = 'openai' | 'anthropic';

let server: ModelServer;
let seq = 0;
/** A model name of its own for every test, so scripts never mix. */
const model = (label: string) => `${label}-${++seq}`;

beforeAll(async () => {
  server = await startModelServer();
});
afterAll(async () => {
  await server.close();
});

function provider(api: Api, timeoutMs?: number): ModelProvider {
  const opts = { apiKey: 'sk-test', ...(timeoutMs !== undefined && { timeoutMs }) };
  return api === 'openai'
    ? createOpenAIProvider({ ...opts, baseURL: server.openaiBaseURL })
    : createAnthropicProvider({ ...opts, baseURL: server.anthropicBaseURL });
}

const weatherTool: ToolSpec = {
  name: 'get_weather',
  description: 'Current weather in a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  readOnly: true,
};
const timeTool: ToolSpec = {
  name: 'get_local_time',
  description: 'Local time in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  readOnly: true,
};

function request(modelName: string, over: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: modelName,
    system: 'You are a test.',
    messages: [{ role: 'user', content: 'Hi' }],
    tools: [],
    settings: {},
    ...over,
  };
}

async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

async function providerFailure(p: Promise<unknown>): Promise<ProviderError> {
  const err = await failure(p);
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

const conversation: Message[] = [
  { role: 'user', content: 'Weather in Paris and Rome?' },
  {
    role: 'assistant',
    content: 'Let me check.',
    toolCalls: [
      { id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: 'c2', name: 'get_weather', arguments: '{"city": Rome' },
    ],
  },
  { role: 'tool', toolCallId: 'c1', toolName: 'get_weather', content: '{"tempC":18}' },
  { role: 'tool', toolCallId: 'c2', toolName: 'get_weather', content: 'Invalid arguments: not JSON', isError: true },
];

const outputSchema = {
  type: 'object',
  properties: { summary: { type: 'string' } },
  required: ['summary'],
};

describe('request mapping', () => {
  it('OpenAI: system, tool calls, tool results, tools, response_format and settings', async () => {
    const m = model('oa-map');
    server.script(m, [{ text: 'ok' }]);
    await provider('openai').generate(
      request(m, {
        messages: conversation,
        tools: [weatherTool],
        outputSchema,
        settings: { temperature: 0.2, maxTokens: 300 },
      }),
    );
    const [rec] = server.requests(m);
    expect(rec?.stream).toBe(false);
    const body = rec?.body;
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are a test.' },
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'c2', type: 'function', function: { name: 'get_weather', arguments: '{"city": Rome' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '{"tempC":18}' },
      { role: 'tool', tool_call_id: 'c2', content: 'Error: Invalid arguments: not JSON' },
    ]);
    expect(body.tools).toEqual([
      {
        type: 'function',
        function: { name: 'get_weather', description: weatherTool.description, parameters: weatherTool.parameters },
      },
    ]);
    expect(body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'output', schema: outputSchema, strict: false },
    });
    expect(body.temperature).toBe(0.2);
    expect(body.max_completion_tokens).toBe(300);
    expect(body.max_tokens).toBeUndefined();
    expect(rec?.headers['authorization']).toBe('Bearer sk-test');
  });

  it('OpenAI: an error result that already says so is left as is; no tools, no response_format', async () => {
    const m = model('oa-map2');
    server.script(m, [{ text: 'ok' }]);
    await provider('openai').generate(
      request(m, {
        system: '',
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'x', name: 't', arguments: '{}' }] },
          { role: 'tool', toolCallId: 'x', toolName: 't', content: 'Error: boom', isError: true },
        ],
      }),
    );
    const body = server.requests(m)[0]?.body;
    expect(body.messages[0]).toEqual({ role: 'user', content: 'q' });
    expect(body.messages[1].content).toBeNull();
    expect(body.messages[2]).toEqual({ role: 'tool', tool_call_id: 'x', content: 'Error: boom' });
    expect(body.tools).toBeUndefined();
    expect(body.response_format).toBeUndefined();
    expect(body.temperature).toBeUndefined();
  });

  it('Anthropic: top-level system with output instruction, tool_use and grouped tool_result blocks', async () => {
    const m = model('an-map');
    server.script(m, [{ text: '{"summary":"ok"}' }]);
    await provider('anthropic').generate(
      request(m, { messages: conversation, tools: [weatherTool], outputSchema, settings: { temperature: 0.5 } }),
    );
    const [rec] = server.requests(m);
    const body = rec?.body;
    expect(body.system).toContain('You are a test.');
    expect(body.system).toContain('JSON');
    expect(body.system).toContain(JSON.stringify(outputSchema));
    expect(body.max_tokens).toBe(4096);
    expect(body.temperature).toBe(0.5);
    expect(body.messages).toEqual([
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'c1', name: 'get_weather', input: { city: 'Paris' } },
          // Arguments that are not a JSON object are sent as {}.
          { type: 'tool_use', id: 'c2', name: 'get_weather', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c1', content: '{"tempC":18}' },
          { type: 'tool_result', tool_use_id: 'c2', content: 'Invalid arguments: not JSON', is_error: true },
        ],
      },
    ]);
    expect(body.tools).toEqual([
      { name: 'get_weather', description: weatherTool.description, input_schema: weatherTool.parameters },
    ]);
    // SDK 1.x sends the API key as a bearer token.
    expect(rec?.headers['authorization']).toBe('Bearer sk-test');
  });

  it('Anthropic: maxTokens, no system, no tools', async () => {
    const m = model('an-map2');
    server.script(m, [{ text: 'ok' }]);
    await provider('anthropic').generate(request(m, { system: '', settings: { maxTokens: 50 } }));
    const body = server.requests(m)[0]?.body;
    expect(body.max_tokens).toBe(50);
    expect(body.system).toBeUndefined();
    expect(body.tools).toBeUndefined();
    expect(body.messages).toEqual([{ role: 'user', content: 'Hi' }]);
  });
});

describe.each<Api>(['openai', 'anthropic'])('%s response mapping', (api) => {
  for (const stream of [false, true]) {
    const mode = stream ? 'streaming' : 'JSON';

    it(`text answer (${mode})`, async () => {
      const m = model(`${api}-text`);
      server.script(m, [{ text: 'Hello there, traveller.', usage: { inputTokens: 11, outputTokens: 7 } }]);
      const res = await provider(api).generate(request(m, { settings: { stream } }));
      expect(res).toEqual({
        message: { role: 'assistant', content: 'Hello there, traveller.' },
        usage: { inputTokens: 11, outputTokens: 7 },
        stopReason: 'end',
      });
      const rec = server.requests(m)[0];
      expect(rec?.stream).toBe(stream);
      if (api === 'openai' && stream) expect(rec?.body.stream_options).toEqual({ include_usage: true });
    });

    it(`tool calls, malformed arguments passed through (${mode})`, async () => {
      const m = model(`${api}-tools`);
      server.script(m, [
        {
          text: 'Checking.',
          toolCalls: [
            { id: 'call_a', name: 'get_weather', arguments: { city: 'Paris', units: 'metric' } },
            { id: 'call_b', name: 'get_weather', arguments: '{"city": "Rome"' },
          ],
          usage: { inputTokens: 30, outputTokens: 12 },
        },
      ]);
      const res = await provider(api).generate(request(m, { tools: [weatherTool], settings: { stream } }));
      expect(res.stopReason).toBe('tool_calls');
      expect(res.usage).toEqual({ inputTokens: 30, outputTokens: 12 });
      expect(res.message.content).toBe('Checking.');
      expect(res.message.toolCalls).toHaveLength(2);
      expect(res.message.toolCalls?.[0]).toMatchObject({ id: 'call_a', name: 'get_weather' });
      expect(JSON.parse(res.message.toolCalls?.[0]?.arguments ?? '')).toEqual({ city: 'Paris', units: 'metric' });
      expect(res.message.toolCalls?.[1]).toEqual({ id: 'call_b', name: 'get_weather', arguments: '{"city": "Rome"' });
    });

    it(`max_tokens stop reason (${mode})`, async () => {
      const m = model(`${api}-max`);
      server.script(m, [{ text: 'cut', stopReason: 'max_tokens' }]);
      const res = await provider(api).generate(request(m, { settings: { stream } }));
      expect(res.stopReason).toBe('max_tokens');
      expect(res.message.content).toBe('cut');
    });

    it(`an answer cut off in the middle of a tool call's arguments (${mode})`, async () => {
      const m = model(`${api}-max-tool`);
      server.script(m, [
        {
          text: 'Checking both.',
          toolCalls: [
            { id: 'whole_1', name: 'get_weather', arguments: { city: 'Paris' } },
            { id: 'half_2', name: 'get_weather', arguments: '{"city": "Ro' },
          ],
          stopReason: 'max_tokens',
        },
      ]);
      const res = await provider(api).generate(request(m, { tools: [weatherTool], settings: { stream, maxTokens: 20 } }));
      expect(res.stopReason).toBe('max_tokens');
      expect(res.message.content).toBe('Checking both.');
      expect(res.message.toolCalls).toEqual([
        { id: 'whole_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'half_2', name: 'get_weather', arguments: '{"city": "Ro' },
      ]);
    });
  }

  it('streaming and JSON give the same response', async () => {
    const m = model(`${api}-same`);
    const reply = {
      text: 'Both ways.',
      toolCalls: [{ id: 'same_1', name: 'get_weather', arguments: { city: 'Oslo' } }],
      usage: { inputTokens: 5, outputTokens: 6 },
    };
    server.script(m, [reply, reply]);
    const a = await provider(api).generate(request(m, { tools: [weatherTool] }));
    const b = await provider(api).generate(request(m, { tools: [weatherTool], settings: { stream: true } }));
    expect(b).toEqual(a);
  });
});

describe.each<Api>(['openai', 'anthropic'])('%s error classification', (api) => {
  const P = api === 'openai' ? 'OpenAI' : 'Anthropic';

  it.each<{ what: string; headers: Record<string, string> }>([
    { what: 'zero', headers: { 'retry-after': '0' } },
    { what: 'negative', headers: { 'retry-after': '-5' } },
    { what: 'unreadable', headers: { 'retry-after': 'soon' } },
    { what: 'a date in the past', headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' } },
    { what: 'a zero retry-after-ms', headers: { 'retry-after-ms': '0' } },
  ])('a Retry-After that is $what is ignored, and the message says so', async ({ headers }) => {
    const m = model(`${api}-ra`);
    server.script(m, [{ fault: 'status', status: 529, headers }]);
    const err = await providerFailure(provider(api).generate(request(m)));
    expect(err.retryable).toBe(true);
    expect(err.retryAfterMs).toBeUndefined();
    expect(err.message).toContain('Ignored');
    expect(err.message).toContain(Object.values(headers)[0]);
    expect(err.message).toContain('the retry policy decides');
  });

  it('an unusable retry-after-ms falls back to a usable Retry-After, and the message says which was ignored', async () => {
    const m = model(`${api}-ra-fallback`);
    server.script(m, [{ fault: 'status', status: 429, headers: { 'retry-after-ms': 'nope' }, retryAfter: 2 }]);
    const err = await providerFailure(provider(api).generate(request(m)));
    expect(err.retryAfterMs).toBe(2_000);
    expect(err.message).toContain('Ignored retry-after-ms: "nope" (not a positive wait).');
    expect(err.message).not.toContain('the retry policy decides');
  });

  it('a huge Retry-After is read as it is (the activity caps it)', async () => {
    const m = model(`${api}-ra-huge`);
    server.script(m, [{ fault: 'status', status: 503, retryAfter: '999999999' }]);
    const err = await providerFailure(provider(api).generate(request(m)));
    expect(err).toMatchObject({ retryable: true, retryAfterMs: 999_999_999_000 });
  });

  it('429 with Retry-After is retryable with retryAfterMs, after a single HTTP attempt', async () => {
    const m = model(`${api}-429`);
    server.script(m, [{ fault: 'status', status: 429, retryAfter: 3 }]);
    const err = await providerFailure(provider(api).generate(request(m)));
    expect(err).toMatchObject({ retryable: true, status: 429, retryAfterMs: 3000, provider: api });
    expect(err.message).toContain('scripted fault');
    expect(server.requests(m)).toHaveLength(1);
  });

  it.each([500, 503, 529, 408, 409])('%i is retryable', async (status) => {
    const m = model(`${api}-${status}`);
    server.script(m, [{ fault: 'status', status }]);
    const err = await providerFailure(provider(api).generate(request(m)));
    expect(err).toMatchObject({ retryable: true, status });
    expect(err.message).toContain(P);
    expect(err.message).toContain('scripted fault');
    expect(server.requests(m)).toHaveLength(1);
  });

  it('529 says overloaded', async () => {
    const m = model(`${api}-529o`);
    server.script(m, [{ fault: 'status', status: 529 }]);
    const err = await providerFailure(provider(api).generate(request(m)));
    expect(err.message).toMatch(/overloaded/i);
  });

  it.each([false, true])('a reset connection is retryable (stream: %s)', async (stream) => {
    const m = model(`${api}-reset`);
    server.script(m, [{ fault: 'reset' }]);
    const err = await providerFailure(provider(api).generate(request(m, { settings: { stream } })));
    expect(err.retryable).toBe(true);
    expect(err.message).toContain(P);
  });

  it.each([false, true])('a hang past timeoutMs is a retryable timeout (stream: %s)', async (stream) => {
    const m = model(`${api}-hang`);
    server.script(m, [{ fault: 'hang', ms: 5_000 }]);
    const err = await providerFailure(provider(api).generate(request(m, { settings: { stream, timeoutMs: 150 } })));
    // Only the adapter's own deadline says this (the server's hang would end as a lost connection).
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/150 ms/);
    expect(err.message).toMatch(/timed out/);
  });

  it('the provider option timeoutMs applies when the settings do not say', async () => {
    const m = model(`${api}-hang2`);
    server.script(m, [{ fault: 'hang', ms: 5_000 }]);
    const err = await providerFailure(provider(api, 100).generate(request(m)));
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/100 ms/);
  });

  it.each([false, true])('a malformed JSON body is retryable, marked malformed, naming the base URL (stream: %s)', async (stream) => {
    const m = model(`${api}-malformed`);
    server.script(m, [{ fault: 'malformed-json' }]);
    const err = await providerFailure(provider(api).generate(request(m, { settings: { stream } })));
    expect(err).toMatchObject({ retryable: true, malformed: true });
    expect(err.message).toMatch(/malformed/);
    const baseURL = api === 'openai' ? server.openaiBaseURL : server.anthropicBaseURL;
    expect(err.baseURL).toBe(baseURL);
    expect(err.message).toContain(`from ${baseURL}`);
  });

  it.each([false, true])('JSON that is not an answer of the API is malformed (stream: %s)', async (stream) => {
    const m = model(`${api}-not-api`);
    server.script(m, [{ fault: 'body', body: { hello: 'world' } }]);
    const err = await providerFailure(provider(api).generate(request(m, { settings: { stream } })));
    expect(err).toMatchObject({ retryable: true, malformed: true });
  });

  it('a web page instead of an answer is malformed, and quoted', async () => {
    const m = model(`${api}-html`);
    server.script(m, [{ fault: 'body', body: '<html>Welcome to nginx!</html>', contentType: 'text/html' }]);
    const err = await providerFailure(provider(api).generate(request(m)));
    expect(err).toMatchObject({ retryable: true, malformed: true });
    expect(err.message).toContain('<html>Welcome to nginx!</html>');
  });

  it('a stream that stops before the model finished is retried like a lost connection, not as malformed', async () => {
    const m = model(`${api}-incomplete`);
    const partial =
      api === 'openai'
        ? 'data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}\n\n'
        : 'event: message_start\ndata: {"type":"message_start","message":{"id":"x","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n';
    server.script(m, [{ fault: 'body', body: partial, contentType: 'text/event-stream' }]);
    const err = await providerFailure(provider(api).generate(request(m, { settings: { stream: true } })));
    expect(err).toMatchObject({ retryable: true, malformed: false });
    expect(err.message).toContain('stream ended before the model finished its answer');
  });

  it('a status keel does not know is retried', async () => {
    const m = model(`${api}-418`);
    server.script(m, [{ fault: 'status', status: 418 }]);
    const err = await providerFailure(provider(api).generate(request(m)));
    expect(err).toMatchObject({ retryable: true, status: 418 });
    expect(err.message).toContain('unexpected status (418');
  });

  it('402 (billing) is not retryable', async () => {
    const m = model(`${api}-402`);
    server.script(m, [{ fault: 'status', status: 402 }]);
    const err = await providerFailure(provider(api).generate(request(m)));
    expect(err).toMatchObject({ retryable: false, status: 402 });
    expect(err.message).toMatch(/billing/);
  });

  it('400 is not retryable and says what to check', async () => {
    const m = model(`${api}-400`);
    server.script(m, [{ fault: 'status', status: 400 }]);
    const err = await providerFailure(provider(api).generate(request(m)));
    expect(err).toMatchObject({ retryable: false, status: 400 });
    expect(err.message).toContain(`${P} rejected the request as invalid (400 Bad Request)`);
    expect(err.message).toContain('scripted fault: HTTP 400');
  });

  it('401 is not retryable and names the environment variable', async () => {
    const m = model(`${api}-401`);
    server.script(m, [{ fault: 'status', status: 401 }]);
    const err = await providerFailure(provider(api).generate(request(m)));
    expect(err).toMatchObject({ retryable: false, status: 401 });
    const envVar = api === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY';
    expect(err.message).toContain(
      `${P} rejected the API key (401 Unauthorized): set a valid ${envVar} in the worker's environment.`,
    );
    expect(err.message).toContain('scripted fault: HTTP 401');
  });

  it('403 is not retryable', async () => {
    const m = model(`${api}-403`);
    server.script(m, [{ fault: 'status', status: 403 }]);
    const err = await providerFailure(provider(api).generate(request(m)));
    expect(err).toMatchObject({ retryable: false, status: 403 });
    expect(err.message).toContain('403 Forbidden');
  });

  it('404 is not retryable and names the model', async () => {
    const m = model(`${api}-404`);
    server.script(m, [{ fault: 'status', status: 404 }]);
    const err = await providerFailure(provider(api).generate(request(m)));
    expect(err).toMatchObject({ retryable: false, status: 404 });
    expect(err.message).toContain(
      `${P} says the model was not found (404): check the model name in the agent's \`model\` ('${api}:${m}').`,
    );
  });

  it('422 is not retryable', async () => {
    const m = model(`${api}-422`);
    server.script(m, [{ fault: 'status', status: 422 }]);
    const err = await providerFailure(provider(api).generate(request(m)));
    expect(err).toMatchObject({ retryable: false, status: 422 });
  });

  it('an aborted request is rethrown as it is, not as a ProviderError', async () => {
    const m = model(`${api}-abort`);
    server.script(m, [{ fault: 'hang', ms: 5_000 }]);
    const controller = new AbortController();
    const pending = failure(provider(api).generate(request(m, { signal: controller.signal })));
    // Aborted while the server holds the request.
    await until(() => server.requests(m).length, (n) => n >= 1, { intervalMs: 5 });
    controller.abort();
    const err = await pending;
    expect(err).not.toBeInstanceOf(ProviderError);
    expect(isAbortError(err)).toBe(true);
  });
});

describe('OpenAI-specific errors', () => {
  it('429 insufficient_quota is not retryable', async () => {
    const m = model('oa-quota');
    server.script(m, [
      {
        fault: 'status',
        status: 429,
        body: {
          error: {
            message: 'You exceeded your current quota, please check your plan and billing details.',
            type: 'insufficient_quota',
            param: null,
            code: 'insufficient_quota',
          },
        },
      },
    ]);
    const err = await providerFailure(provider('openai').generate(request(m)));
    expect(err).toMatchObject({ retryable: false, status: 429 });
    expect(err.message).toContain(
      'OpenAI quota exhausted (429 insufficient_quota): check your plan and billing; retrying will not help.',
    );
    expect(err.message).toContain('You exceeded your current quota');
  });

  it('400 context_length_exceeded says the conversation is too long', async () => {
    const m = model('oa-ctx');
    server.script(m, [
      {
        fault: 'status',
        status: 400,
        body: {
          error: {
            message: "This model's maximum context length is 128000 tokens.",
            type: 'invalid_request_error',
            param: 'messages',
            code: 'context_length_exceeded',
          },
        },
      },
    ]);
    const err = await providerFailure(provider('openai').generate(request(m)));
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/context window/);
  });
});

describe('classifier details', () => {
  it('reads retry-after-ms, retry-after seconds and HTTP dates', () => {
    const h = (o: Record<string, string>) => new Headers(o);
    expect(retryAfterMsFromHeaders(h({ 'retry-after-ms': '250' }))).toBe(250);
    expect(retryAfterMsFromHeaders(h({ 'retry-after-ms': '250', 'retry-after': '9' }))).toBe(250);
    expect(retryAfterMsFromHeaders(h({ 'retry-after': '1.5' }))).toBe(1500);
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterMsFromHeaders(h({ 'retry-after': 'Wed, 01 Jan 2025 00:00:10 GMT' }), now)).toBe(10_000);
    expect(retryAfterMsFromHeaders(h({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryAfterMsFromHeaders(h({}))).toBeUndefined();
  });

  it('never gives a wait that is not positive: 0, negative, unreadable and past values are ignored', () => {
    const h = (o: Record<string, string>) => new Headers(o);
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(readRetryAfter(h({ 'retry-after': '0' }), now)).toEqual({ ignored: 'Retry-After: "0"' });
    expect(readRetryAfter(h({ 'retry-after': '-3' }), now)).toEqual({ ignored: 'Retry-After: "-3"' });
    expect(readRetryAfter(h({ 'retry-after': 'Infinity' }), now)).toEqual({ ignored: 'Retry-After: "Infinity"' });
    expect(readRetryAfter(h({ 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' }), now).ms).toBeUndefined();
    expect(readRetryAfter(h({ 'retry-after-ms': '-1' }), now)).toEqual({ ignored: 'retry-after-ms: "-1"' });
    // An unusable retry-after-ms falls back to a usable Retry-After.
    expect(readRetryAfter(h({ 'retry-after-ms': 'nope', 'retry-after': '2' }), now)).toEqual({
      ms: 2_000,
      ignored: 'retry-after-ms: "nope"',
    });
    // A tiny positive wait is at least 1 ms: never 0.
    expect(readRetryAfter(h({ 'retry-after': '0.0001' }), now)).toEqual({ ms: 1 });
    expect(readRetryAfter(h({ 'retry-after-ms': '0.2' }), now)).toEqual({ ms: 1 });
    expect(readRetryAfter(h({}), now)).toEqual({});
    expect(readRetryAfter(undefined, now)).toEqual({});
  });

  it('returns a ProviderError as it is and retries errors it does not recognize', () => {
    const pe = new ProviderError('x', { provider: 'openai', retryable: true });
    expect(classifyProviderError('openai', pe)).toBe(pe);
    const other = classifyProviderError('anthropic', new RangeError('weird'));
    expect(other.retryable).toBe(true);
    expect(other.malformed).toBe(false);
    expect(other.message).toBe('Unexpected error calling Anthropic: RangeError: weird; the model turn will be retried.');
    expect(classifyProviderError('openai', 'a string').retryable).toBe(true);
  });

  it('classifies error events inside a stream by their type', () => {
    const overloaded = new Anthropic.APIError(
      undefined,
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      undefined,
      new Headers(),
      'overloaded_error',
    );
    const a = classifyProviderError('anthropic', overloaded);
    expect(a.retryable).toBe(true);
    expect(a.message).toMatch(/overloaded.*Overloaded/);
    const invalid = new OpenAI.APIError(undefined, { message: 'bad tool schema', type: 'invalid_request_error' }, undefined, new Headers());
    const o = classifyProviderError('openai', invalid);
    expect(o.retryable).toBe(false);
    expect(o.message).toContain('bad tool schema');
  });

  it('classifies connection resets from the network layer', () => {
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    const err = classifyProviderError('openai', new TypeError('terminated', { cause: reset }));
    expect(err.retryable).toBe(true);
  });
});

describe('demo provider', () => {
  const demo = createDemoProvider();
  const ask = (content: string, over: Partial<ModelRequest> = {}) =>
    request('weather', { messages: [{ role: 'user', content }], tools: [weatherTool, timeTool], ...over });

  it('finds place names, skipping question words', () => {
    expect(findPlaces('What is the weather in Paris and Tokyo?')).toEqual(['Paris', 'Tokyo']);
    expect(findPlaces("How's New York today? Is London's rain over? And Paris, Paris.")).toEqual([
      'New York',
      'London',
      'Paris',
    ]);
    expect(findPlaces('Tell me the time please.')).toEqual([]);
  });

  it('calls every single-string-argument tool once per place, in one turn', async () => {
    const noteTool: ToolSpec = {
      name: 'note',
      description: 'two args',
      parameters: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, required: ['a', 'b'] },
      readOnly: false,
    };
    const res = await demo.generate(ask('What is the weather and time in Paris and Tokyo?', { tools: [weatherTool, timeTool, noteTool] }));
    expect(res.stopReason).toBe('tool_calls');
    expect(res.message.toolCalls).toEqual([
      { id: 'demo_call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: 'demo_call_2', name: 'get_local_time', arguments: '{"city":"Paris"}' },
      { id: 'demo_call_3', name: 'get_weather', arguments: '{"city":"Tokyo"}' },
      { id: 'demo_call_4', name: 'get_local_time', arguments: '{"city":"Tokyo"}' },
    ]);
    expect(res.usage.inputTokens).toBeGreaterThan(0);
    expect(res.usage.outputTokens).toBeGreaterThan(0);
  });

  it('asks for a city when none is named', async () => {
    const res = await demo.generate(ask('what is the weather like?'));
    expect(res.stopReason).toBe('end');
    expect(res.message.toolCalls).toBeUndefined();
    expect(res.message.content).toMatch(/name a city/i);
  });

  const afterTools = (): Message[] => [
    { role: 'user', content: 'Weather and time in Paris and Tokyo?' },
    {
      role: 'assistant',
      content: '',
      toolCalls: [
        { id: 'demo_call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'demo_call_2', name: 'get_local_time', arguments: '{"city":"Paris"}' },
        { id: 'demo_call_3', name: 'get_weather', arguments: '{"city":"Tokyo"}' },
        { id: 'demo_call_4', name: 'get_local_time', arguments: '{"city":"Tokyo"}' },
      ],
    },
    { role: 'tool', toolCallId: 'demo_call_1', toolName: 'get_weather', content: '{"city":"Paris","tempC":18,"sky":"cloudy"}' },
    { role: 'tool', toolCallId: 'demo_call_2', toolName: 'get_local_time', content: '"14:05"' },
    { role: 'tool', toolCallId: 'demo_call_3', toolName: 'get_weather', content: 'sunny, 25°C' },
    { role: 'tool', toolCallId: 'demo_call_4', toolName: 'get_local_time', content: 'timeout', isError: true },
  ];

  it('answers from the tool results, one line per place', async () => {
    const res = await demo.generate(request('weather', { messages: afterTools(), tools: [weatherTool, timeTool] }));
    expect(res.stopReason).toBe('end');
    expect(res.message.toolCalls).toBeUndefined();
    const lines = res.message.content.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toBe('- Paris — weather: tempC: 18, sky: cloudy; local time: 14:05');
    expect(lines[2]).toBe('- Tokyo — weather: sunny, 25°C; local time: unavailable (timeout)');
  });

  it('answers in JSON when there is an output schema', async () => {
    const res = await demo.generate(
      request('weather', { messages: afterTools(), tools: [weatherTool, timeTool], outputSchema }),
    );
    const parsed = JSON.parse(res.message.content) as { summary: string };
    expect(Object.keys(parsed)).toEqual(['summary']);
    expect(parsed.summary).toContain('Paris — weather');
    const other = await demo.generate(
      request('weather', {
        messages: afterTools(),
        outputSchema: { type: 'object', properties: { cities: { type: 'array', items: { type: 'string' } } }, required: ['cities'] },
      }),
    );
    expect(JSON.parse(other.message.content)).toEqual({ cities: ['Paris', 'Tokyo'] });
    const plain = await demo.generate(request('weather', { messages: afterTools(), outputSchema: { type: 'string' } }));
    expect(JSON.parse(plain.message.content)).toHaveProperty('answer');
  });

  it('calls a tool that needs approval once, after its lookups, with what it found; then answers with its result', async () => {
    const postcardTool: ToolSpec = {
      name: 'send_postcard',
      description: 'needs approval',
      parameters: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
      readOnly: false,
      requiresApproval: true,
    };
    const tools = [weatherTool, timeTool, postcardTool];
    // Not among the lookups of the first turn.
    const first = await demo.generate(ask('Weather in Paris?', { tools }));
    expect(first.message.toolCalls?.map((c) => c.name)).toEqual(['get_weather', 'get_local_time']);

    const asked = await demo.generate(request('weather', { messages: afterTools(), tools }));
    expect(asked.stopReason).toBe('tool_calls');
    expect(asked.message.content).toBe('One more step, which needs your approval: send_postcard.');
    expect(asked.message.toolCalls).toEqual([
      {
        id: 'demo_postcard',
        name: 'send_postcard',
        arguments: JSON.stringify({ message: 'Greetings from your travel helper! Paris: tempC: 18, sky: cloudy, 14:05; Tokyo: sunny, 25°C.' }),
      },
    ]);

    const denied: Message[] = [
      ...afterTools(),
      asked.message,
      { role: 'tool', toolCallId: 'demo_postcard', toolName: 'send_postcard', content: 'denied: not today', isError: true },
    ];
    const answer = await demo.generate(request('weather', { messages: denied, tools }));
    expect(answer.stopReason).toBe('end');
    expect(answer.message.content.split('\n')).toEqual([
      'Here is what I found:',
      '- Paris — weather: tempC: 18, sky: cloudy; local time: 14:05',
      '- Tokyo — weather: sunny, 25°C; local time: unavailable (timeout)',
      '- send postcard: not done (denied: not today)',
    ]);
  });

  it('echoes a short answer without tools', async () => {
    const res = await demo.generate(request('weather', { messages: [{ role: 'user', content: 'Hello Paris' }] }));
    expect(res.stopReason).toBe('end');
    expect(res.message.content).toContain('Hello Paris');
  });

  it('is deterministic', async () => {
    const reqs = [
      ask('What is the weather in Paris?'),
      ask('nothing here'),
      request('weather', { messages: afterTools(), tools: [weatherTool, timeTool] }),
      request('weather', { messages: afterTools(), outputSchema }),
      request('weather', { messages: [{ role: 'user', content: 'Hi' }] }),
    ];
    for (const r of reqs) {
      const a = await createDemoProvider().generate(r);
      const b = await demo.generate(structuredClone(r));
      expect(b).toEqual(a);
    }
  });
});

describe('provider registry', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('builds providers lazily and caches them', () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    const registry = createProviderRegistry();
    const demo = registry.get('demo');
    expect(demo.name).toBe('demo');
    expect(registry.get('demo')).toBe(demo);
  });

  it('takes keys from the config or the environment', () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    vi.stubEnv('ANTHROPIC_API_KEY', 'sk-ant-env');
    const registry = createProviderRegistry({ openai: { apiKey: 'sk-config', baseURL: server.openaiBaseURL } });
    const openai = registry.get('openai');
    expect(openai.name).toBe('openai');
    expect(registry.get('openai')).toBe(openai);
    expect(registry.get('anthropic').name).toBe('anthropic');
  });

  it('uses the environment base URL', async () => {
    vi.stubEnv('ANTHROPIC_API_KEY', 'sk-ant-env');
    vi.stubEnv('ANTHROPIC_BASE_URL', server.anthropicBaseURL);
    const m = model('reg-env');
    server.script(m, [{ text: 'via env' }]);
    const res = await createProviderRegistry().get('anthropic').generate(request(m));
    expect(res.message.content).toBe('via env');
    expect(server.requests(m)[0]?.headers['authorization']).toBe('Bearer sk-ant-env');
  });

  it('a missing API key is a retryable configuration error that says what to do', () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    const registry = createProviderRegistry();
    let err: unknown;
    try {
      registry.get('openai');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProviderConfigError);
    expect(err).toMatchObject({ retryable: true, provider: 'openai' });
    expect((err as Error).message).toContain(
      "OPENAI_API_KEY is not set in the worker's environment: set it, or use a demo:... model",
    );
  });

  it('an unknown provider is a retryable configuration error naming the known ones', () => {
    let err: unknown;
    try {
      createProviderRegistry().get('gemini');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProviderConfigError);
    expect(err).toMatchObject({ retryable: true });
    expect((err as Error).message).toMatch(/gemini.*openai, anthropic, demo/);
  });
});
