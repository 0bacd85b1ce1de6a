/**
 * A scripted stand-in for the OpenAI Chat Completions and Anthropic Messages APIs.
 *
 * Tests point the real SDK clients at it and script, per model name, what each request
 * gets back: a reply (text, tool calls, usage, stop reason) or a fault (an HTTP error,
 * a reset connection, a hang, a body that is not JSON). Because scripts are keyed by the
 * request's `model` field, tests that share one server (or run in parallel) stay apart as
 * long as each uses its own model name.
 *
 * ```ts
 * const server = await startModelServer();
 * server.script('t1-model', [{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: '3' }]);
 * const openai = new OpenAI({ apiKey: 'test', baseURL: server.openaiBaseURL, maxRetries: 0 });
 * ```
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A tool call the model makes. */
export interface ScriptedToolCall {
  /** Defaults to `call_<n>` (OpenAI) or `toolu_<n>` (Anthropic), numbered per model from 1. */
  id?: string;
  name: string;
  /**
   * An object is sent as JSON. A string is sent verbatim, even if it is not valid JSON, so
   * tests can exercise malformed arguments. (Anthropic's non-streaming `input` is an object
   * on the wire: see {@link startModelServer} for how a string is mapped there.)
   */
  arguments: string | Record<string, unknown>;
}

/** A successful model turn. */
export interface ScriptedReply {
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** Defaults to a deterministic estimate from the sizes of the request messages and the reply. */
  usage?: { inputTokens: number; outputTokens: number };
  /** Defaults to `'tool_calls'` when there are tool calls, else `'end'`. */
  stopReason?: 'end' | 'tool_calls' | 'max_tokens';
  /** Wait this long before answering (for latency benchmarks and timeout tests). */
  delayMs?: number;
  /**
   * Streaming requests only: wait this long between two events of the stream (the first event
   * is sent at once), so a stream can take as long as a test needs while it keeps progressing.
   */
  chunkDelayMs?: number;
}

/** A failure the server produces instead of a reply. */
export type ScriptedFault =
  | {
      fault: 'status';
      status: number;
      /**
       * The `Retry-After` header: a number is seconds; a string is sent verbatim, so tests can
       * send what a real server might ('0', '-5', 'soon', an HTTP date).
       */
      retryAfter?: number | string;
      /** More response headers, sent verbatim (for example `{ 'retry-after-ms': '1500' }`). */
      headers?: Record<string, string>;
      /**
       * Sent as the JSON body. Default: a provider-shaped error body for the API that was
       * called, e.g. OpenAI `{error:{message,type,param,code}}` or Anthropic
       * `{type:'error', error:{type:'overloaded_error', message}}`.
       */
      body?: unknown;
    }
  /** Destroy the socket without answering. */
  | { fault: 'reset' }
  /**
   * Answer nothing for `ms`, then drop the connection. Without `ms`, hang until the client
   * goes away or the server closes.
   */
  | { fault: 'hang'; ms?: number }
  /** HTTP 200 with a body that is not JSON (for a streaming request: an SSE event whose data is not JSON). */
  | { fault: 'malformed-json' }
  /**
   * Exactly this body, whatever the API or `stream` (a string verbatim, anything else as JSON):
   * for answers that parse but are not what the API promises, such as `{ "hello": "world" }`.
   */
  | { fault: 'body'; body: unknown; status?: number; contentType?: string };

export type ScriptStep = ScriptedReply | ScriptedFault;

export interface RecordedRequest {
  api: 'openai' | 'anthropic';
  /** The body's `model` field, or `''` when there is none. */
  model: string;
  stream: boolean;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body, or the raw text when the body was not JSON. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests dig into SDK-shaped bodies freely
  body: any;
  /** `Date.now()` when the request body had been read. */
  receivedAt: number;
  /**
   * `Date.now()` when the connection closed before the whole answer was written: the client
   * gave up (an abort, a timeout, a cancelled activity) or a fault dropped it. Unset otherwise.
   */
  closedAt?: number;
  /** A stream's events as they were written, each with `Date.now()` at the write (for latency benchmarks). */
  sent?: { at: number; event: string }[];
}

/**
 * Computes the step for each request. `index` is the 0-based position of this request among
 * those for the same model since the server started or was last reset.
 */
