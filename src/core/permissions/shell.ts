/**
 * What a Bash command line runs, as far as a parser can see: every simple command of it
 * (pipelines, lists, subshells, groups, functions, loops, command and process substitutions at
 * any depth, here-document bodies that expand), the script string of `bash -c '...'` (and of
 * `sh`, `zsh`, `dash`, `ksh`, `su -c`, `watch`, `env -S`) parsed in turn, and the command that a
 * wrapper (`env`, `sudo`, `timeout`, `xargs`, `find -exec`, ...) runs after its options.
 *
 * Where it cannot see, it says so (`blind`): `eval`, `source` and `.`, a command name that is
 * a variable, a substitution or a pattern, a shell that reads its script from standard input
 * (`curl ... | sh`, `bash <<EOF`, `bash <<< "..."`), a script string that is not a plain word,
 * a wrapper option it does not know, a line that does not parse.
 *
 * The parser is unbash (pure JavaScript, no dependencies, no Node built-ins, synchronous), so
 * this runs inside the workflow sandbox; it is pinned to one version, since a decision made in
 * a workflow must be the same on replay.
 */

import { forEachChild, parse, type Assignment, type Redirection, type SyntaxNode, type Word } from 'unbash';

/** One command the line runs. */
export interface SeenCommand {
  /** The command as written (its source, trimmed): what allow rules match. */
  text: string;
  /**
   * What the shell makes of it, which deny and ask rules match as well: its words unquoted,
   * without the variable assignments before it, and again with the command named by its last
   * path segment (`/bin/rm -rf x` is also `rm -rf x`).
   */
  forms: string[];
}

export interface CommandLine {
  commands: SeenCommand[];
  /** What the parser cannot see, one phrase each; empty when it sees every command. */
  blind: string[];
}

/** How deep `bash -c "sh -c '...'"` (and eval, env -S, watch) are followed. */
const MAX_DEPTH = 8;
/** Longer lines are not parsed (parsing stays well within a workflow task's time). */
const MAX_LENGTH = 50_000;
/** How deep substitutions in substitutions are followed (each level costs a parse of the rest). */
const MAX_NESTING = 16;

/** Parse a command line; the result is a pure function of the text. */
export function analyzeCommand(line: string): CommandLine {
  const out: CommandLine = { commands: [], blind: [] };
  if (line.length > MAX_LENGTH) {
    unseen(out, `a line longer than ${MAX_LENGTH} characters, which it does not parse`);
    return out;
  }
  try {
    see(line, 0, out);
  } catch (err) {
    // The parser resolves parts lazily, while the tree is walked: whatever it throws (a stack
    // overflow on input built to cause one) is a line it cannot see, never a failed workflow task.
    unseen(out, `a line the parser fails on (${(err as Error).message})`);
  }
  return out;
}

function see(source: string, depth: number, out: CommandLine): void {
  if (depth > MAX_DEPTH) {
    unseen(out, `shells nested more than ${MAX_DEPTH} deep`);
    return;
  }
  visit(parse(source), source, depth, 0, out);
}

function visit(node: SyntaxNode, source: string, depth: number, nesting: number, out: CommandLine): void {
  switch (node.type) {
    case 'Script':
      // A script decoded from escaped backticks carries its own source; its positions index it.
      if (node.source !== undefined) source = node.source;
      if (node.errors?.length) unseen(out, `a part that does not parse (${node.errors[0]!.message})`);
      break;
    case 'CommandExpansion':
    case 'ProcessSubstitution':
    case 'ArithmeticCommandExpansion':
      // Checked before the script is touched: each level is parsed when first read.
      if (++nesting > MAX_NESTING) {
        unseen(out, `substitutions nested more than ${MAX_NESTING} deep`);
        return;
      }
      if (node.script === undefined) unseen(out, `a substitution it cannot parse (${quote(node.text)})`);
      break;
    case 'Command': {
      // A command without a name (`A=1`, `> file`) runs nothing; what it expands is visited below.
      if (node.name) runs([node.name, ...node.args], source.slice(node.pos, node.end).trim(), source, depth, out, input(node.redirects));
      break;
    }
  }
  forEachChild(node, (child) => visit(child, source, depth, nesting, out));
}

type Arg = Word | Assignment;

/** The text a here-document or here-string feeds the command, if one does. */
function input(redirects: readonly Redirection[]): string | undefined {
  for (const r of redirects) {
    if (r.type === 'HereDoc') return r.body.text;
    if (r.type === 'HereString' && r.target) return plain(r.target) ? r.target.value : r.target.text;
  }
  return undefined;
}

