/**
 * A Python with `temporalio` and `jsonschema`, for the tests that use keel from another
 * language: a venv in ~/.cache/keel/py/<versions>, made on first use (about 15 s, from PyPI)
 * and reused after. Built in a scratch folder and renamed into place, so an interrupted install
 * leaves nothing half made.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const PYTHON_PACKAGES = ['temporalio==1.35.0', 'jsonschema==4.26.0'];

function findPython(): string {
  for (const candidate of [process.env.KEEL_TEST_PYTHON, 'python3', 'python']) {
    if (!candidate) continue;
    try {
      execFileSync(candidate, ['-c', 'import sys, venv; assert sys.version_info >= (3, 9)'], { stdio: 'ignore' });
      return candidate;
    } catch {
      // next
    }
  }
  throw new Error('These tests need Python 3.9 or later with the venv module (python3 on PATH, or KEEL_TEST_PYTHON).');
}

/** The venv's python, made when missing. */
export function pythonWithTemporal(): string {
  const root = join(process.env.KEEL_PY_CACHE ?? join(homedir(), '.cache', 'keel', 'py'));
  const dir = join(root, PYTHON_PACKAGES.join('_').replace(/[^A-Za-z0-9._-]/g, '-'));
  const python = join(dir, 'bin', 'python');
  if (existsSync(python)) {
    try {
      execFileSync(python, ['-c', 'import temporalio, jsonschema'], { stdio: 'ignore' });
      return python;
    } catch {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  mkdirSync(root, { recursive: true });
  const scratch = `${dir}.partial-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  execFileSync(findPython(), ['-m', 'venv', scratch], { stdio: 'inherit' });
  execFileSync(join(scratch, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...PYTHON_PACKAGES], {
    stdio: 'inherit',
  });
  // venv scripts name their folder; the python binary itself works from any path.
  try {
    renameSync(scratch, dir);
  } catch (err) {
    // Another process made it first.
    rmSync(scratch, { recursive: true, force: true });
    if (!existsSync(python)) throw err;
  }
  return python;
}
