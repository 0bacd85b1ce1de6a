/**
 * Runs hooks (src/core/hooks.ts says what they are): command hooks as processes, http hooks as
 * POSTs, all of an event's matching handlers in parallel, each within its timeout. What they
 * said is read by the pure interpretHook, so the runner only observes: exit status and output,
 * or HTTP status and body, or why it could not get them.
 */
import { spawn } from 'node:child_process';
import {
  combineHookVerdicts,
  type CommandHook,
  type HookEvent,
  type HookHandler,
  type HookInput,
  type HookRaw,
  type HookResult,
  hooksFor,
  type HooksConfig,
  hookTimeoutSeconds,
  type HttpHook,
  interpretHook,
} from '../core/hooks.js';

export interface RunHooksOptions {
  /** The project directory: where command hooks run, and their CLAUDE_PROJECT_DIR and KEEL_PROJECT_DIR. */
  cwd: string;
  /** Cancels the hooks (the activity's cancellation): running processes are killed, requests aborted, and runHooks rejects. */
  signal?: AbortSignal;
  /** The default for handlers that do not set failClosed: a failing hook denies or blocks. */
  failClosed?: boolean;
  /** Added to the environment hooks inherit; http header values may use them too. */
  env?: Record<string, string>;
}

/** Each of stdout, stderr and an HTTP body is kept to this many bytes; the rest is read and dropped. */
export const HOOK_OUTPUT_BYTES = 64 * 1024;
/** After a hook's process exits, how long its output pipes may stay open (a background child holding them) before keel stops reading. */
const PIPE_GRACE_MS = 1_000;

/**
 * Runs the handlers `config` has for `event` and `target` (see hooksFor) with `input`, in
 * parallel, and combines what they said. No handler holds it up beyond its own timeout.
 */
export async function runHooks(
  config: HooksConfig | undefined,
  event: HookEvent,
  target: string | undefined,
  input: HookInput,
  options: RunHooksOptions,
): Promise<HookResult> {
  const handlers = hooksFor(config, event, target);
  options.signal?.throwIfAborted();
  if (handlers.length === 0) return combineHookVerdicts([]);
  const body = JSON.stringify(input);
  const raws = await Promise.all(handlers.map((handler) => runHandler(event, handler, body, options)));
  // A cancelled run uses no verdict: a killed hook's silence must not read as an allow.
  options.signal?.throwIfAborted();
  return combineHookVerdicts(handlers.map((handler, i) => interpretHook(event, handler, raws[i]!, options.failClosed ?? false)));
}

function runHandler(event: HookEvent, handler: HookHandler, body: string, options: RunHooksOptions): Promise<HookRaw> {
  const timeoutMs = hookTimeoutSeconds(event, handler) * 1000;
  return handler.type === 'command' ? runCommand(handler, body, timeoutMs, options) : postHook(handler, body, timeoutMs, options);
}

/**
 * A command hook: `sh -c <command>` (or, with `args`, the executable itself) in the project
 * directory, the input on stdin. It leads its own process group, so a timeout or a cancel kills
 * whatever it started too.
 */
function runCommand(hook: CommandHook, body: string, timeoutMs: number, options: RunHooksOptions): Promise<HookRaw> {
  const { cwd, signal } = options;
  const env = { ...process.env, CLAUDE_PROJECT_DIR: cwd, KEEL_PROJECT_DIR: cwd, ...options.env };
  const [file, args] = hook.args
    ? [withProjectDir(hook.command, cwd), hook.args.map((a) => withProjectDir(a, cwd))]
    : ['sh', ['-c', hook.command]];

  return new Promise<HookRaw>((resolve) => {
    const child = spawn(file, args, { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout = new BoundedText(HOOK_OUTPUT_BYTES);
    const stderr = new BoundedText(HOOK_OUTPUT_BYTES);
    child.stdout.on('data', (chunk: Buffer) => stdout.add(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.add(chunk));
    // A hook that never reads its stdin may exit before we finish writing it: not an error.
    child.stdin.on('error', () => undefined);
    child.stdin.end(body);

    let exit: HookRaw | undefined;
    let settled = false;
    const finish = (raw: HookRaw) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      signal?.removeEventListener('abort', onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve(raw);
    };
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is already gone.
      }
    };

    const timer = setTimeout(() => {
      killGroup();
      finish({ kind: 'failed', error: `timed out after ${timeoutMs / 1000} s`, timedOut: true });
    }, timeoutMs);
    let grace: NodeJS.Timeout | undefined;
    const onAbort = () => {
      killGroup();
      finish({ kind: 'failed', error: 'cancelled', timedOut: false });
    };
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });

    child.on('error', (err) => finish({ kind: 'failed', error: `could not run ${file} in ${cwd}: ${err.message}`, timedOut: false }));
    child.on('exit', (code, sig) => {
      exit =
        code !== null
          ? { kind: 'exit', code, stdout: '', stderr: '' }
          : { kind: 'failed', error: `was killed by ${sig ?? 'a signal'}`, timedOut: false };
      // Normally 'close' follows at once; a background child that inherited the pipes could hold them open indefinitely.
      grace = setTimeout(() => finish(withOutput(exit!, stdout, stderr)), PIPE_GRACE_MS);
    });
    child.on('close', () => {
      if (exit) finish(withOutput(exit, stdout, stderr));
    });
  });
}

