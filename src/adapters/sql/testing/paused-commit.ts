/**
 * A test double of a node stopped between its fence and its COMMIT (SIGSTOP at the worst
 * moment): on one MySQL backend, the next COMMIT any connection sends is held back until
 * released, while the transaction it would end stays open on the server with its locks. Both
 * commit paths pass here: the one-packet batch (mysql2's promise API) and Kysely's
 * transactions (its MySQL driver), since both send COMMIT through the pool's connections.
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
      if (!gate || typeof text !== 'string' || text.trim().toLowerCase() !== 'commit') {
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
