/**
 * The tests' environment, whatever the shell holds. vitest runs this module first in every test
 * process (`setupFiles` in vitest.config.ts), before a test file imports anything: it removes
 * every variable that picks a model or reaches a provider (OPENAI_*, ANTHROPIC_*, KEEL_MODEL, which
 * the demo agent reads when it is defined and the provider registry reads at its first call) and
 * the settings keel and Temporal read from the environment (KEEL_UI_URL, KEEL_TASK_QUEUE,
 * TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, ...). In-process workers and clients read
 * this process's environment, and every process a test spawns inherits it, so no test can call a
 * real provider or a server other than the tests' own.
 */

/** What the tests' own set-up reads from the shell, and keeps. */
const KEPT = new Set(['KEEL_TEST_TEMPORAL_PORT', 'KEEL_TEST_KEEP_SERVER', 'KEEL_RECORD_FIXTURES', 'TEMPORAL_BIN']);

/** Whether a variable of the shell is one the tests must not see. */
export function isShellSetting(name: string): boolean {
  return !KEPT.has(name) && /^(OPENAI_|ANTHROPIC_|KEEL_|TEMPORAL_)/.test(name);
}

for (const name of Object.keys(process.env)) {
  if (isShellSetting(name)) delete process.env[name];
}
