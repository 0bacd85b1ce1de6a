import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadClaudeSettings } from '../src/activities/claude-settings.js';
import { runHooks, type RunHooksOptions } from '../src/activities/hooks.js';
import {
  combineHookVerdicts,
  HOOK_EVENTS,
  type HookEvent,
  type HookHandler,
  hookInput,
  hooksFor,
  type HooksConfig,
  interpretHook,
} from '../src/core/hooks.js';
import { until } from './support/until.js';
import { checkHooksConfig } from '../src/core/schemas.js';

const dir = mkdtempSync(join(tmpdir(), 'keel-hooks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string) => join(dir, name);

const bashCall = hookInput('PreToolUse', {
  sessionId: 'session-1',
  transcriptPath: '/tmp/keel/transcript.jsonl',
  cwd: dir,
  permissionMode: 'default',
  toolName: 'Bash',
  toolInput: { command: 'rm -rf build', description: 'Clean' },
  toolUseId: 'toolu_01',
});

/** Runs `hooks` as the PreToolUse hooks of every tool, for a Bash call. */
function preToolUse(hooks: HookHandler[], options: Partial<RunHooksOptions> = {}) {
  return runHooks({ PreToolUse: [{ hooks }] }, 'PreToolUse', 'Bash', bashCall, { cwd: dir, ...options });
}

/** A command that prints `json` on stdout (and ignores its stdin). */
const prints = (json: unknown, status = 0) => `cat >/dev/null; printf '%s' '${JSON.stringify(json)}'; exit ${status}`;
const command = (cmd: string, more: Partial<HookHandler> = {}): HookHandler => ({ type: 'command', command: cmd, ...more }) as HookHandler;

/** Whether a process still runs (a zombie waiting for a parent to reap it counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** Waits until the process is gone: one that is never killed sleeps far past the wait. */
const gone = (pid: number) => until(() => !alive(pid), Boolean, { intervalMs: 25 });

describe('command hooks on PreToolUse', () => {
  it('exit 2 denies, with stderr as the reason', async () => {
    const result = await preToolUse([command('cat >/dev/null; echo "rm is not allowed here" >&2; exit 2')]);
    expect(result.decision).toBe('deny');
    expect(result.reason).toBe('rm is not allowed here');
    expect(result.errors).toEqual([]);
  });

  it('hookSpecificOutput allows and rewrites the input', async () => {
    const output = {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        permissionDecisionReason: 'cleaning is fine',
        updatedInput: { command: 'rm -rf ./build', description: 'Clean' },
      },
    };
    const result = await preToolUse([command(prints(output))]);
    expect(result).toMatchObject({ decision: 'allow', reason: 'cleaning is fine', updatedInput: { command: 'rm -rf ./build', description: 'Clean' } });
  });

  it('ask asks', async () => {
    const result = await preToolUse([command(prints({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: 'sure?' } }))]);
    expect(result).toMatchObject({ decision: 'ask', reason: 'sure?' });
  });

  it('the deprecated top-level decision "block" denies', async () => {
    const result = await preToolUse([command(prints({ decision: 'block', reason: 'old style' }))]);
    expect(result).toMatchObject({ decision: 'deny', reason: 'old style' });
  });

  it('exit 2 denies even when the JSON on stdout allows', async () => {
    const allow = { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: { command: 'ls' } } };
    const result = await preToolUse([command(`cat >/dev/null; printf '%s' '${JSON.stringify(allow)}'; echo nope >&2; exit 2`)]);
    expect(result).toMatchObject({ decision: 'deny', reason: 'nope' });
    expect(result.updatedInput).toBeUndefined();
  });

  it('exit 1 is a non-blocking error: reported, decides nothing', async () => {
    const result = await preToolUse([command('cat >/dev/null; echo "jq: not found" >&2; exit 1')]);
    expect(result.decision).toBeUndefined();
    expect(result.errors).toEqual([expect.stringMatching(/exited with status 1: jq: not found/)]);
  });

  it('a status other than 0 or 2 with valid JSON: the JSON decides, no error', async () => {
    const result = await preToolUse([command(prints({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'json says no' } }, 1))]);
    expect(result).toMatchObject({ decision: 'deny', reason: 'json says no', errors: [] });
  });

  it('stdout that starts with "{" but is not JSON is a non-blocking error', async () => {
    const result = await preToolUse([command(`cat >/dev/null; echo '{"hookSpecificOutput": {'`)]);
    expect(result.decision).toBeUndefined();
    expect(result.errors).toEqual([expect.stringMatching(/not valid JSON/)]);
  });

  it('output of the wrong shape is a non-blocking error', async () => {
    const result = await preToolUse([command(prints({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'maybe' } }))]);
    expect(result.decision).toBeUndefined();
    expect(result.errors).toEqual([expect.stringMatching(/"permissionDecision" must be "allow", "ask" or "deny", got "maybe"/)]);
  });

  it('a hook that times out is killed with the processes it started, at its timeout', async () => {
    const pidFile = file('timeout.pid');
    const started = Date.now();
    // It would sleep for ten minutes: only its timeout ends it.
    const result = await preToolUse([command(`sleep 600 & echo $! > ${pidFile}; sleep 600`, { timeout: 1 })]);
    // Not before its timeout.
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(result.decision).toBeUndefined();
    expect(result.errors).toEqual([expect.stringMatching(/timed out after 1 s/)]);
    await gone(Number(readFileSync(pidFile, 'utf8')));
  });

  it('failClosed turns a crash or a timeout into a deny', async () => {
    const crash = await preToolUse([command('exit 1', { failClosed: true })]);
    expect(crash.decision).toBe('deny');
    expect(crash.reason).toMatch(/failed \(exited with status 1\), and it is fail-closed/);
    const timedOut = await preToolUse([command('sleep 600', { timeout: 1 })], { failClosed: true });
    expect(timedOut.decision).toBe('deny');
    expect(timedOut.reason).toMatch(/timed out after 1 s/);
    // A handler's own setting wins over the default.
    const open = await preToolUse([command('exit 1', { failClosed: false })], { failClosed: true });
    expect(open.decision).toBeUndefined();
  });

  it('runs matching hooks in parallel and combines them: deny wins, reasons of the deniers', async () => {
    // Each hook says it started, then waits until all three have: run one after the other, the
    // first would wait for the others until its timeout, and fail.
    const marks = file('parallel');
    const together = (n: number) =>
      `touch ${marks}.${n}; while [ "$(ls ${marks}.* | wc -l)" -lt 3 ]; do sleep 0.05; done;`;
    const result = await preToolUse([
      command(`${together(1)} ${prints({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' } })}`, { timeout: 20 }),
      command(`${together(2)} cat >/dev/null; echo first >&2; exit 2`, { timeout: 20 }),
      command(`${together(3)} ${prints({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'second' } })}`, { timeout: 20 }),
    ]);
    expect(result.errors).toEqual([]);
    expect(result).toMatchObject({ decision: 'deny', reason: 'first\nsecond' });
    expect(result.verdicts.map((v) => v.decision)).toEqual(['allow', 'deny', 'deny']);
  });

  it('sends the documented input on stdin, in the project directory, with CLAUDE_PROJECT_DIR and KEEL_PROJECT_DIR', async () => {
    const inputFile = file('input.json');
    const envFile = file('env.txt');
    await preToolUse([command(`cat > ${inputFile}; printf '%s\\n%s\\n%s\\n' "$CLAUDE_PROJECT_DIR" "$KEEL_PROJECT_DIR" "$PWD" > ${envFile}`)]);
    expect(JSON.parse(readFileSync(inputFile, 'utf8'))).toEqual({
      session_id: 'session-1',
      transcript_path: '/tmp/keel/transcript.jsonl',
      cwd: dir,
      permission_mode: 'default',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'rm -rf build', description: 'Clean' },
      tool_use_id: 'toolu_01',
    });
    expect(readFileSync(envFile, 'utf8')).toBe(`${dir}\n${dir}\n${dir}\n`);
  });

  it('runs exec form (args) without a shell, with ${CLAUDE_PROJECT_DIR} replaced', async () => {
    writeFileSync(file('deny.mjs'), `process.stdin.resume(); process.stdin.on('end', () => { console.error('exec form: ' + process.argv[2]); process.exit(2); });`);
    const result = await preToolUse([{ type: 'command', command: process.execPath, args: ['${CLAUDE_PROJECT_DIR}/deny.mjs', "it's $HOME"] }]);
    expect(result).toMatchObject({ decision: 'deny', reason: "exec form: it's $HOME" });
  });

  it('the abort signal kills running hooks and rejects', async () => {
    const pidFile = file('abort.pid');
    const controller = new AbortController();
    // It would run for ten minutes, past the test's timeout: only the abort ends it.
    const running = preToolUse([command(`sleep 600 & echo $! > ${pidFile}; sleep 600`, { timeout: 900 })], { signal: controller.signal });
    const pid = await until(() => {
      try {
        return readFileSync(pidFile, 'utf8').trim();
      } catch {
        return '';
      }
    }, (text) => text !== '', { intervalMs: 25 });
    controller.abort();
    await expect(running).rejects.toThrow();
    await gone(Number(pid));
  });

  it('keeps at most 64 KB of a hook output', async () => {
    const config: HooksConfig = { UserPromptSubmit: [{ hooks: [command("cat >/dev/null; head -c 300000 /dev/zero | tr '\\0' a")] }] };
    const input = hookInput('UserPromptSubmit', { sessionId: 's', cwd: dir, prompt: 'hi' });
    const result = await runHooks(config, 'UserPromptSubmit', undefined, input, { cwd: dir });
    const context = result.additionalContext ?? '';
    expect(context.length).toBeLessThan(65 * 1024);
    expect(context.startsWith('a'.repeat(64 * 1024))).toBe(true);
    expect(context.slice(64 * 1024)).toBe(`\n[… ${300_000 - 64 * 1024} more bytes dropped by keel]`);
  });
});

