/**
 * A test double of a node stopped at the worst moment of a commit (SIGSTOP): on one MySQL
 * backend, the next COMMIT any connection sends is held back until released. A transaction
 * of Kysely's (its MySQL driver: a batch that writes inside its transaction) then stays open
 * on the server with its locks, between its fence and its COMMIT. A one-packet batch (mysql2's
 * promise API) carries its COMMIT in the packet, so the server never waits on the node: the
 * whole packet is held, as if the node stopped right after its lease check and before sending.
 */
import type { SqlBackend } from '../database.js';

export interface PausedCommit {
  /** Resolves once a COMMIT is being held. */
  readonly reached: Promise<void>;
  /** Sends the held COMMIT (on whatever is left of its connection). */
  release(): void;
}

export interface CommitPauser {
  /** Holds the next COMMIT of this backend. */
  arm(): PausedCommit;
}

type Query = (...args: unknown[]) => unknown;
interface RawConnection {
  query: Query;
}
type GetConnection = (callback: (error: unknown, connection?: RawConnection) => void) => void;

export function pauseCommits(backend: SqlBackend): CommitPauser {
  const pool = backend.mysqlPool as unknown as { getConnection: GetConnection } | null;
  if (!pool) throw new Error('pauseCommits needs a MySQL backend');
  let armed: { reached: () => void; released: Promise<void> } | null = null;
  const patched = new WeakSet<RawConnection>();
  const patch = (connection: RawConnection) => {
    if (patched.has(connection)) return;
    patched.add(connection);
    const query = connection.query.bind(connection);
    connection.query = (...args: unknown[]) => {
      const first = args[0] as string | { sql?: string };
      const text = typeof first === 'string' ? first : first?.sql;
      const gate = armed;
      const commits = typeof text === 'string' && /(^|;\n)commit$/.test(text.trim().toLowerCase());
      if (!gate || !commits) {
        return query(...args);
      }
      armed = null;
      gate.reached();
      // Not returned from the callback: mysql2's Query refuses to be awaited.
      void gate.released.then(() => {
        query(...args);
      });
      return undefined;
    };
  };
  const getConnection = pool.getConnection.bind(pool);
  pool.getConnection = (callback) =>
    getConnection((error, connection) => {
      if (connection) patch(connection);
      callback(error, connection);
    });
  return {
    arm() {
      let reached!: () => void;
      let release!: () => void;
      const reachedP = new Promise<void>((resolve) => (reached = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      armed = { reached, released };
      return { reached: reachedP, release };
    },
  };
}