function withOutput(raw: HookRaw, stdout: BoundedText, stderr: BoundedText): HookRaw {
  if (raw.kind === 'exit') return { ...raw, stdout: stdout.text(), stderr: stderr.text() };
  if (raw.kind !== 'failed') return raw;
  // A hook killed by a signal: its stderr's first line often says why.
  const detail = stderr.text().trim();
  return detail ? { ...raw, error: `${raw.error}: ${detail.split('\n')[0]}` } : raw;
}

/** Exec form substitutes the project directory itself, as there is no shell to expand it. */
function withProjectDir(text: string, cwd: string): string {
  return text.replace(/\$\{(CLAUDE_PROJECT_DIR|KEEL_PROJECT_DIR)\}/g, cwd);
}

/**
 * An http hook: the input POSTed as JSON. Any answer comes back as status and body, for
 * interpretHook to read; a refused connection, a timeout or a cancel as a failure.
 */
async function postHook(hook: HttpHook, body: string, timeoutMs: number, options: RunHooksOptions): Promise<HookRaw> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  try {
    const response = await fetch(hook.url, {
      method: 'POST',
      headers: { ...expandHeaders(hook, options.env), 'content-type': 'application/json' },
      body,
      signal,
      // A redirect is answered as its 3xx status (a non-blocking error): a hook's POST is not re-sent elsewhere.
      redirect: 'manual',
    });
    return { kind: 'http', status: response.status, body: await readBounded(response, HOOK_OUTPUT_BYTES) };
  } catch (err) {
    if (timeout.aborted) return { kind: 'failed', error: `timed out after ${timeoutMs / 1000} s`, timedOut: true };
    if (options.signal?.aborted) return { kind: 'failed', error: 'cancelled', timedOut: false };
    return { kind: 'failed', error: `request failed: ${describeFetchError(err)}`, timedOut: false };
  }
}

/**
 * Header values with `$VAR` and `${VAR}` replaced, as Claude Code does: from the environment,
 * for variables listed in `allowedEnvVars` only; any other reference becomes an empty string,
 * so a header cannot leak a secret the settings did not name.
 */
export function expandHeaders(hook: HttpHook, env?: Record<string, string>): Record<string, string> {
  const allowed = new Set(hook.allowedEnvVars ?? []);
  const lookup = (name: string) => (allowed.has(name) ? (env?.[name] ?? process.env[name] ?? '') : '');
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(hook.headers ?? {})) {
    out[name] = value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_m, braced?: string, bare?: string) =>
      lookup((braced ?? bare)!),
    );
  }
  return out;
}

/** The body's first `maxBytes`; the rest is not read. */
async function readBounded(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const text = new BoundedText(maxBytes);
  try {
    while (!text.full) {
      const { done, value } = await reader.read();
      if (done) break;
      text.add(Buffer.from(value));
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return text.text();
}

/** fetch says only "fetch failed"; the cause says what (ECONNREFUSED, ENOTFOUND...). */
function describeFetchError(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  const cause = e?.cause;
  return [e?.message ?? String(err), cause?.code ?? cause?.message].filter(Boolean).join(': ');
}

/** Output kept up to a number of bytes; later bytes are counted and dropped, so a chatty hook never blocks on a full pipe. */
class BoundedText {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private dropped = 0;
  constructor(private readonly maxBytes: number) {}

  get full(): boolean {
    return this.kept >= this.maxBytes;
  }

  add(chunk: Buffer): void {
    const room = this.maxBytes - this.kept;
    if (room > 0) {
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.chunks.push(part);
      this.kept += part.length;
    }
    this.dropped += Math.max(0, chunk.length - Math.max(room, 0));
  }

  text(): string {
    const text = Buffer.concat(this.chunks).toString('utf8');
    return this.dropped ? `${text}\n[… ${this.dropped} more bytes dropped by keel]` : text;
  }
}
