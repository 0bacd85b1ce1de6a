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