export type Responder = (request: RecordedRequest, index: number) => ScriptStep;

export interface ModelServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** `${url}/v1`, the OpenAI SDK's `baseURL`. */
  openaiBaseURL: string;
  /** The Anthropic SDK's `baseURL` (the SDK itself appends `/v1/messages`). */
  anthropicBaseURL: string;
  /**
   * Scripts are keyed by the request's `model` field, so tests and parallel runs never share
   * a queue. Scripting a model again replaces its previous script (a list is not appended to).
   */
  script(model: string, steps: ScriptStep[] | Responder): void;
  /** Every request received, in order (optionally only those for one model). */
  requests(model?: string): RecordedRequest[];
  /** Forget scripts, recorded requests and id counters. */
  reset(): void;
  /** Stops listening; also ends hanging or delayed responses and open sockets at once. */
  close(): Promise<void>;
}

type Api = RecordedRequest['api'];
type StopReason = NonNullable<ScriptedReply['stopReason']>;

interface ResolvedToolCall {
  id: string;
  name: string;
  /** The arguments exactly as they go on the wire as a JSON text. */
  json: string;
}

interface ResolvedReply {
  text: string | undefined;
  toolCalls: ResolvedToolCall[];
  inputTokens: number;
  outputTokens: number;
  stopReason: StopReason;
  chunkDelayMs: number | undefined;
}

/** Per-model state; kept apart so ids and indexes do not depend on what other tests do. */
interface ModelState {
  script?: ScriptStep[] | Responder;
  requestCount: number;
  toolCallCount: number;
}

const JSON_HEADERS = { 'content-type': 'application/json' } as const;
const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
} as const;

/** Mirrors the documented Anthropic error types so SDK error classes and adapters see real values. */
const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** OpenAI's `type`/`code` pairs for the statuses an adapter has to classify. */
function openaiErrorKind(status: number): { type: string; code: string | null } {
  switch (status) {
    case 400:
      return { type: 'invalid_request_error', code: null };
    case 401:
      return { type: 'invalid_request_error', code: 'invalid_api_key' };
    case 403:
      return { type: 'invalid_request_error', code: 'unsupported_country_region_territory' };
    case 404:
      return { type: 'invalid_request_error', code: 'model_not_found' };
    case 429:
      return { type: 'requests', code: 'rate_limit_exceeded' };
    default:
      return status >= 500
        ? { type: 'server_error', code: null }
        : { type: 'invalid_request_error', code: null };
  }
}

function errorBody(api: Api, status: number, message: string): unknown {
  if (api === 'openai') {
    const { type, code } = openaiErrorKind(status);
    return { error: { message, type, param: null, code } };
  }
  const type = ANTHROPIC_ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  return { type: 'error', error: { type, message } };
}

/** Rough token estimate; only needs to be deterministic and non-zero. */
function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function isFault(step: ScriptStep): step is ScriptedFault {
  return typeof (step as { fault?: unknown }).fault === 'string';
}

/** Word-sized pieces, like a real stream; the pieces concatenate back to `text` exactly. */
function splitText(text: string): string[] {
  return text.match(/\S+\s*|\s+/gu) ?? [];
}

/** Fixed-size pieces on code-point boundaries, so clients have to reassemble partial JSON. */
function splitJson(json: string, size = 16): string[] {
  const points = Array.from(json);
  const pieces: string[] = [];
  for (let i = 0; i < points.length; i += size) pieces.push(points.slice(i, i + size).join(''));
  return pieces;
}

function sse(data: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
}

/**
 * Anthropic's `tool_use.input` is an object, so a scripted string is parsed. One that is not
 * valid JSON is sent as the raw string, so the adapter under test meets the malformed value.
 */
function anthropicInput(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}

