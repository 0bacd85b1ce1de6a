/**
 * An interactive program on a pseudo-terminal (Python's `pty`, relayed by test/support/pty-relay.py):
 * the program sees a TTY; the test writes keystrokes and waits for text to appear.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const RELAY = fileURLToPath(new URL('./pty-relay.py', import.meta.url));

export class Terminal {
  private output = '';
  private readonly waiters = new Set<() => void>();
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcessWithoutNullStreams;

  constructor(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) {
    this.child = spawn('python3', [RELAY, '--', command, ...args], { cwd: options.cwd, env: options.env });
    const take = (chunk: Buffer) => {
      this.output += chunk.toString();
      for (const wake of this.waiters) wake();
    };
    this.child.stdout.on('data', take);
    this.child.stderr.on('data', take);
    this.exited = new Promise((resolve) => this.child.on('close', (code) => {
      for (const wake of this.waiters) wake();
      resolve(code);
    }));
  }

  /** Everything the program printed so far, without terminal control sequences, with \r\n as \n. */
  get text(): string {
    // eslint-disable-next-line no-control-regex
    return this.output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r\n?/g, '\n');
  }

  /** Types text (a line needs its own "\r"). */
  type(text: string): void {
    this.child.stdin.write(text);
  }

  /** Presses Ctrl-C. */
  interrupt(): void {
    this.child.stdin.write('\x03');
  }

  /** Ends the input (Ctrl-D). */
  end(): void {
    this.child.stdin.end();
  }

  /**
   * Waits until the output after `from` (a length of `text` read earlier) matches; returns the
   * index just past the match, to wait for what comes after it next.
   */
  async waitFor(pattern: string | RegExp, options: { from?: number; timeoutMs?: number } = {}): Promise<number> {
    const from = options.from ?? 0;
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      const rest = this.text.slice(from);
      const at = typeof pattern === 'string' ? indexOf(rest, pattern) : match(rest, pattern);
      if (at !== undefined) return from + at;
      if (this.child.exitCode !== null) throw new Error(`the program exited (${this.child.exitCode}) before printing ${String(pattern)}; it printed:\n${this.text}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${String(pattern)}; the terminal shows:\n${this.text}`);
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, left);
        this.waiters.add(done);
      });
    }
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}

function indexOf(text: string, needle: string): number | undefined {
  const i = text.indexOf(needle);
  return i < 0 ? undefined : i + needle.length;
}

function match(text: string, pattern: RegExp): number | undefined {
  const m = pattern.exec(text);
  return m ? m.index + m[0].length : undefined;
}
