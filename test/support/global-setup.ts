/**
 * Starts the Temporal dev server the tests use, through temporal-dev.sh (which builds the CLI
 * if it is missing), on ports of its own so a developer's server on 7233 is left alone.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
export const TEST_PORT = process.env.KEEL_TEST_TEMPORAL_PORT ?? '7433';
const env = { ...process.env, TEMPORAL_PORT: TEST_PORT, TEMPORAL_UI_PORT: String(Number(TEST_PORT) + 1000) };

export default function setup(): () => void {
  const wasRunning = isRunning();
  execFileSync('./temporal-dev.sh', ['start'], { cwd: root, env, stdio: 'inherit' });
  return () => {
    if (!wasRunning && !process.env.KEEL_TEST_KEEP_SERVER) {
      execFileSync('./temporal-dev.sh', ['stop'], { cwd: root, env, stdio: 'inherit' });
    }
  };
}

function isRunning(): boolean {
  try {
    execFileSync('./temporal-dev.sh', ['status'], { cwd: root, env, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
