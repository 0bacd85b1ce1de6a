/** Running the `keel` CLI as a child process against the tests' dev server. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = fileURLToPath(new URL('../../bin/keel.js', import.meta.url));
export const ADDRESS = `127.0.0.1:${process.env.KEEL_TEST_TEMPORAL_PORT ?? '7433'}`;

/** The child's environment: the tests' server, the offline demo model, no colors. */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(TEMPORAL_|KEEL_)/.test(key)) continue;
    if (['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'FORCE_COLOR', 'NODE_OPTIONS'].includes(key)) continue;
    env[key] = value;
  }
  return { ...env, TEMPORAL_ADDRESS: ADDRESS, NO_COLOR: '1', ...extra };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end and collects its output; one that does not end in time is killed and rejected. */
export function runCommand(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number; label?: string; /** Written to its stdin, which then ends. */ stdin?: string },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env });
    if (options.stdin !== undefined) child.stdin.end(options.stdin);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${options.label ?? [command, ...args].join(' ')} did not finish in time.\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, options.timeoutMs ?? 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export function keel(args: string[], options: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<CliResult> {
  return runCommand(process.execPath, [BIN, ...args], {
    cwd: root,
    env: cliEnv(options.env),
    label: `keel ${args.join(' ')}`,
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
  });
}
