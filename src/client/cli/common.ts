/** Small things the CLI's program and commands share (kept apart so neither imports the other). */

/** The default task queue, as DEFAULT_TASK_QUEUE in workflows/api.ts (not imported: it pulls in the workflow SDK). */
export const DEFAULT_TASK_QUEUE = 'keel';

/** The options every command takes. */
export interface GlobalOptions {
  address?: string;
  namespace?: string;
  profile?: string;
  uiUrl?: string;
}

/** An error whose message says all: the CLI prints it without a stack trace and exits 1. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

/**
 * The Web UI that goes with the server: --ui-url, else KEEL_UI_URL, else for a local server
 * the dev server's own default (its port + 1000, as `temporal server start-dev` does).
 */
export function uiUrlFor(address: string, explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (explicit) return explicit;
  if (env.KEEL_UI_URL) return env.KEEL_UI_URL;
  const match = /^(?:localhost|127\.0\.0\.1|\[::1\]|0\.0\.0\.0):(\d+)$/.exec(address.trim());
  if (match?.[1]) return `http://localhost:${Number(match[1]) + 1000}`;
  return 'http://localhost:8233';
}
