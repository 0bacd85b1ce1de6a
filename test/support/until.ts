/** Polls until a reading satisfies the test: the tests' one way to wait for a run to reach a state. */
export async function until<T>(
  read: () => Promise<T> | T,
  ok: (value: T) => boolean,
  options: { timeoutMs?: number; intervalMs?: number; retryErrors?: boolean; /** What it waits for, for the error. */ what?: string } = {},
): Promise<T> {
  const { timeoutMs = 30_000, intervalMs = 200, retryErrors = false } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // A run that has not answered its first query yet reads as nothing, when retryErrors allows.
    const value = retryErrors ? await Promise.resolve().then(read).catch(() => undefined) : await read();
    if (value !== undefined && ok(value as T)) return value as T;
    if (Date.now() > deadline) throw new Error(`timed out${options.what ? ` waiting for ${options.what}` : ''}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
