import Anthropic, { type APIError as AnthropicAPIError } from '@anthropic-ai/sdk';
import OpenAI, { type APIError as OpenAIAPIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startModelServer, type ModelServer, type RecordedRequest } from './support/model-server.js';
import { until } from './support/until.js';

let server: ModelServer;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  server = await startModelServer();
  openai = new OpenAI({ apiKey: 'test', baseURL: server.openaiBaseURL, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: 'test', baseURL: server.anthropicBaseURL, maxRetries: 0 });
});

afterAll(async () => {
  await server.close();
});

const userMessage = [{ role: 'user' as const, content: 'What is 1 + 2?' }];

/** Awaits a rejection and returns the error, so its fields can be inspected. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the request to fail');
}

describe('OpenAI Chat Completions', () => {
  it('answers with text in JSON mode', async () => {
    server.script('oa-text', [{ text: 'Three.', usage: { inputTokens: 11, outputTokens: 2 } }]);
    const completion = await openai.chat.completions.create({ model: 'oa-text', messages: userMessage });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('oa-text');
    expect(completion.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'Three.' });
    expect(completion.choices[0]?.message.tool_calls).toBeUndefined();
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 });
  });

  it('answers with tool calls in JSON mode, with default ids, stop reason and usage', async () => {
    server.script('oa-tools', [
      {
        toolCalls: [
          { name: 'add', arguments: { a: 1, b: 2 } },
          { id: 'mine', name: 'log', arguments: '{"line":"x"}' },
        ],
      },
    ]);
    const completion = await openai.chat.completions.create({ model: 'oa-tools', messages: userMessage });
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBeNull();
    expect(choice?.message.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } },
      { id: 'mine', type: 'function', function: { name: 'log', arguments: '{"line":"x"}' } },
    ]);
    const expectedInput = Math.ceil(JSON.stringify(userMessage).length / 4);
    expect(completion.usage?.prompt_tokens).toBe(expectedInput);
    expect(completion.usage?.completion_tokens).toBe(Math.ceil(('{"a":1,"b":2}' + '{"line":"x"}').length / 4));
  });

  it('streams text and tool calls as deltas, with a final usage chunk and [DONE]', async () => {
    server.script('oa-stream', [
      {
        text: 'Let me add those numbers for you.',
        toolCalls: [{ name: 'add', arguments: { a: 1, b: 2, note: 'a long enough argument to need several chunks' } }],
        usage: { inputTokens: 5, outputTokens: 9 },
      },
    ]);
    const stream = await openai.chat.completions.create({
      model: 'oa-stream',
      messages: userMessage,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    const args: string[] = [];
    const ids: string[] = [];
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    let textChunks = 0;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      if (choice.delta.content) {
        text += choice.delta.content;
        textChunks++;
      }
      for (const call of choice.delta.tool_calls ?? []) {
        if (call.id) ids[call.index] = call.id;
        args[call.index] = (args[call.index] ?? '') + (call.function?.arguments ?? '');
      }
      finish = choice.finish_reason ?? finish;
    }
    expect(text).toBe('Let me add those numbers for you.');
    expect(textChunks).toBeGreaterThan(1);
    expect(ids).toEqual(['call_1']);
    expect(JSON.parse(args[0] ?? '')).toEqual({ a: 1, b: 2, note: 'a long enough argument to need several chunks' });
    expect(finish).toBe('tool_calls');
    expect(usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 9 });
  });

  it('works with the SDK stream helper and reports max_tokens as length', async () => {
    server.script('oa-helper', [{ text: 'Cut sh', stopReason: 'max_tokens' }]);
    const completion = await openai.chat.completions
      .stream({ model: 'oa-helper', messages: userMessage })
      .finalChatCompletion();
    expect(completion.choices[0]?.message.content).toBe('Cut sh');
    expect(completion.choices[0]?.finish_reason).toBe('length');
  });

  it('omits usage from a stream unless include_usage is asked for', async () => {
    server.script('oa-no-usage', [{ text: 'hi' }]);
    const stream = await openai.chat.completions.create({ model: 'oa-no-usage', messages: userMessage, stream: true });
    for await (const chunk of stream) {
      expect(chunk.usage).toBeUndefined();
      expect(chunk.choices).toHaveLength(1);
    }
  });

  it('sends malformed tool arguments verbatim', async () => {
    server.script('oa-bad-args', [{ toolCalls: [{ name: 'add', arguments: '{"a": 1,' }] }]);
    const completion = await openai.chat.completions.create({ model: 'oa-bad-args', messages: userMessage });
    expect(completion.choices[0]?.message.tool_calls?.[0]).toMatchObject({ function: { arguments: '{"a": 1,' } });
  });
});

describe('Anthropic Messages', () => {
  const params = { max_tokens: 256, messages: userMessage };

  it('answers with text in JSON mode', async () => {
    server.script('an-text', [{ text: 'Three.', usage: { inputTokens: 11, outputTokens: 2 } }]);
    const message = await anthropic.messages.create({ model: 'an-text', ...params });
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'an-text',
      stop_reason: 'end_turn',
      content: [{ type: 'text', text: 'Three.' }],
      usage: { input_tokens: 11, output_tokens: 2 },
    });
  });

  it('answers with tool_use blocks in JSON mode', async () => {
    server.script('an-tools', [
      { text: 'Adding.', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }, { name: 'add', arguments: '{"a":3,"b":4}' }] },
    ]);
    const message = await anthropic.messages.create({ model: 'an-tools', ...params });
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toMatchObject([
      { type: 'text', text: 'Adding.' },
      { type: 'tool_use', id: 'toolu_1', name: 'add', input: { a: 1, b: 2 } },
      { type: 'tool_use', id: 'toolu_2', name: 'add', input: { a: 3, b: 4 } },
    ]);
  });

  it('streams through messages.stream().finalMessage()', async () => {
    server.script('an-stream', [
      {
        text: 'Let me add those numbers for you.',
        toolCalls: [{ name: 'add', arguments: { a: 1, b: 2, note: 'a long enough argument to need several chunks' } }],
        usage: { inputTokens: 5, outputTokens: 9 },
      },
    ]);
    const stream = anthropic.messages.stream({ model: 'an-stream', ...params });
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const message = await stream.finalMessage();
    expect(deltas.length).toBeGreaterThan(1);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input_tokens: 5, output_tokens: 9 });
    expect(message.content).toMatchObject([
      { type: 'text', text: 'Let me add those numbers for you.' },
      { type: 'tool_use', id: 'toolu_1', name: 'add', input: { a: 1, b: 2, note: 'a long enough argument to need several chunks' } },
    ]);
  });

  it('sends the real event sequence and reports max_tokens', async () => {
    server.script('an-events', [{ text: 'Cut sh', stopReason: 'max_tokens' }]);
    const stream = await anthropic.messages.create({ model: 'an-events', ...params, stream: true });
    const types: string[] = [];
    let stopReason: string | null = null;
    for await (const event of stream) {
      types.push(event.type === 'content_block_delta' ? `${event.type}:${event.delta.type}` : event.type);
      if (event.type === 'message_delta') stopReason = event.delta.stop_reason;
    }
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta:text_delta',
      'content_block_delta:text_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(stopReason).toBe('max_tokens');
  });

  it('passes malformed tool arguments through: raw string input in JSON mode, verbatim deltas when streaming', async () => {
    server.script('an-bad-args', [
      { toolCalls: [{ name: 'add', arguments: '{"a": 1,' }] },
      { toolCalls: [{ name: 'add', arguments: '{"a": 1,' }] },
    ]);
    const message = await anthropic.messages.create({ model: 'an-bad-args', ...params });
    expect(message.content[0]).toMatchObject({ type: 'tool_use', input: '{"a": 1,' });

    const stream = await anthropic.messages.create({ model: 'an-bad-args', ...params, stream: true });
    let json = '';
    for await (const event of stream) {
      if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta') json += event.delta.partial_json;
    }
    expect(json).toBe('{"a": 1,');
  });
});

describe('scripts', () => {
  it('consults a Responder with each request and its per-model index', async () => {
    const seen: Array<[RecordedRequest, number]> = [];
    server.script('responder', (request, index) => {
      seen.push([request, index]);
      return { text: `answer ${index} to ${request.body.messages.at(-1).content}` };
    });
    const first = await openai.chat.completions.create({ model: 'responder', messages: userMessage });
    const second = await anthropic.messages.create({ model: 'responder', max_tokens: 10, messages: userMessage });
    expect(first.choices[0]?.message.content).toBe('answer 0 to What is 1 + 2?');
    expect(second.content[0]).toMatchObject({ text: 'answer 1 to What is 1 + 2?' });
    expect(seen.map(([request, index]) => [request.api, index])).toEqual([
      ['openai', 0],
      ['anthropic', 1],
    ]);
  });

  it('answers 400 naming the model when the script runs out or was never written', async () => {
    server.script('short', [{ text: 'only one' }]);
    await openai.chat.completions.create({ model: 'short', messages: userMessage });
    const openaiError = await failure(openai.chat.completions.create({ model: 'short', messages: userMessage }));
    expect(openaiError).toBeInstanceOf(OpenAI.BadRequestError);
    expect((openaiError as OpenAIAPIError).message).toContain('no scripted reply left for model "short"');

    const anthropicError = await failure(anthropic.messages.create({ model: 'never-scripted', max_tokens: 10, messages: userMessage }));
    expect(anthropicError).toBeInstanceOf(Anthropic.BadRequestError);
    expect((anthropicError as AnthropicAPIError).apiMessage).toContain('no scripted reply left for model "never-scripted"');
    expect((anthropicError as AnthropicAPIError).type).toBe('invalid_request_error');
  });

  it('records every request, faulted ones included, in order', async () => {
    const before = Date.now();
    server.script('recorded', [{ fault: 'status', status: 500 }, { text: 'ok' }]);
    await failure(openai.chat.completions.create({ model: 'recorded', messages: userMessage }));
    await anthropic.messages.stream({ model: 'recorded', max_tokens: 10, messages: userMessage }).finalMessage();
    const requests = server.requests('recorded');
    expect(requests).toHaveLength(2);
    expect(requests[0]).toMatchObject({ api: 'openai', model: 'recorded', stream: false, body: { messages: userMessage } });
    expect(requests[0]?.headers['authorization']).toBe('Bearer test');
    expect(requests[1]).toMatchObject({ api: 'anthropic', model: 'recorded', stream: true, body: { max_tokens: 10 } });
    expect(requests[1]?.headers['anthropic-version']).toBeDefined();
    expect(requests[0]!.receivedAt).toBeGreaterThanOrEqual(before);
    expect(requests[1]!.receivedAt).toBeGreaterThanOrEqual(requests[0]!.receivedAt);
    expect(server.requests()).toEqual(expect.arrayContaining(requests));
  });

  it('spaces the events of a stream by chunkDelayMs, sending the first at once', async () => {
    server.script('slow-stream', [{ text: 'one two three four', chunkDelayMs: 40 }, { text: 'one two three four', chunkDelayMs: 40 }]);
    const start = Date.now();
    const stream = await openai.chat.completions.create({ model: 'slow-stream', messages: userMessage, stream: true });
    const arrivals: number[] = [];
    let text = '';
    for await (const chunk of stream) {
      arrivals.push(Date.now());
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text).toBe('one two three four');
    // Role chunk, four words, the finish chunk: five pauses at least between the first and the last.
    expect(arrivals.length).toBeGreaterThanOrEqual(6);
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThanOrEqual(5 * 40 - 10);
    expect(arrivals[0]! - start).toBeLessThan(arrivals.at(-1)! - start);

    const message = await anthropic.messages
      .stream({ model: 'slow-stream', max_tokens: 10, messages: userMessage })
      .finalMessage();
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'one two three four' });
    expect(server.requests('slow-stream').map((r) => r.closedAt)).toEqual([undefined, undefined]);
  });

  it('records when a client leaves before the answer is complete (closedAt)', async () => {
    server.script('left', [{ fault: 'hang' }, { text: 'a b c d e f', chunkDelayMs: 5_000 }, { text: 'kept' }]);
    const controller = new AbortController();
    const hanging = failure(openai.chat.completions.create({ model: 'left', messages: userMessage }, { signal: controller.signal }));
    await until(() => server.requests('left').length, (n) => n >= 1, { intervalMs: 5 });
    controller.abort();
    await hanging;
    // A stream the client stops reading after its first event.
    const stream = await openai.chat.completions.create({ model: 'left', messages: userMessage, stream: true });
    for await (const chunk of stream) {
      void chunk;
      break;
    }
    await openai.chat.completions.create({ model: 'left', messages: userMessage });
    const [hung, slow, answered] = server.requests('left');
    await expect.poll(() => slow!.closedAt).toBeDefined();
    expect(hung!.closedAt).toBeGreaterThanOrEqual(hung!.receivedAt);
    expect(slow!.closedAt).toBeGreaterThanOrEqual(slow!.receivedAt);
    expect(answered!.closedAt).toBeUndefined();
  });

  it('delays a reply by delayMs', async () => {
    server.script('slow', [{ text: 'late', delayMs: 60 }]);
    const start = Date.now();
    await openai.chat.completions.create({ model: 'slow', messages: userMessage });
    expect(Date.now() - start).toBeGreaterThanOrEqual(55);
  });

  it('forgets scripts and requests on reset', async () => {
    const own = await startModelServer();
    try {
      own.script('m', [{ text: 'a' }]);
      const client = new OpenAI({ apiKey: 'test', baseURL: own.openaiBaseURL, maxRetries: 0 });
      own.reset();
      expect(own.requests()).toEqual([]);
      await expect(client.chat.completions.create({ model: 'm', messages: userMessage })).rejects.toThrow(/no scripted reply left/);
      own.reset();
      expect(own.requests()).toEqual([]);
    } finally {
      await own.close();
    }
  });
});

describe('faults', () => {
  it('answers an OpenAI status fault with Retry-After and a provider-shaped body', async () => {
    server.script('oa-429', [
      { fault: 'status', status: 429, retryAfter: 7 },
      { fault: 'status', status: 429, body: { error: { message: 'quota', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } } },
    ]);
    const limited = await failure(openai.chat.completions.create({ model: 'oa-429', messages: userMessage }));
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((limited as OpenAIAPIError).headers?.get('retry-after')).toBe('7');
    expect((limited as OpenAIAPIError).code).toBe('rate_limit_exceeded');

    const quota = await failure(openai.chat.completions.create({ model: 'oa-429', messages: userMessage }));
    expect((quota as OpenAIAPIError).status).toBe(429);
    expect((quota as OpenAIAPIError).code).toBe('insufficient_quota');
  });

  it('answers Anthropic status faults with the matching error type', async () => {
    server.script('an-faults', [
      { fault: 'status', status: 529 },
      { fault: 'status', status: 429, retryAfter: 3 },
    ]);
    const overloaded = await failure(anthropic.messages.create({ model: 'an-faults', max_tokens: 10, messages: userMessage }));
    expect(overloaded).toBeInstanceOf(Anthropic.OverloadedError);
    expect((overloaded as AnthropicAPIError).status).toBe(529);
    expect((overloaded as AnthropicAPIError).error).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });

    const limited = await failure(anthropic.messages.stream({ model: 'an-faults', max_tokens: 10, messages: userMessage }).finalMessage());
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect((limited as AnthropicAPIError).headers?.get('retry-after')).toBe('3');
  });

  it('sends Retry-After verbatim when it is a string, and any other header', async () => {
    server.script('ra-verbatim', [
      { fault: 'status', status: 529, retryAfter: 'Wed, 21 Oct 2015 07:28:00 GMT' },
      { fault: 'status', status: 429, retryAfter: '-5', headers: { 'retry-after-ms': 'soon' } },
    ]);
    const dated = await failure(anthropic.messages.create({ model: 'ra-verbatim', max_tokens: 10, messages: userMessage }));
    expect((dated as AnthropicAPIError).headers?.get('retry-after')).toBe('Wed, 21 Oct 2015 07:28:00 GMT');
    const negative = await failure(openai.chat.completions.create({ model: 'ra-verbatim', messages: userMessage }));
    expect((negative as OpenAIAPIError).headers?.get('retry-after')).toBe('-5');
    expect((negative as OpenAIAPIError).headers?.get('retry-after-ms')).toBe('soon');
  });

  it('answers with a given body: JSON that is not what the API promises, or any text', async () => {
    server.script('body', [
      { fault: 'body', body: { hello: 'world' } },
      { fault: 'body', body: '<html>Welcome</html>', contentType: 'text/html' },
    ]);
    const completion: unknown = await openai.chat.completions.create({ model: 'body', messages: userMessage });
    expect(completion).toEqual({ hello: 'world' });
    const message: unknown = await anthropic.messages.create({ model: 'body', max_tokens: 10, messages: userMessage });
    expect(message).toBe('<html>Welcome</html>');
  });

  it('resets the connection', async () => {
    server.script('reset', [{ fault: 'reset' }, { fault: 'reset' }]);
    const fromOpenAI = await failure(openai.chat.completions.create({ model: 'reset', messages: userMessage }));
    expect(fromOpenAI).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(fromOpenAI).not.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    const fromAnthropic = await failure(anthropic.messages.create({ model: 'reset', max_tokens: 10, messages: userMessage }));
    expect(fromAnthropic).toBeInstanceOf(Anthropic.APIConnectionError);
  });

  it('hangs until the SDK times out', async () => {
    server.script('hang', [{ fault: 'hang' }, { fault: 'hang' }]);
    const fromOpenAI = await failure(openai.chat.completions.create({ model: 'hang', messages: userMessage }, { timeout: 150 }));
    expect(fromOpenAI).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    const fromAnthropic = await failure(
      anthropic.messages.create({ model: 'hang', max_tokens: 10, messages: userMessage }, { timeout: 150 }),
    );
    expect(fromAnthropic).toBeInstanceOf(Anthropic.APIConnectionTimeoutError);
  });

  it('drops the connection when a bounded hang ends', async () => {
    server.script('hang-ms', [{ fault: 'hang', ms: 30 }]);
    const error = await failure(openai.chat.completions.create({ model: 'hang-ms', messages: userMessage }));
    expect(error).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(error).not.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
  });

  it('answers 200 with a body that is not JSON', async () => {
    // The SDKs log the unparsable SSE data before throwing; that noise is expected here.
    const quietOpenAI = new OpenAI({ apiKey: 'test', baseURL: server.openaiBaseURL, maxRetries: 0, logLevel: 'off' });
    const quietAnthropic = new Anthropic({ apiKey: 'test', baseURL: server.anthropicBaseURL, maxRetries: 0, logLevel: 'off' });
    server.script('malformed', Array.from({ length: 4 }, () => ({ fault: 'malformed-json' as const })));
    await expect(quietOpenAI.chat.completions.create({ model: 'malformed', messages: userMessage })).rejects.toThrow(SyntaxError);
    await expect(quietAnthropic.messages.create({ model: 'malformed', max_tokens: 10, messages: userMessage })).rejects.toThrow(
      SyntaxError,
    );
    await expect(
      (async () => {
        const stream = await quietOpenAI.chat.completions.create({ model: 'malformed', messages: userMessage, stream: true });
        const chunks = [];
        for await (const chunk of stream) chunks.push(chunk);
      })(),
    ).rejects.toThrow(SyntaxError);
    await expect(
      quietAnthropic.messages.stream({ model: 'malformed', max_tokens: 10, messages: userMessage }).finalMessage(),
    ).rejects.toThrow(/JSON/);
  });

  it('ends hanging responses at once on close', async () => {
    const own = await startModelServer();
    own.script('m', [{ fault: 'hang' }, { text: 'never sent', delayMs: 60_000 }]);
    const client = new OpenAI({ apiKey: 'test', baseURL: own.openaiBaseURL, maxRetries: 0 });
    const hanging = failure(client.chat.completions.create({ model: 'm', messages: userMessage }));
    const delayed = failure(client.chat.completions.create({ model: 'm', messages: userMessage }));
    await until(() => own.requests().length, (n) => n >= 2, { intervalMs: 5 });
    await own.close();
    expect(await hanging).toBeInstanceOf(OpenAI.APIConnectionError);
    expect(await delayed).toBeInstanceOf(OpenAI.APIConnectionError);
    // Both were closed unanswered by close() (left alone, the delayed one answers after a minute).
    await vi.waitFor(() => expect(own.requests().map((r) => r.closedAt !== undefined)).toEqual([true, true]));
  });
});
