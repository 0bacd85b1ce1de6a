/**
 * `keel chat` as a person uses it: on a pseudo-terminal (test/support/pty.ts), an exchange with
 * an approval asked inline and a /rewind that brings the message back to edit; over a pipe, one
 * message per line; a session resumed by ID; Ctrl-C during an answer. The CLI is the compiled
 * bin/keel.js, the worker this file's, the model the scripted server.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../src/core/define.js';
import { BIN, cliEnv, keel, runCommand } from './support/cli.js';
import { useKeel } from './support/keel.js';
import { Terminal } from './support/pty.js';
import { until } from './support/until.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const suffix = randomUUID().slice(0, 8);

const sent: { to: string; text: string }[] = [];
const send = defineTool({
  name: 'send',
  description: 'Send a message to someone.',
  input: z.object({ to: z.string(), text: z.string() }),
  requiresApproval: true,
  execute: (args) => {
    sent.push(args);
    return `sent to ${args.to}`;
  },
});

/** Runs on the client: `keel chat --tools` answers it with test/fixtures/client-tools/handlers.mjs. */
const readNote = defineTool({ name: 'read_note', description: "Read a note on the user's machine.", input: z.object({ name: z.string() }), runsOn: 'client' });

/** One agent per test, each with a model of its own, so the scripts stay apart. */
const agentFor = (name: string) =>
  defineAgent({ name: `chat-${name}-${suffix}`, instructions: 'Chat with the user.', model: `openai:chat-${name}-${suffix}`, modelSettings: { maxTokens: 200 }, tools: [send, readNote] });
const agents = {
  tty: agentFor('tty'),
  pipe: agentFor('pipe'),
  waits: agentFor('waits'),
  resume: agentFor('resume'),
  stop: agentFor('stop'),
  tools: agentFor('tools'),
};
const t = useKeel(Object.values(agents));
const modelOf = (a: { name: string }) => a.name;

/** The user messages of the model's last request. */
function userMessagesSeen(model: string): string[] {
  const messages = t.server.requests(model).at(-1)!.body.messages as { role: string; content: unknown }[];
  return messages.filter((m) => m.role === 'user').map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
}

function chatOnTerminal(args: string[]): Terminal {
  return new Terminal(process.execPath, [BIN, 'chat', ...args, '--task-queue', t.keel.taskQueue], { cwd: root, env: cliEnv({ TERM: 'dumb' }) });
}

function chatOverPipe(args: string[], input: string) {
  return runCommand(process.execPath, [BIN, 'chat', ...args, '--task-queue', t.keel.taskQueue], { cwd: root, env: cliEnv(), label: 'keel chat', stdin: input });
}

describe('keel chat on a terminal', () => {
  it('asks an approval inline, answers, and /rewind brings the message back to edit and send again', async () => {
    const model = modelOf(agents.tty);
    t.server.script(model, [
      { toolCalls: [{ id: 'c1', name: 'send', arguments: { to: 'bob', text: 'hi' } }] },
      { text: 'Sent bob a hi.' },
      { text: 'Sent nothing: it was only a draft.' },
    ]);
    const term = chatOnTerminal([agents.tty.name]);
    try {
      let at = await term.waitFor('you> ');
      term.type('Send bob a hi\r');
      at = await term.waitFor('[a]llow', { from: at });
      term.type('a\r');
      at = await term.waitFor(`${agents.tty.name}> Sent bob a hi.`, { from: at });
      expect(sent).toContainEqual({ to: 'bob', text: 'hi' });
      at = await term.waitFor('you> ', { from: at });

      term.type('/rewind\r');
      at = await term.waitFor('rewind to before which message?', { from: at });
      term.type('1\r');
      at = await term.waitFor('rewound to before', { from: at });
      // The removed message is back in the input line: typing goes on after it.
      at = await term.waitFor('you> Send bob a hi', { from: at });
      term.type(', as a draft\r');
      at = await term.waitFor(`${agents.tty.name}> Sent nothing: it was only a draft.`, { from: at });
      // The model saw the edited message alone: the rewound exchange is gone.
      expect(userMessagesSeen(model)).toEqual(['Send bob a hi, as a draft']);

      await term.waitFor('you> ', { from: at });
      term.type('/exit\r');
      expect(await term.exited).toBe(0);
      expect(term.text).toMatch(/stays; resume it with: keel chat --session \S+/);
      // The answers came by the session's live stream.
      const id = /session (\S+) ·/.exec(term.text)![1]!;
      const streamed: string[] = [];
      for await (const chunk of t.keel.client.session(id).stream({ from: 0 })) {
        if (chunk.type === 'text.delta') streamed.push(chunk.text);
        if (chunk.type === 'session.run_finished' && chunk.run === 'run-2') break;
      }
      expect(streamed.join('')).toBe('Sent nothing: it was only a draft.');
    } finally {
      term.kill();
    }
  });

  it('Ctrl-C during an answer stops that run, not the session', async () => {
    const model = modelOf(agents.stop);
    t.server.script(model, [{ text: 'This answer never comes.', delayMs: 120_000 }, { text: 'Still here.' }]);
    const term = chatOnTerminal([agents.stop.name]);
    try {
      let at = await term.waitFor('you> ');
      term.type('Take your time\r');
      // The model has the request: the run is in its model call.
      await until(() => t.server.requests(model).length, (n) => n === 1, { what: 'the model call' });
      term.interrupt();
      at = await term.waitFor('run given up', { from: at });
      at = await term.waitFor('you> ', { from: at });
      term.type('Are you there?\r');
      await term.waitFor(`${agents.stop.name}> Still here.`, { from: at });
      // The given-up run's message stays in the conversation (as Claude Code keeps an interrupted
      // one); its answer never came.
      expect(userMessagesSeen(model)).toEqual(['Take your time', 'Are you there?']);
      expect(JSON.stringify(t.server.requests(model).at(-1)!.body.messages)).not.toContain('This answer never comes.');
      term.type('/exit\r');
      expect(await term.exited).toBe(0);
    } finally {
      term.kill();
    }
  });
});