function renderOpenAI(
  reply: ResolvedReply,
  model: string,
  id: string,
  includeUsage: boolean,
): { json: unknown; events: string[] } {
  const created = Math.floor(Date.now() / 1000);
  const finishReason = { end: 'stop', tool_calls: 'tool_calls', max_tokens: 'length' }[reply.stopReason];
  const usage = {
    prompt_tokens: reply.inputTokens,
    completion_tokens: reply.outputTokens,
    total_tokens: reply.inputTokens + reply.outputTokens,
  };
  const toolCalls = reply.toolCalls.map((call) => ({
    id: call.id,
    type: 'function' as const,
    function: { name: call.name, arguments: call.json },
  }));

  const json = {
    id,
    object: 'chat.completion',
    created,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text ?? null,
          refusal: null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finishReason,
      },
    ],
    usage,
  };

  // With include_usage, the real API puts `usage: null` on every chunk and the totals on an
  // extra final chunk with no choices; without it, chunks carry no usage field at all.
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
    sse({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(includeUsage ? { usage: null } : {}),
    });

  const events: string[] = [chunk({ role: 'assistant', content: reply.text === undefined ? null : '', refusal: null })];
  for (const piece of splitText(reply.text ?? '')) events.push(chunk({ content: piece }));
  reply.toolCalls.forEach((call, index) => {
    events.push(
      chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }),
    );
    for (const piece of splitJson(call.json)) {
      events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  events.push(chunk({}, finishReason));
  if (includeUsage) {
    events.push(sse({ id, object: 'chat.completion.chunk', created, model, choices: [], usage }));
  }
  events.push('data: [DONE]\n\n');

  return { json, events };
}

function renderAnthropic(reply: ResolvedReply, model: string, id: string): { json: unknown; events: string[] } {
  const stopReason = { end: 'end_turn', tool_calls: 'tool_use', max_tokens: 'max_tokens' }[reply.stopReason];
  const usage = (outputTokens: number) => ({
    input_tokens: reply.inputTokens,
    output_tokens: outputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    server_tool_use: null,
    service_tier: 'standard',
  });
  const message = (content: unknown[], stop: string | null, outputTokens: number) => ({
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    stop_details: null,
    container: null,
    usage: usage(outputTokens),
  });
  const toolUse = (call: ResolvedToolCall, input: unknown) => ({
    type: 'tool_use',
    id: call.id,
    name: call.name,
    input,
    caller: { type: 'direct' },
  });

  const content: unknown[] = [];
  if (reply.text !== undefined) content.push({ type: 'text', text: reply.text, citations: null });
  for (const call of reply.toolCalls) content.push(toolUse(call, anthropicInput(call.json)));
  const json = message(content, stopReason, reply.outputTokens);

  // The real sequence: message_start (with output_tokens so far), a ping, one start/delta*/stop
  // run per content block, then message_delta with the stop reason and final usage.
  const events: string[] = [
    sse({ type: 'message_start', message: message([], null, 1) }, 'message_start'),
    sse({ type: 'ping' }, 'ping'),
  ];
  let index = 0;
  if (reply.text !== undefined) {
    events.push(
      sse({ type: 'content_block_start', index, content_block: { type: 'text', text: '', citations: null } }, 'content_block_start'),
    );
    for (const piece of splitText(reply.text)) {
      events.push(sse({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } }, 'content_block_delta'));
    }
    events.push(sse({ type: 'content_block_stop', index }, 'content_block_stop'));
    index++;
  }
  for (const call of reply.toolCalls) {
    events.push(sse({ type: 'content_block_start', index, content_block: toolUse(call, {}) }, 'content_block_start'));
    for (const piece of splitJson(call.json)) {
      events.push(
        sse({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } }, 'content_block_delta'),
      );
    }
    events.push(sse({ type: 'content_block_stop', index }, 'content_block_stop'));
    index++;
  }
  events.push(
    sse(
      {
        type: 'message_delta',
        delta: { stop_reason: stopReason, stop_sequence: null, stop_details: null },
        usage: { input_tokens: reply.inputTokens, output_tokens: reply.outputTokens },
      },
      'message_delta',
    ),
    sse({ type: 'message_stop' }, 'message_stop'),
  );

  return { json, events };
}

/**
 * Starts the server on 127.0.0.1 (a random port unless `port` is given).
 *
 * Things a user must know:
 * - A request for a model with no script, or whose list script is used up, gets HTTP 400 with
 *   `no scripted reply left for model "X"`: 400 is not retried, so the test fails at once.
 *   A Responder that throws also yields a 400, naming the model and the error.
 * - Anthropic JSON mode: a tool call's `arguments` string is parsed into `input`; when it is
 *   not valid JSON, `input` is that raw string. In streaming mode the string is sent verbatim
 *   as the `input_json_delta` text, as the real API would stream it.
 * - Streams are written in one go unless `chunkDelayMs` spaces their events; `delayMs` delays
 *   the whole answer.
 */
