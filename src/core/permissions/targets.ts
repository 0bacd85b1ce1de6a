/** What a call is about: the command, path, URL or key its rules are matched against. Pure. */

import { PATH_TOOLS, type PermissionRequest, type PermissionSettings } from './rules.js';
import { resolvePath } from './paths.js';

export type Target =
  | { kind: 'command'; command: string }
  | { kind: 'path'; path: string }
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
    return typeof command === 'string' && command.trim() !== '' ? { kind: 'command', command } : { kind: 'none' };
  }
  if (PATH_TOOLS.has(request.tool)) {
    const raw = pathArgument(request);
    if (raw === undefined) return { kind: 'none' };
    const path = resolvePath(raw, cwd, settings.home);
    return path === undefined ? { kind: 'unresolved' } : { kind: 'path', path };
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
