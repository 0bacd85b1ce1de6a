/**
 * Paths and path patterns: normalization, where a pattern is rooted, gitignore-like matching.
 * Pure: it runs inside workflow code, so paths are normalized and globs matched here.
 */

import picomatch from 'picomatch/posix.js';
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
 * matches `dir`), `?` one character, `[abc]` and `[a-z]` one of a set, `{a,b}` either; `\`
 * makes the next character literal. A pattern that matches a directory matches everything
 * inside it. The path is already normalized, so `./src/../../etc/passwd` is judged where it
 * really points. The glob is picomatch's, in its POSIX build (no `process` or `path`, so it
 * runs in the workflow sandbox), with dot files matched like any other (gitignore does) and
 * negation and extglobs off: `!` and `+(...)` are literal.
 */
export function pathMatches(pattern: string, path: string, settings: PermissionSettings): boolean {
  const anchored = anchor(pattern, settings);
  if (anchored === undefined) return false;
  const glob = compiled(normalizePath(anchored));
  const segments = path.split('/').filter(Boolean);
  for (let n = segments.length; n >= 0; n--) {
    if (glob.test(`/${segments.slice(0, n).join('/')}`)) return true;
  }
  return false;
}

const GLOB_OPTIONS: picomatch.PicomatchOptions = { dot: true, nonegate: true, noextglob: true };

// Compiled globs by pattern: a pure cache (the same pattern always compiles the same), kept small.
const globs = new Map<string, RegExp>();

function compiled(pattern: string): RegExp {
  let glob = globs.get(pattern);
  if (glob === undefined) {
    if (globs.size >= 256) globs.clear();
    glob = picomatch.makeRe(pattern, GLOB_OPTIONS);
    globs.set(pattern, glob);
  }
  return glob;
}

/** Escape what a path pattern would read as a glob, so the path matches only itself. */
export function escapeGlob(path: string): string {
  return path.replace(/[\\*?[\]{}()!+@]/g, (c) => `\\${c}`);
}