describe('command hooks on other events', () => {
  const run = (event: HookEvent, hooks: HookHandler[], fields: Record<string, unknown>, target?: string) =>
    runHooks({ [event]: [{ hooks }] }, event, target, hookInput(event, { sessionId: 's', cwd: dir, ...fields }), { cwd: dir });

  it('PostToolUse: additionalContext, and decision "block" puts the reason next to the result', async () => {
    const fields = { toolName: 'Edit', toolInput: { file_path: '/x.ts' }, toolUseId: 't1', toolResponse: { success: true } };
    const result = await run('PostToolUse', [
      command(prints({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'x.ts is generated' } })),
      command(prints({ decision: 'block', reason: 'lint failed' })),
    ], fields, 'Edit');
    expect(result).toMatchObject({ decision: 'block', reason: 'lint failed', additionalContext: 'x.ts is generated' });
  });

  it('UserPromptSubmit: plain stdout is context; exit 2 blocks the prompt', async () => {
    const context = await run('UserPromptSubmit', [command('cat >/dev/null; echo "branch: main"')], { prompt: 'hi' });
    expect(context).toMatchObject({ additionalContext: 'branch: main', errors: [] });
    const blocked = await run('UserPromptSubmit', [command('cat >/dev/null; echo "no secrets" >&2; exit 2')], { prompt: 'my key is sk-1' });
    expect(blocked).toMatchObject({ decision: 'block', reason: 'no secrets' });
  });

  it('Stop: decision "block" keeps the agent going; continue: false stops the run', async () => {
    const result = await run('Stop', [
      command(prints({ decision: 'block', reason: 'run the tests first' })),
      command(prints({ continue: false, stopReason: 'budget spent' })),
    ], { lastAssistantMessage: 'Done.' });
    expect(result).toMatchObject({ decision: 'block', reason: 'run the tests first', stop: { reason: 'budget spent' } });
  });

  it('SessionStart: exit 2 cannot block, it is only an error', async () => {
    const result = await run('SessionStart', [command('cat >/dev/null; echo oops >&2; exit 2', { failClosed: true })], { source: 'startup' }, 'startup');
    expect(result.decision).toBeUndefined();
    expect(result.errors).toEqual([expect.stringMatching(/cannot block SessionStart: oops/)]);
  });
});