const textOf = (words: readonly Arg[], source: string) => source.slice(words[0]!.pos, words[words.length - 1]!.end).trim();
const valueOf = (arg: Arg) => (arg.type === 'Word' ? arg.value : arg.text);

/** A word the shell takes as it is written, quotes aside: no expansion, substitution or pattern. */
function plain(arg: Arg): boolean {
  if (arg.type !== 'Word') return false;
  return (arg.parts ?? []).every(
    (p) =>
      p.type === 'Literal' ||
      p.type === 'SingleQuoted' ||
      p.type === 'AnsiCQuoted' ||
      (p.type === 'DoubleQuoted' && p.parts.every((c) => c.type === 'Literal')),
  );
}

/** The command `words` names (the first is its name), then whatever it runs in turn. */
function runs(words: readonly Arg[], text: string, source: string, depth: number, out: CommandLine, stdin?: string): void {
  const name = words[0]!;
  if (!plain(name)) {
    out.commands.push({ text, forms: [] });
    unseen(out, `a command named by ${quote(name.text)}, known only when it runs`);
    return;
  }
  const values = words.map(valueOf);
  const base = basename(values[0]!);
  const forms = [values.join(' ')];
  if (base !== values[0]) forms.push([base, ...values.slice(1)].join(' '));
  out.commands.push({ text, forms });

  const args = words.slice(1);
  const inner = (from: number) => {
    if (from < args.length) runs(args.slice(from), textOf(args.slice(from), source), source, depth, out, stdin);
  };
  const script = (arg: Arg | undefined, what: string) => {
    if (arg === undefined) return;
    if (plain(arg)) see(valueOf(arg), depth + 1, out);
    else unseen(out, `${what} given as ${quote(arg.text)}, known only when it runs`);
  };

  if (SHELLS.has(base)) {
    const reads = shell(base, args, out, script);
    // What a here-document or here-string feeds it is looked into, but never vouched for.
    if (reads && stdin !== undefined) see(stdin, depth + 1, out);
    return;
  }
  switch (base) {
    case 'eval':
      // Its words joined are a script: look into it when they are plain, but never vouch for it.
      unseen(out, 'eval, which runs a string as a script');
      if (args.length > 0 && args.every(plain)) see(args.map(valueOf).join(' '), depth + 1, out);
      return;
    case 'source':
    case '.':
      unseen(out, `${base}, which runs the commands of a file`);
      return;
    case 'command': {
      const at = afterOptions(args, { flags: 'pvV' });
      // `command -v name` and `-V` only say what the name is.
      if (at === undefined) return unknownOption(base, out);
      if (args.slice(0, at).some((a) => /^-[a-zA-Z]*[vV]/.test(valueOf(a)))) return;
      return inner(at);
    }
    case 'find':
      return findExec(args, source, depth, out);
    case 'watch': {
      const at = afterOptions(args, WRAPPERS.watch!);
      if (at === undefined) return unknownOption(base, out);
      // watch runs its words through `sh -c`, unless -x (--exec) says to run them as they are.
      if (args.slice(0, at).some((a) => /^(-[a-zA-Z]*x|--exec)$/.test(valueOf(a)))) return inner(at);
      if (at >= args.length) return;
      if (args.slice(at).every(plain)) see(args.slice(at).map(valueOf).join(' '), depth + 1, out);
      else unseen(out, 'watch given words known only when it runs');
      return;
    }
    case 'su': {
      const spec = WRAPPERS.su!;
      const at = afterOptions(args, spec, (option, value) => {
        if (option === '-c' || option === '--command' || option === '--session-command') script(value, 'a script for su -c');
      });
      if (at === undefined) return unknownOption(base, out);
      const command = args.slice(0, at).some((a) => /^(-[a-zA-Z]*c|--command=?|--session-command=?)/.test(valueOf(a)));
      if (!command) unseen(out, 'su without -c, which runs a shell that reads its commands from standard input');
      return;
    }
    case 'env': {
      const at = afterOptions(args, WRAPPERS.env!, (option, value) => {
        if (option === '-S' || option === '--split-string') script(value, 'a command line for env -S');
      });
      if (at === undefined) return unknownOption(base, out);
      let i = at;
      while (i < args.length && (args[i]!.type === 'Assignment' || /^[A-Za-z_][A-Za-z0-9_]*=/.test(valueOf(args[i]!)))) i++;
      return inner(i);
    }
    case 'sudo':
    case 'doas': {
      const at = afterOptions(args, WRAPPERS[base]!);
      if (at === undefined) return unknownOption(base, out);
      let i = at;
      while (i < args.length && (args[i]!.type === 'Assignment' || /^[A-Za-z_][A-Za-z0-9_]*=/.test(valueOf(args[i]!)))) i++;
      if (i >= args.length && args.slice(0, at).some((a) => /^-[a-zA-Z]*[si]|^--(shell|login)$/.test(valueOf(a)))) {
        unseen(out, `${base} opening a shell that reads its commands from standard input`);
      }
      return inner(i);
    }
  }
  const wrapper = WRAPPERS[base];
  if (wrapper) {
    const at = afterOptions(args, wrapper);
    if (at === undefined) return unknownOption(base, out);
    return inner(at + (wrapper.operands ?? 0));
  }
}

