/** Text on one line, at most `max` characters (an ellipsis marks the cut). For summaries in the UI and the CLI. */
export function oneLine(text: string, max = 100): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (max < 2 || line.length <= max) return line;
  return `${line.slice(0, max - 1)}…`;
}
