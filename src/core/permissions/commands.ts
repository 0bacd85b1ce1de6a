/**
 * Bash command patterns and the command lines they are matched against. Pure: it runs inside
 * workflow code.
 */

/**
 * The simple commands of a command line: split on `&&`, `||`, `;`, `|`, `&` and newlines
 * outside quotes, so `echo "a && b"` stays one part. Redirections such as `2>&1` and `&>` are
 * not separators. This is no shell parser (`shell.ts` is what finds the commands a line runs):
 * deny and ask rules also match its parts, so a line it and the parser read differently is
 * held by either reading.
 */
export function splitCommand(command: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quote: string | undefined;
  const cut = () => {
    if (current.trim() !== '') parts.push(current.trim());
    current = '';
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    const next = command[i + 1];
    if (quote) {
      current += c;
      if (c === '\\' && quote === '"' && next !== undefined) current += command[++i];
      else if (c === quote) quote = undefined;
    } else if (c === '\\' && next !== undefined) {
      current += c + command[++i];
    } else if (c === "'" || c === '"') {
      quote = c;
      current += c;
    } else if (c === ';' || c === '\n') {
      cut();
    } else if (c === '|') {
      cut();
      if (next === '|' || next === '&') i++;
    } else if (c === '&') {
      const prev = current[current.length - 1];
      if (next === '&') {
        cut();
        i++;
      } else if (prev === '>' || prev === '<' || next === '>') {
        current += c;
      } else {
        cut();
      }
    } else {
      current += c;
    }
  }
  cut();
  return parts;
}

export type Token = string | typeof STAR;
export const STAR = Symbol('*');

/** `\*` is a literal star and `\\` a backslash; any other character is itself. */
export function tokenize(pattern: string): Token[] {
  const tokens: Token[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    const next = pattern[i + 1];
    if (c === '\\' && (next === '*' || next === '\\')) {
      tokens.push(next);
      i++;
    } else {
      tokens.push(c === '*' ? STAR : c);
    }
  }
  return tokens;
}

export function escapePattern(text: string): string {
  return text.replace(/[\\*]/g, (c) => `\\${c}`);
}

function literal(tokens: readonly Token[]): string {
  return tokens.map((t) => (t === STAR ? '*' : t)).join('');
}

export const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A Bash command (or a custom tool's key) against a pattern:
 * - `npm run test:*` (legacy prefix): the text is `npm run test`, or it followed by whitespace;
 * - `git *`: a `*` matches any characters, spaces included. As in Claude Code, a single
 *   trailing ` *` also matches nothing at all, so `git *` allows `git` but not `gitk`;
 * - `ls`: exactly that.
 * With `wildcards` false only exact patterns can match.
 */
export function commandMatches(pattern: string, text: string, wildcards: boolean): boolean {
  const tokens = tokenize(pattern);
  const stars = tokens.filter((t) => t === STAR).length;
  if (stars === 0) return literal(tokens) === text;
  if (!wildcards) return false;
  const last = tokens.length - 1;
  if (stars === 1 && tokens[last] === STAR && tokens[last - 1] === ':') {
    const prefix = literal(tokens.slice(0, -2));
    return text === prefix || (text.startsWith(prefix) && /\s/.test(text[prefix.length] ?? ''));
  }
  if (stars === 1 && tokens[last] === STAR && tokens[last - 1] === ' ') {
    const prefix = literal(tokens.slice(0, -2));
    return text === prefix || text.startsWith(`${prefix} `);
  }
  const source = tokens.map((t) => (t === STAR ? '[\\s\\S]*' : escapeRegExp(t))).join('');
  return new RegExp(`^${source}$`).test(text);
}
