/** A small team for the tests that kill a worker while background agents run: an overseer and its watchers. */
import { defineAgent } from '../../src/core/define.js';

const retry = { retry: { initialInterval: '50ms', maximumInterval: '200ms' }, heartbeatTimeoutMs: 2_000 };

export const crewWatcher = defineAgent({
  name: 'crew-watcher',
  instructions: 'You watch.',
  model: 'openai:crew-watcher-model',
  modelSettings: retry,
});

export const crewOverseer = defineAgent({
  name: 'crew-overseer',
  instructions: 'You oversee.',
  model: 'openai:crew-overseer-model',
  modelSettings: retry,
  background: { agent: crewWatcher },
});
