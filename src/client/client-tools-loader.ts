/**
 * Loads a module of client tool handlers, as `keel run --tools` (and, next, `keel chat --tools`)
 * does: a module exporting `clientTools` or a default export that is an object of handlers by
 * tool name, or else named exports that are functions, each the handler of the tool it is named after.
 *
 *   // client-tools.js
 *   export async function read_file({ path }) { return readFile(path, 'utf8'); }
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ClientToolHandlers } from '../core/client-tools.js';

/** A module of client tools that cannot be used: the message says what is wrong and what to do. */
export class ClientToolsLoadError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ClientToolsLoadError';
  }
}

export async function loadClientTools(module: string, cwd = process.cwd()): Promise<ClientToolHandlers> {
  let exports: Record<string, unknown>;
  try {
    exports = (await import(pathToFileURL(resolve(cwd, module)).href)) as Record<string, unknown>;
  } catch (e) {
    const error = e as NodeJS.ErrnoException | undefined;
    const message = error?.message ?? String(e);
    const hint =
      error?.code === 'ERR_UNKNOWN_FILE_EXTENSION' && /\.[cm]?tsx?\b/.test(message)
        ? ' Node runs no TypeScript by itself: run keel through a loader (node --import tsx ...) or pass a compiled .js file.'
        : '';
    throw new ClientToolsLoadError(`Cannot load client tools from ${module}: ${message}.${hint}`, { cause: e });
  }
  const given = exports.clientTools ?? exports.default;
  const handlers: Record<string, unknown> =
    typeof given === 'object' && given !== null ? { ...(given as Record<string, unknown>) } : Object.fromEntries(Object.entries(exports).filter(([, v]) => typeof v === 'function'));
  const names = Object.keys(handlers);
  if (names.length === 0) {
    throw new ClientToolsLoadError(
      `${module} exports no client tool handlers: export an object of functions by tool name as \`clientTools\` or as the default export, or export a function named after each tool.`,
    );
  }
  const wrong = names.filter((n) => typeof handlers[n] !== 'function');
  if (wrong.length > 0) throw new ClientToolsLoadError(`${module}: the handler${wrong.length > 1 ? 's' : ''} for ${wrong.join(', ')} must be a function (args, ctx) => output.`);
  return handlers as ClientToolHandlers;
}
