/** The commands of `keel chat`, for its /help and `keel chat --help` (kept apart: --help loads no client). */
export const CHAT_HELP = [
  '/checkpoints   the session\'s checkpoints (one per message), newest last',
  '/rewind [id]   go back to before a message; it comes back into the input to edit and send again',
  '/fork          a new session with this conversation; the chat goes on in it',
  '/clear         a new empty session (this one is kept); the chat goes on in it',
  '/state         the session\'s state',
  '/agent         the agent that answers the next message',
  '/exit          leave; the session stays (keel chat <agent> --session <id> resumes it)',
];
