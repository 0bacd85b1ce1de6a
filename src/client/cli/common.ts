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
