/**
 * The `keel` command line (bin/keel.js runs it): `keel demo`, `keel worker`, `keel run`,
 * `keel status`, `keel show`, `keel list`, `keel pending`, `keel approve`, `keel deny`, `keel mode`,
 * monitors and schedules. See `keel --help`.
 */
import { main } from './cli/program.js';

const code = await main(process.argv);
// Exit explicitly: an idle gRPC channel or the worker's native runtime must not keep the CLI alive.
process.exit(code);