function basename(name: string): string {
  const trimmed = name.replace(/\/+$/, '');
  const slash = trimmed.lastIndexOf('/');
  return slash === -1 || slash === trimmed.length - 1 ? trimmed : trimmed.slice(slash + 1);
}

/** Note what the parser cannot see, once. */
function unseen(out: CommandLine, why: string): void {
  if (!out.blind.includes(why)) out.blind.push(why);
}

/** A piece of the line, quoted, cut short: reasons are read by people and recorded in events. */
function quote(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

function unknownOption(command: string, out: CommandLine): void {
  unseen(out, `a ${command} option it does not know, so not which command ${command} runs`);
}

// ---- shells ----

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'yash', 'posh']);
const SHELL_OPTIONS: OptionSpec = {
  flags: 'abefhklmnprstuvxBCDEHIPTi',
  values: 'oO',
  longFlags: ['--login', '--noprofile', '--norc', '--posix', '--restricted', '--verbose', '--noediting', '--debugger', '--dump-strings', '--dump-po-strings', '--protected', '--pretty-print'],
  longValues: ['--rcfile', '--init-file'],
};

function unknownShellOption(name: string, out: CommandLine): false {
  unknownOption(name, out);
  return false;
}

/** Whether the shell reads its commands from standard input. */
function shell(name: string, args: readonly Arg[], out: CommandLine, script: (arg: Arg | undefined, what: string) => void): boolean {
  let command = false;
  let stdin = false;
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    if (!plain(arg)) break;
    const v = valueOf(arg);
    if (v === '--' || v === '-') {
      i++;
      break;
    }
    if (!/^[-+]/.test(v) || v.length === 1) break;
    if (v.startsWith('--')) {
      if (SHELL_OPTIONS.longValues!.includes(v)) i++;
      else if (!SHELL_OPTIONS.longFlags!.includes(v) && !v.includes('=')) return unknownShellOption(name, out);
      continue;
    }
    for (const c of v.slice(1)) {
      if (c === 'c') command = true;
      else if (c === 's') stdin = true;
      else if (SHELL_OPTIONS.values!.includes(c)) i++;
      else if (!SHELL_OPTIONS.flags.includes(c)) return unknownShellOption(name, out);
    }
  }
  if (command) {
    script(args[i], `a script for ${name} -c`);
    return false;
  }
  // Otherwise it runs a script file: the command as written is all a rule can name.
  if (!stdin && i < args.length) return false;
  unseen(out, `${name} reading its commands from standard input`);
  return true;
}

// ---- wrappers ----

interface OptionSpec {
  /** Short options without a value. */
  flags: string;
  /** Short options with a value, attached (`-n5`) or the next word. */
  values?: string;
  /** Short options whose value, if any, is attached (xargs `-i`, `-l`, `-e`). */
  attached?: string;
  longFlags?: readonly string[];
  /** Long options with a value, `--opt=v` or `--opt v`. */
  longValues?: readonly string[];
  /** Words after the options and before the command (timeout's duration, chroot's root). */
  operands?: number;
  /** Digits are options (`nice -10`). */
  digits?: boolean;
}