export async function startModelServer(options: { port?: number } = {}): Promise<ModelServer> {
  const models = new Map<string, ModelState>();
  let recorded: RecordedRequest[] = [];
  let responseSeq = 0;
  /** Cancellers for every delayed reply and hang, so close() ends them at once instead of waiting. */
  const pending = new Set<() => void>();
  const sockets = new Set<Socket>();

  const stateFor = (model: string): ModelState => {
    let state = models.get(model);
    if (!state) {
      state = { requestCount: 0, toolCallCount: 0 };
      models.set(model, state);
    }
    return state;
  };

  const sendJson = (res: http.ServerResponse, status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}) => {
    res.writeHead(status, { ...JSON_HEADERS, ...headers });
    res.end(JSON.stringify(body));
  };

  /** Runs `fn` after `ms`, unless the client leaves or the server closes first. */
  const later = (res: http.ServerResponse, ms: number, fn: () => void, onCancel: () => void = () => {}) => {
    const cancel = () => {
      clearTimeout(timer);
      pending.delete(cancel);
      res.off('close', cancel);
      onCancel();
    };
    const timer = setTimeout(() => {
      pending.delete(cancel);
      res.off('close', cancel);
      fn();
    }, ms);
    pending.add(cancel);
    res.on('close', cancel);
  };

  const nextStep = (request: RecordedRequest, state: ModelState, index: number): ScriptStep | Error => {
    const script = state.script;
    if (typeof script === 'function') {
      try {
        return script(request, index);
      } catch (error) {
        return new Error(`responder for model "${request.model}" threw: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    return script?.shift() ?? new Error(`no scripted reply left for model "${request.model}"`);
  };

  const resolveReply = (api: Api, reply: ScriptedReply, request: RecordedRequest, state: ModelState): ResolvedReply => {
    const toolCalls = (reply.toolCalls ?? []).map((call) => {
      const n = ++state.toolCallCount;
      return {
        id: call.id ?? (api === 'openai' ? `call_${n}` : `toolu_${n}`),
        name: call.name,
        json: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
      };
    });
    const produced = (reply.text ?? '') + toolCalls.map((call) => call.json).join('');
    return {
      text: reply.text,
      toolCalls,
      inputTokens: reply.usage?.inputTokens ?? estimateTokens(JSON.stringify(request.body?.messages ?? [])),
      outputTokens: reply.usage?.outputTokens ?? estimateTokens(produced),
      stopReason: reply.stopReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'end'),
      chunkDelayMs: reply.chunkDelayMs,
    };
  };

  const answerReply = (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    request: RecordedRequest,
    reply: ResolvedReply,
    seq: number,
  ) => {
    const id = request.api === 'openai' ? `chatcmpl-scripted-${seq}` : `msg_scripted_${seq}`;
    const requestId = `req_scripted_${seq}`;
    const rendered =
      request.api === 'openai'
        ? renderOpenAI(reply, request.model, id, request.body?.stream_options?.include_usage === true)
        : renderAnthropic(reply, request.model, id);
    const idHeader = request.api === 'openai' ? { 'x-request-id': requestId } : { 'request-id': requestId };
    if (request.stream) {
      res.writeHead(200, { ...SSE_HEADERS, ...idHeader });
      const pause = reply.chunkDelayMs;
      if (!pause) {
        res.end(rendered.events.join(''));
        return;
      }
      // One event now, the next after the pause, and so on; a client that leaves ends it.
      const events = [...rendered.events];
      const sent: { at: number; event: string }[] = (request.sent = []);
      const writeNext = () => {
        const event = events.shift() ?? '';
        sent.push({ at: Date.now(), event });
        res.write(event);
        if (events.length === 0) res.end();
        else later(res, pause, writeNext, () => req.socket.destroy());
      };
      writeNext();
    } else {
      sendJson(res, 200, rendered.json, idHeader);
    }
  };

  const answerFault = (req: http.IncomingMessage, res: http.ServerResponse, request: RecordedRequest, fault: ScriptedFault) => {
    switch (fault.fault) {
      case 'status': {
        const headers: http.OutgoingHttpHeaders = { ...fault.headers };
        if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
        const body =
          fault.body ?? errorBody(request.api, fault.status, `scripted fault: HTTP ${fault.status} for model "${request.model}"`);
        sendJson(res, fault.status, body, headers);
        return;
      }
      case 'reset':
        req.socket.destroy();
        return;
      case 'hang':
        // Nothing is written; the socket is destroyed when the hang ends, or by close().
        if (fault.ms !== undefined) later(res, fault.ms, () => req.socket.destroy());
        else {
          const cancel = () => {
            pending.delete(cancel);
            res.off('close', cancel);
            req.socket.destroy();
          };
          pending.add(cancel);
          res.on('close', cancel);
        }
        return;
      case 'malformed-json':
        if (!request.stream) {
          res.writeHead(200, JSON_HEADERS);
          res.end('{"id": "truncated", "choices": [');
        } else {
          // Anthropic's SDK ignores SSE messages without an event name, so name one.
          res.writeHead(200, SSE_HEADERS);
          res.end(request.api === 'anthropic' ? 'event: message_start\ndata: {not json\n\n' : 'data: {not json\n\n');
        }
        return;
      case 'body':
        res.writeHead(fault.status ?? 200, { 'content-type': fault.contentType ?? JSON_HEADERS['content-type'] });
        res.end(typeof fault.body === 'string' ? fault.body : JSON.stringify(fault.body));
        return;
    }
  };

  const handle = (req: http.IncomingMessage, res: http.ServerResponse, raw: string) => {
    const path = (req.url ?? '').split('?')[0];
    const api: Api | undefined =
      req.method === 'POST' && path === '/v1/chat/completions'
        ? 'openai'
        : req.method === 'POST' && path === '/v1/messages'
          ? 'anthropic'
          : undefined;
    if (!api) {
      sendJson(res, 404, { error: { message: `model server: no route for ${req.method} ${req.url}`, type: 'not_found' } });
      return;
    }

    let body: unknown = raw;
    let parsed = true;
    try {
      body = JSON.parse(raw);
    } catch {
      parsed = false;
    }
    const fields = (parsed && typeof body === 'object' && body !== null ? body : {}) as { model?: unknown; stream?: unknown };
    const request: RecordedRequest = {
      api,
      model: typeof fields.model === 'string' ? fields.model : '',
      stream: fields.stream === true,
      headers: { ...req.headers },
      body,
      receivedAt: Date.now(),
    };
    const state = stateFor(request.model);
    const index = state.requestCount++;
    recorded.push(request);
    res.on('close', () => {
      if (!res.writableFinished) request.closedAt ??= Date.now();
    });
    const seq = ++responseSeq;

    if (!parsed) {
      sendJson(res, 400, errorBody(api, 400, 'model server: request body is not JSON'));
      return;
    }
    const step = nextStep(request, state, index);
    if (step instanceof Error) {
      sendJson(res, 400, errorBody(api, 400, step.message));
      return;
    }
    if (isFault(step)) {
      answerFault(req, res, request, step);
      return;
    }
    // Resolve now so tool-call ids follow request order even when delays reorder answers.
    const reply = resolveReply(api, step, request, state);
    if (step.delayMs !== undefined && step.delayMs > 0) {
      later(res, step.delayMs, () => answerReply(req, res, request, reply, seq), () => req.socket.destroy());
    } else {
      answerReply(req, res, request, reply, seq);
    }
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // A reset or a client abort surfaces as a socket error; it is expected here, not a crash.
  server.on('clientError', (_error, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });

  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  let closing: Promise<void> | undefined;

  return {
    url,
    openaiBaseURL: `${url}/v1`,
    anthropicBaseURL: url,
    script(model, steps) {
      // Copy a list so consuming it does not mutate the caller's array.
      stateFor(model).script = typeof steps === 'function' ? steps : [...steps];
    },
    requests(model) {
      return model === undefined ? [...recorded] : recorded.filter((request) => request.model === model);
    },
    reset() {
      models.clear();
      recorded = [];
    },
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        for (const cancel of [...pending]) cancel();
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}