describe('http hooks', () => {
  let server: Server;
  let base: string;
  const received: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ url: req.url ?? '', headers: req.headers, body });
        if (req.url === '/deny') {
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'policy service says no' } }));
        } else if (req.url === '/broken') {
          res.statusCode = 500;
          res.end('internal error');
        } else if (req.url === '/slow') {
          // Never answers (the connection is closed when the tests end): only the timeout ends the call.
        } else {
          res.end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('denies through a JSON body; the input is the POST body, with the allowed variables in the headers', async () => {
    const result = await preToolUse(
      [{ type: 'http', url: `${base}/deny`, headers: { Authorization: 'Bearer $TOKEN', 'X-Other': 'a${SECRET}b' }, allowedEnvVars: ['TOKEN'] }],
      { env: { TOKEN: 'tok-1', SECRET: 'hidden' } },
    );
    expect(result).toMatchObject({ decision: 'deny', reason: 'policy service says no', errors: [] });
    const request = received.find((r) => r.url === '/deny')!;
    expect(JSON.parse(request.body)).toEqual(bashCall);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers.authorization).toBe('Bearer tok-1');
    expect(request.headers['x-other']).toBe('ab');
  });

  it('a 2xx with an empty body says nothing', async () => {
    const result = await preToolUse([{ type: 'http', url: `${base}/ok` }]);
    expect(result).toEqual({ errors: [], verdicts: [{ handler: `${base}/ok` }] });
  });

  it('a non-2xx answer is a non-blocking error', async () => {
    const result = await preToolUse([{ type: 'http', url: `${base}/broken` }]);
    expect(result.decision).toBeUndefined();
    expect(result.errors).toEqual([`${base}/broken: answered HTTP 500: internal error`]);
  });

  it('a server that is down is a non-blocking error (or a deny, fail-closed)', async () => {
    const down = createServer();
    await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(down.address() as AddressInfo).port}/hook`;
    await new Promise((resolve) => down.close(resolve));
    const result = await preToolUse([{ type: 'http', url }]);
    expect(result.decision).toBeUndefined();
    expect(result.errors).toEqual([expect.stringMatching(/request failed: .*ECONNREFUSED/)]);
    const closed = await preToolUse([{ type: 'http', url, failClosed: true }]);
    expect(closed.decision).toBe('deny');
  });

  it('a server that never answers times out', async () => {
    const result = await preToolUse([{ type: 'http', url: `${base}/slow`, timeout: 1 }]);
    expect(result.decision).toBeUndefined();
    expect(result.errors).toEqual([`${base}/slow: timed out after 1 s`]);
  });
});

describe('matchers', () => {
  const handler = (name: string): HookHandler => ({ type: 'command', command: name });
  const config: HooksConfig = {
    PreToolUse: [
      { matcher: 'Bash|Edit', hooks: [handler('bash-or-edit')] },
      { matcher: 'Edit, Write', hooks: [handler('edit-or-write')] },
      { matcher: 'mcp__.*', hooks: [handler('any-mcp')] },
      { matcher: 'mcp__memory', hooks: [handler('exact-mcp__memory')] },
      { matcher: '^Notebook', hooks: [handler('notebook-prefix')] },
      { matcher: '*', hooks: [handler('star')] },
      { hooks: [handler('absent'), handler('star')] },
      { matcher: '', hooks: [handler('empty')] },
    ],
    SessionStart: [{ matcher: 'resume', hooks: [handler('on-resume')] }],
    SubagentStop: [{ matcher: 'code-reviewer', hooks: [handler('reviewer')] }],
    Stop: [{ matcher: 'Bash', hooks: [handler('stop')] }],
  };
  const names = (event: HookEvent, target?: string) => hooksFor(config, event, target).map((h) => (h.type === 'command' ? h.command : h.url));
  const everywhere = ['star', 'absent', 'empty'];

  it('follows Claude Code: exact names and lists, unanchored regexes, match-all forms; a handler listed twice runs once', () => {
    expect(names('PreToolUse', 'Bash')).toEqual(['bash-or-edit', ...everywhere]);
    expect(names('PreToolUse', 'Edit')).toEqual(['bash-or-edit', 'edit-or-write', ...everywhere]);
    expect(names('PreToolUse', 'BashOutput')).toEqual(everywhere);
    expect(names('PreToolUse', 'mcp__memory__create_entities')).toEqual(['any-mcp', ...everywhere]);
    // "mcp__memory" has only exact-match characters: it names a tool, not a prefix.
    expect(names('PreToolUse', 'mcp__memory')).toEqual(['any-mcp', 'exact-mcp__memory', ...everywhere]);
    expect(names('PreToolUse', 'NotebookEdit')).toEqual(['notebook-prefix', ...everywhere]);
  });

  it('matches SessionStart on its source and Subagent* on the agent type; ignores a matcher on Stop', () => {
    expect(names('SessionStart', 'resume')).toEqual(['on-resume']);
    expect(names('SessionStart', 'startup')).toEqual([]);
    expect(names('SubagentStop', 'code-reviewer')).toEqual(['reviewer']);
    expect(names('SubagentStop', 'senior-code-reviewer')).toEqual([]);
    expect(names('Stop')).toEqual(['stop']);
    expect(hooksFor(undefined, 'Stop')).toEqual([]);
  });
});

describe('hookInput', () => {
  it('uses Claude Code field names, camelCase given or not, and refuses an input missing what the event needs', () => {
    expect(hookInput('SubagentStop', { sessionId: 's', cwd: '/p', permissionMode: 'plan', agentId: 'a1', agentType: 'Explore', lastAssistantMessage: 'done' })).toEqual({
      session_id: 's',
      cwd: '/p',
      permission_mode: 'plan',
      hook_event_name: 'SubagentStop',
      stop_hook_active: false,
      agent_id: 'a1',
      agent_type: 'Explore',
      last_assistant_message: 'done',
    });
    // Claude Code sends SessionStart no permission_mode.
    expect(hookInput('SessionStart', { sessionId: 's', cwd: '/p', permissionMode: 'default', source: 'startup' })).toEqual({
      session_id: 's',
      cwd: '/p',
      hook_event_name: 'SessionStart',
      source: 'startup',
    });
    expect(hookInput('PostToolUseFailure', { sessionId: 's', cwd: '/p', tool_name: 'Bash', tool_input: {}, tool_use_id: 't', error: 'Exit code 1', isInterrupt: false })).toMatchObject({
      error: 'Exit code 1',
      is_interrupt: false,
    });
    expect(() => hookInput('PreToolUse', { sessionId: 's', cwd: '/p', toolName: 'Bash' })).toThrow('hookInput(PreToolUse): missing tool_input, tool_use_id');
  });
});

describe('interpretHook and combineHookVerdicts', () => {
  const h: HookHandler = { type: 'command', command: 'check' };
  const exit = (code: number, stdout = '', stderr = '') => ({ kind: 'exit', code, stdout, stderr }) as const;

  it('refuses a hookSpecificOutput for another event, and "defer"', () => {
    const wrong = interpretHook('PreToolUse', h, exit(0, JSON.stringify({ hookSpecificOutput: { hookEventName: 'PostToolUse', permissionDecision: 'deny' } })), false);
    expect(wrong).toEqual({ handler: 'check', error: 'printed invalid output: hookSpecificOutput.hookEventName is "PostToolUse", but this is a PreToolUse hook' });
    const defer = interpretHook('PreToolUse', h, exit(0, JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'defer' } })), false);
    expect(defer.decision).toBeUndefined();
    expect(defer.error).toMatch(/"defer" is not supported/);
  });

  it('discards SessionEnd output', () => {
    expect(interpretHook('SessionEnd', h, exit(0, JSON.stringify({ systemMessage: 'bye', continue: false })), false)).toEqual({ handler: 'check' });
  });

  it('combines: deny > ask > allow; a denied call keeps no rewrite; disagreeing rewrites are reported', () => {
    const allowA = { handler: 'a', decision: 'allow' as const, updatedInput: { command: 'A' } };
    const allowB = { handler: 'b', decision: 'allow' as const, updatedInput: { command: 'B' }, additionalContext: 'from b' };
    const ask = { handler: 'c', decision: 'ask' as const, reason: 'confirm', additionalContext: 'from c' };
    const asked = combineHookVerdicts([allowA, ask, allowB]);
    expect(asked).toMatchObject({ decision: 'ask', reason: 'confirm', updatedInput: { command: 'B' }, additionalContext: 'from c\nfrom b' });
    expect(asked.errors).toEqual(['a: rewrote the input differently from b, whose rewrite applies (the last in config order)']);
    const denied = combineHookVerdicts([allowA, { handler: 'd', decision: 'deny', reason: 'no' }, ask]);
    expect(denied).toMatchObject({ decision: 'deny', reason: 'no' });
    expect(denied.updatedInput).toBeUndefined();
  });
});

describe('checkHooksConfig', () => {
  const check = (hooks: unknown) => () => checkHooksConfig(hooks, 'agent "coder" hooks');

  it('returns the config normalized', () => {
    expect(checkHooksConfig({ PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './check.sh', timeout: 5, statusMessage: 'Checking' }] }] }, 'x')).toEqual({
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './check.sh', timeout: 5 }] }],
    });
    expect(checkHooksConfig(undefined, 'x')).toEqual({});
  });

  it('names the place and the field, and says what is valid', () => {
    expect(check({ Notification: [] })).toThrow(`agent "coder" hooks: hooks.Notification: unknown event; keel supports ${HOOK_EVENTS.join(', ')}`);
    expect(check({ pretooluse: [] })).toThrow('(did you mean "PreToolUse"?)');
    expect(check({ PreToolUse: { hooks: [] } })).toThrow('hooks.PreToolUse: must be an array of matcher groups, like [{ "matcher": "Bash|Edit"');
    expect(check({ PreToolUse: [{ matcher: 'mcp__(', hooks: [] }] })).toThrow(/hooks.PreToolUse\[0\].matcher: is not a valid regular expression/);
    expect(check({ PreToolUse: [{ hooks: [{ type: 'command' }] }] })).toThrow(
      'hooks.PreToolUse[0].hooks[0].command: is missing: a command hook needs the shell command to run, like { "type": "command", "command": "./.claude/hooks/check.sh", "timeout": 30 }',
    );
    expect(check({ Stop: [{ hooks: [{ type: 'command', command: 'x', timeout: 0 }] }] })).toThrow('hooks.Stop[0].hooks[0].timeout: must be a positive number of seconds (got 0)');
    expect(check({ Stop: [{ hooks: [{ type: 'command', command: 'x', timout: 5 }] }] })).toThrow('hooks.Stop[0].hooks[0].timout: unknown field for a command hook; it takes type, command, args, timeout, failClosed, shell');
    expect(check({ Stop: [{ hooks: [{ type: 'prompt', prompt: 'done?' }] }] })).toThrow('keel cannot run a "prompt" hook: keel runs "command" and "http" hooks only');
    expect(check({ PreToolUse: [{ hooks: [{ type: 'command', command: 'x', if: 'Bash(rm *)' }] }] })).toThrow(/does not evaluate permission-rule conditions/);
    expect(check({ PreToolUse: [{ hooks: [{ type: 'http', url: 'localhost:8080' }] }] })).toThrow('hooks.PreToolUse[0].hooks[0].url: must be an http:// or https:// URL (got "localhost:8080")');
  });
});

describe('loadClaudeSettings', () => {
  it('reads hooks and permissions, skipping what keel cannot run', () => {
    const settings = file('settings.json');
    writeFileSync(
      settings,
      JSON.stringify({
        model: 'opus',
        permissions: { allow: ['Bash(npm test)'], deny: ['Read(./.env)'], ask: ['Bash(git push *)'], defaultMode: 'acceptEdits', additionalDirectories: ['../lib'] },
        hooks: {
          PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh', timeout: 10 }] }],
          Notification: [{ hooks: [{ type: 'command', command: 'notify-send hi' }] }],
          Stop: [{ hooks: [{ type: 'prompt', prompt: 'Are we done? $ARGUMENTS' }, { type: 'http', url: 'http://localhost:9/stop' }] }],
        },
      }),
    );
    expect(loadClaudeSettings(settings)).toEqual({
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh', timeout: 10 }] }],
        Stop: [{ hooks: [{ type: 'http', url: 'http://localhost:9/stop' }] }],
      },
      // The file's folder is the project whose `/path` rules it writes.
      permissions: { allow: ['Bash(npm test)'], ask: ['Bash(git push *)'], deny: ['Read(./.env)'], mode: 'acceptEdits', cwd: dirname(settings) },
      skipped: ['hooks.Notification: keel has no Notification event', 'hooks.Stop[0].hooks[0]: a "prompt" hook: keel runs "command" and "http" hooks only'],
    });
  });

  it('loads no hooks under disableAllHooks', () => {
    const settings = file('disabled.json');
    writeFileSync(settings, JSON.stringify({ disableAllHooks: true, hooks: { Stop: [{ hooks: [{ type: 'command', command: 'x' }] }] } }));
    expect(loadClaudeSettings(settings)).toEqual({ hooks: {}, permissions: { cwd: dirname(settings) }, skipped: ['all hooks: "disableAllHooks" is true'] });
  });

  it('says which file is missing, not JSON, or wrong', () => {
    const missing = file('nope.json');
    expect(() => loadClaudeSettings(missing)).toThrow(`Cannot read the Claude Code settings file ${missing}`);
    const broken = file('broken.json');
    writeFileSync(broken, '{ "hooks": ');
    expect(() => loadClaudeSettings(broken)).toThrow(`The Claude Code settings file ${broken} is not valid JSON`);
    const bad = file('bad.json');
    writeFileSync(bad, JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: '' }] }] } }));
    expect(() => loadClaudeSettings(bad)).toThrow(`${bad}: hooks.PreToolUse[0].hooks[0].command: is missing`);
    writeFileSync(bad, JSON.stringify({ permissions: { allow: 'Bash' } }));
    expect(() => loadClaudeSettings(bad)).toThrow(`${bad}: "permissions.allow" must be an array of rule strings`);
  });
});