describe('keel chat over a pipe', () => {
  it('takes one message per line and prints each answer; the model sees the earlier ones', async () => {
    const model = modelOf(agents.pipe);
    t.server.script(model, [{ text: 'Lisbon is sunny.' }, { text: 'Tokyo is rainy.' }]);
    const { code, stdout, stderr } = await chatOverPipe([agents.pipe.name], 'Weather in Lisbon?\nAnd Tokyo?\n');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(`${agents.pipe.name}> Lisbon is sunny.`);
    expect(stdout).toContain(`${agents.pipe.name}> Tokyo is rainy.`);
    expect(stdout.indexOf('Lisbon is sunny.')).toBeLessThan(stdout.indexOf('Tokyo is rainy.'));
    expect(userMessagesSeen(model)).toEqual(['Weather in Lisbon?', 'And Tokyo?']);
  });

  it('a run that waits for approval is a clear error naming the commands that decide it, and the chat ends with 1', async () => {
    const model = modelOf(agents.waits);
    t.server.script(model, [{ toolCalls: [{ id: 'c1', name: 'send', arguments: { to: 'ann', text: 'yo' } }] }, { text: 'unused' }]);
    const { code, stdout, stderr } = await chatOverPipe([agents.waits.name], 'Send ann a yo\nAnything else?\n');
    expect(code).toBe(1);
    expect(stdout).toContain('? send waits for approval (call c1)');
    expect(stderr).toContain('The run waits for approval of send (call c1), and there is no terminal to ask in.');
    const id = /session (\S+) ·/.exec(stdout)![1]!;
    expect(stderr).toContain(`keel approve ${id} <call>`);
    // The second line was never sent: the model was asked once.
    expect(t.server.requests(model)).toHaveLength(1);
    expect(sent).not.toContainEqual({ to: 'ann', text: 'yo' });
  });

  it('--session goes on with a session: its last messages first, then the next message in the same conversation', async () => {
    const model = modelOf(agents.resume);
    t.server.script(model, [{ text: 'Noted: your name is Ada.' }, { text: 'Your name is Ada.' }]);
    const first = await chatOverPipe([agents.resume.name], 'My name is Ada.\n');
    expect(first.code).toBe(0);
    const id = /session (\S+) ·/.exec(first.stdout)![1]!;
    const again = await chatOverPipe(['--session', id], "What's my name?\n");
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('you> My name is Ada.');
    expect(again.stdout).toContain(`${agents.resume.name}> Noted: your name is Ada.`);
    expect(again.stdout).toContain(`${agents.resume.name}> Your name is Ada.`);
    expect(userMessagesSeen(model)).toEqual(['My name is Ada.', "What's my name?"]);
    // /checkpoints and /state answer over a pipe too.
    const listed = await chatOverPipe(['--session', id], '/checkpoints\n/agent\n');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/1 {2}\S+ {2}chat-resume-\S+ {2}My name is Ada\./);
    expect(listed.stdout).toContain(`  ${agents.resume.name}\n`);
    // keel status reads a session as a session: its phase, who answers next, its checkpoints.
    const status = await keel(['status', id]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/phase\s+idle/);
    expect(status.stdout).toMatch(new RegExp(`next\\s+${agents.resume.name} answers the next message`));
    expect(status.stdout).toMatch(/messages\s+4 in 2 runs/);
    expect(status.stdout).toContain('Checkpoints (2;');
    expect(status.stdout).toMatch(/cp-1 {2}chat-resume-\S+ {2}My name is Ada\./);
  });

  it('--tools runs the client tools a module exports: the model reads their answers', async () => {
    const model = modelOf(agents.tools);
    t.server.script(model, [{ toolCalls: [{ id: 'r1', name: 'read_note', arguments: { name: 'groceries' } }] }, { text: 'Your groceries note is read.' }]);
    const { code, stdout, stderr } = await chatOverPipe([agents.tools.name, '--tools', 'test/fixtures/client-tools/handlers.mjs'], 'Read my groceries note\n');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(`${agents.tools.name}> Your groceries note is read.`);
    const toolResult = (t.server.requests(model).at(-1)!.body.messages as { role: string; content: string }[]).find((m) => m.role === 'tool')!;
    expect(toolResult.content).toContain('note groceries from the client (call r1)');
  });

  it('refuses a session ID that names no session, and no agent nor session at all', async () => {
    const missing = await keel(['chat', '--session', `no-such-session-${suffix}`]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`No session with ID "no-such-session-${suffix}"`);
    const neither = await keel(['chat']);
    expect(neither.code).toBe(1);
    expect(neither.stderr).toContain('Name the agent to talk to, or a session to go on with');
  });
});
