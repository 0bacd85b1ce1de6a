/**
 * Paths and path patterns: normalization, where a pattern is rooted, gitignore-like matching.
 * Pure: it runs inside workflow code, so paths are normalized and globs matched here.
 */

import { escapeRegExp, STAR, tokenize } from './commands.js';
import type { PermissionSettings } from './rules.js';

/** Resolve `.` and `..` (never above the root) and collapse `//` in an absolute POSIX path. */
export function normalizePath(path: string): string {
  const out: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return `/${out.join('/')}`;
}

/** Like normalizePath for a relative path; the `..` that climb above its start stay. */
export function relativePath(path: string): string {
  const out: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..' && out.length > 0 && out[out.length - 1] !== '..') out.pop();
    else out.push(segment);
  }
  return out.join('/');
}

export function resolvePath(path: string, cwd: string, home: string | undefined): string | undefined {
  if (path === '~' || path.startsWith('~/')) return home === undefined ? undefined : normalizePath(`${home}/${path.slice(1)}`);
  return normalizePath(path.startsWith('/') ? path : `${cwd}/${path}`);
}

/**
 * Where a path pattern is rooted, as Claude Code defines it: `//x` at the filesystem root,
 * `~/x` at home, `/x` at the project root (keel has no separate project root: it is
 * `settings.cwd`), `./x` and `x` at the working directory. As in gitignore, a pattern without
 * a `/` (`*.env`, `.env`) matches at any depth below the working directory.
 */
function anchor(pattern: string, settings: PermissionSettings): string | undefined {
  const cwd = settings.cwd ?? '/';
  if (pattern.startsWith('//')) return pattern.slice(1);
  if (pattern === '~' || pattern.startsWith('~/')) return settings.home === undefined ? undefined : `${settings.home}/${pattern.slice(2)}`;
  if (pattern.startsWith('/')) return `${cwd}${pattern}`;
  if (pattern.startsWith('./')) return `${cwd}/${pattern.slice(2)}`;
  return pattern.replace(/\/$/, '').includes('/') ? `${cwd}/${pattern}` : `${cwd}/**/${pattern}`;
}

/**
 * gitignore-like: `*` matches within one segment, `**` any number of segments (`dir/**` also
 * matches `dir`), and a pattern that matches a directory matches everything inside it. The
 * path is already normalized, so `./src/../../etc/passwd` is judged where it really points.
 */
export function pathMatches(pattern: string, path: string, settings: PermissionSettings): boolean {
  const anchored = anchor(pattern, settings);
  if (anchored === undefined) return false;
  const pat = normalizePath(anchored).split('/').filter(Boolean);
  const segments = path.split('/').filter(Boolean);
  for (let n = segments.length; n >= 0; n--) {
    if (matchSegments(pat, 0, segments.slice(0, n), 0)) return true;
  }
  return false;
}

function matchSegments(pat: readonly string[], i: number, path: readonly string[], j: number): boolean {
  if (i === pat.length) return j === path.length;
  if (pat[i] === '**') {
    for (let k = j; k <= path.length; k++) if (matchSegments(pat, i + 1, path, k)) return true;
    return false;
  }
  if (j === path.length) return false;
  return segmentMatches(pat[i]!, path[j]!) && matchSegments(pat, i + 1, path, j + 1);
}

function segmentMatches(pattern: string, name: string): boolean {
  const source = tokenize(pattern)
    .map((t) => (t === STAR ? '[^/]*' : escapeRegExp(t)))
    .join('');
  return new RegExp(`^${source}$`).test(name);
}
