/**
 * A Kysely dialect around another whose driver translates every error of the database
 * (connect, query, BEGIN, COMMIT, ROLLBACK, savepoints) with {@link translateDatabaseError}.
 * Every query of the SQL adapters passes through it, so no driver error of an outage reaches
 * the runtime or an edge untyped (where it would become `internal`, which clients must not
 * retry).
 */
import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely';
import { translateDatabaseError } from './flavor.js';

type CompileQuery = QueryCompiler['compileQuery'];

async function translated<R>(work: () => Promise<R>): Promise<R> {
  try {
    return await work();
  } catch (error) {
    throw translateDatabaseError(error);
  }
}

class TranslatingConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return translated(() => this.inner.executeQuery<R>(query));
  }

  async *streamQuery<R>(
    query: CompiledQuery,
    chunkSize?: number,
  ): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(query, chunkSize);
    } catch (error) {
      throw translateDatabaseError(error);
    }
  }
}

/** The driver's own connection: its methods (e.g. MySQL's release) expect it, not ours. */
function own(connection: DatabaseConnection): DatabaseConnection {
  return connection instanceof TranslatingConnection ? connection.inner : connection;
}

class TranslatingDriver implements Driver {
  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return translated(() => this.inner.init());
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new TranslatingConnection(await translated(() => this.inner.acquireConnection()));
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return translated(() => this.inner.beginTransaction(own(connection), settings));
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return translated(() => this.inner.commitTransaction(own(connection)));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return translated(() => this.inner.rollbackTransaction(own(connection)));
  }

  savepoint(connection: DatabaseConnection, name: string, compile: CompileQuery): Promise<void> {
    return translated(() => this.optional('savepoint')(own(connection), name, compile));
  }

  rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: CompileQuery,
  ): Promise<void> {
    return translated(() => this.optional('rollbackToSavepoint')(own(connection), name, compile));
  }

  releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: CompileQuery,
  ): Promise<void> {
    return translated(() => this.optional('releaseSavepoint')(own(connection), name, compile));
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(own(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }

  private optional(method: 'savepoint' | 'rollbackToSavepoint' | 'releaseSavepoint') {
    const inner = this.inner;
    if (!inner[method]) throw new Error(`the ${method} method is not supported by this driver`);
    return (connection: DatabaseConnection, name: string, compile: CompileQuery) =>
      inner[method]!(connection, name, compile);
  }
}

/** `dialect`, with its driver's errors translated into the taxonomy. */
export function translatingErrors(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new TranslatingDriver(dialect.createDriver()),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}
