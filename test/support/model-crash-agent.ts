/** The agent of the model-call crash test, shared by the worker process that is killed and the one that takes over. */
import { defineAgent } from '../../src/core/define.js';

export const MODEL_CRASH_MODEL = 'model-crash';
/** Short, so the test is; the bound the test asserts is derived from it. */
export const MODEL_CRASH_HEARTBEAT_TIMEOUT_MS = 3_000;

export const modelCrashAgent = defineAgent({
  name: 'model-crash-test',
  instructions: 'Answer, however long it takes.',
  model: `openai:${MODEL_CRASH_MODEL}`,
  modelSettings: { heartbeatTimeoutMs: MODEL_CRASH_HEARTBEAT_TIMEOUT_MS, retry: { initialInterval: '100ms' } },
});

export const STREAM_CRASH_MODEL = 'stream-crash';

/** The agent of the streaming crash test: a streamed answer whose worker is killed mid-stream. */
export const streamCrashAgent = defineAgent({
  name: 'stream-crash-test',
  instructions: 'Answer at length.',
  model: `openai:${STREAM_CRASH_MODEL}`,
  modelSettings: { heartbeatTimeoutMs: MODEL_CRASH_HEARTBEAT_TIMEOUT_MS, retry: { initialInterval: '100ms' } },
});
