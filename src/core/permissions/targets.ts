/** What a call is about: the command, path, URL or key its rules are matched against. Pure. */

import { PATH_TOOLS, type PermissionRequest, type PermissionSettings } from './rules.js';
import { resolvePath } from './paths.js';
import { analyzeCommand, type CommandLine } from './shell.js';

export type Target =
  /** A Bash command line, and what it runs as far as the parser sees. */
  | { kind: 'command'; command: string; line: CommandLine }
  /**
   * A resolved path; `decoded`, the other places it points if its percent-escapes are decoded
   * (`..%2f..%2fetc`): deny and ask rules match any of them, allow rules must match all.
   */
  | { kind: 'path'; path: string; decoded: string[] }
  /** A path that cannot be resolved (`~/` without a home): no rule about paths applies to it. */
  | { kind: 'unresolved' }
  | { kind: 'url'; host: string | undefined }
  | { kind: 'key'; key: string }
  | { kind: 'none' };

export function targetOf(settings: PermissionSettings, request: PermissionRequest): Target {
  const args = request.arguments ?? {};
  const cwd = settings.cwd ?? '/';
  if (request.tool === 'Bash') {
    const command = args.command;
    return typeof command === 'string' && command.trim() !== '' ? { kind: 'command', command, line: analyzeCommand(command) } : { kind: 'none' };
  }
  if (PATH_TOOLS.has(request.tool)) {
    const raw = pathArgument(request);
    if (raw === undefined) return { kind: 'none' };
    const path = resolvePath(raw, cwd, settings.home);
    if (path === undefined) return { kind: 'unresolved' };
    const decoded: string[] = [];
    for (let text = decodeOnce(raw), n = 0; text !== undefined && n < 3; text = decodeOnce(text), n++) {
      const other = resolvePath(text, cwd, settings.home);
      if (other !== undefined && other !== path && !decoded.includes(other)) decoded.push(other);
    }
    return { kind: 'path', path, decoded };
  }
  if (request.tool === 'WebFetch') {
    const url = args.url;
    if (typeof url !== 'string' || url.trim() === '') return { kind: 'none' };
    return { kind: 'url', host: hostOf(url) };
  }
  return request.key === undefined ? { kind: 'none' } : { kind: 'key', key: request.key };
}

export function pathArgument(request: PermissionRequest): string | undefined {
  const args = request.arguments ?? {};
  const raw = [args.file_path, args.notebook_path, args.path].find((p) => p !== undefined && p !== null);
  // Glob and Grep search the working directory when given no path.
  if ((raw === undefined || raw === '') && (request.tool === 'Glob' || request.tool === 'Grep')) return '.';
  return typeof raw === 'string' && raw !== '' ? raw : undefined;
}

// The WHATWG parser, as fetch uses: a hand-made one would disagree about `https://a.com\@b.com`.
function hostOf(url: string): string | undefined {
  try {
    const host = new URL(url).hostname.toLowerCase().replace(/\.$/, '');
    return host === '' ? undefined : host;
  } catch {
    return undefined;
  }
}

/** The text with its ASCII percent-escapes decoded (`%2e` is `.`), or undefined if it has none. */
function decodeOnce(text: string): string | undefined {
  const decoded = text.replace(/%([0-7][0-9a-fA-F])/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return decoded === text ? undefined : decoded;
}
