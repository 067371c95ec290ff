/** The SQL store's {@link StoreTypes}: what room kinds' SQL hooks receive, and its batch types. */
import type { Compilable, QueryCreator, Transaction } from 'kysely';
import type {
  BatchWrite,
  CommitOutcome,
  CommitRequest,
  StoreTypes,
} from '../../cell/cell-store.js';
import type { Database } from './schema.js';

export interface SqlStoreTypes extends StoreTypes {
  readonly tx: Transaction<Database>;
  readonly queries: QueryCreator<Database>;
  readonly statement: Compilable;
}

export type SqlCommitRequest = CommitRequest<SqlStoreTypes>;
export type SqlBatchWrite = BatchWrite<Compilable>;
export type SqlCommitOutcome = CommitOutcome<Compilable>;
