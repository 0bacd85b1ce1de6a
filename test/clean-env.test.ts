/**
 * The suite passes whatever the shell holds, and calls no real provider (test/support/clean-env.ts):
 * the suite's configuration runs a probe from a shell that exports a real provider's settings.
 */
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { runCommand } from './support/cli.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));

it('a shell that names a real provider reaches no test process, nor any process a test starts', async () => {
  const shell = {
    KEEL_MODEL: 'openai:gpt-4.1',
    OPENAI_API_KEY: 'sk-bogus',
    OPENAI_BASE_URL: 'http://127.0.0.1:9',
    ANTHROPIC_API_KEY: 'bogus',
    ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
    TEMPORAL_ADDRESS: '127.0.0.1:1',
    KEEL_UI_URL: 'http://ui.example',
    KEEL_TEST_TEMPORAL_PORT: '7999',
  };
  const result = await runCommand(process.execPath, [vitest, 'run', '--config', 'test/fixtures/env-probe/vitest.config.ts'], {
    cwd: root,
    env: { ...process.env, ...shell, NO_COLOR: '1' },
    timeoutMs: 120_000,
  });
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
  expect(result.stdout).toMatch(/Tests\s+3 passed \(3\)/);
}, 120_000);