const WRAPPERS: Record<string, OptionSpec> = {
  builtin: { flags: '' },
  exec: { flags: 'cl', values: 'a' },
  nohup: { flags: '' },
  time: { flags: 'pvaq', values: 'fo', longFlags: ['--portability', '--verbose', '--append', '--quiet'], longValues: ['--format', '--output'] },
  nice: { flags: '', values: 'n', longValues: ['--adjustment'], digits: true },
  timeout: {
    flags: 'v',
    values: 'sk',
    longFlags: ['--preserve-status', '--foreground', '--verbose'],
    longValues: ['--signal', '--kill-after'],
    operands: 1,
  },
  xargs: {
    flags: '0prtxo',
    values: 'adEILnPs',
    attached: 'iel',
    // --replace, --max-lines and --eof take a value only as `--opt=value`.
    longFlags: ['--null', '--no-run-if-empty', '--verbose', '--interactive', '--exit', '--open-tty', '--replace', '--max-lines', '--eof'],
    longValues: ['--arg-file', '--delimiter', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'],
  },
  sudo: {
    flags: 'AbEeHiKkLlnPSsVv',
    values: 'CDghpRrTtUu',
    longFlags: ['--askpass', '--background', '--preserve-env', '--edit', '--set-home', '--login', '--non-interactive', '--preserve-groups', '--stdin', '--shell', '--'],
    longValues: ['--close-from', '--chdir', '--group', '--host', '--prompt', '--chroot', '--role', '--type', '--command-timeout', '--other-user', '--user'],
  },
  doas: { flags: 'nsL', values: 'uC' },
  stdbuf: { flags: '', values: 'ioe', longValues: ['--input', '--output', '--error'] },
  setsid: { flags: 'cfw', longFlags: ['--ctty', '--fork', '--wait'] },
  ionice: { flags: 't', values: 'cn', longFlags: ['--ignore'], longValues: ['--class', '--classdata'] },
  chroot: { flags: '', longValues: ['--userspec', '--groups'], longFlags: ['--skip-chdir'], operands: 1 },
  busybox: { flags: '' },
  env: {
    flags: 'i0v',
    values: 'uCS',
    longFlags: ['--ignore-environment', '--null', '--debug'],
    longValues: ['--unset', '--chdir', '--split-string'],
  },
  su: {
    flags: 'lmpfP',
    values: 'csgGw',
    longFlags: ['--login', '--preserve-environment', '--pty', '--fast'],
    longValues: ['--command', '--session-command', '--shell', '--group', '--supp-group', '--whitelist-environment'],
  },
  watch: {
    flags: 'dtbegcxpwrq',
    values: 'nq',
    longFlags: ['--differences', '--no-title', '--beep', '--errexit', '--chgexit', '--color', '--no-color', '--exec', '--precise', '--no-wrap', '--no-rerun'],
    longValues: ['--interval', '--equexit'],
  },
};

/**
 * Where a wrapper's command starts: the index of the first argument after its options, or
 * undefined for an option the spec does not know. `seen` gets each option with its value word.
 */
function afterOptions(args: readonly Arg[], spec: OptionSpec, seen?: (option: string, value: Arg | undefined) => void): number | undefined {
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    const v = valueOf(arg);
    if (v === '--') return i + 1;
    if (!v.startsWith('-') || v === '-') return i;
    if (!plain(arg)) return undefined;
    if (v.startsWith('--')) {
      const eq = v.indexOf('=');
      const option = eq === -1 ? v : v.slice(0, eq);
      if (spec.longValues?.includes(option)) {
        // `--opt value`, or `--opt=value` with the value inside this word (a plain one, here).
        const value = eq === -1 ? args[++i] : word(v.slice(eq + 1), arg);
        seen?.(option, value);
      } else if (!spec.longFlags?.includes(option)) {
        return undefined;
      }
      continue;
    }
    const cluster = v.slice(1);
    if (spec.digits && /^\d+$/.test(cluster)) continue;
    for (let k = 0; k < cluster.length; k++) {
      const c = cluster[k]!;
      if (spec.flags.includes(c)) continue;
      if (spec.attached?.includes(c)) break;
      if (!spec.values?.includes(c)) return undefined;
      const rest = cluster.slice(k + 1);
      const value = rest === '' ? args[++i] : word(rest, arg);
      seen?.(`-${c}`, value);
      break;
    }
  }
  return i;
}

/** The plain word `value`, the rest of an option word `of` (`--opt=value`, `-cvalue`). */
function word(value: string, of: Arg): Word {
  return { type: 'Word', text: value, value, pos: of.pos, end: of.end };
}

/** find's `-exec`, `-execdir`, `-ok` and `-okdir` run the words up to `;` or `+`. */
function findExec(args: readonly Arg[], source: string, depth: number, out: CommandLine): void {
  for (let i = 0; i < args.length; i++) {
    if (!/^-(exec|execdir|ok|okdir)$/.test(valueOf(args[i]!))) continue;
    let end = i + 1;
    while (end < args.length && !/^[;+]$/.test(valueOf(args[end]!))) end++;
    if (end > i + 1) runs(args.slice(i + 1, end), textOf(args.slice(i + 1, end), source), source, depth, out);
    i = end;
  }
}
