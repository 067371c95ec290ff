/** The `users` table on Kysely (SQLite and MySQL alike). */
import { sql, type Kysely, type Selectable } from 'kysely';
import { isUniqueViolation } from '../adapters/sql/flavor.js';
import type { Database, UsersTable } from '../adapters/sql/schema.js';

/** A stored user, password hash included: never leaves the accounts module as is. */
export interface UserRecord {
  readonly id: number;
  readonly appCode: string;
  readonly username: string;
  readonly passwordHash: string;
  readonly nickname: string;
  /** Empty when the user has none. */
  readonly avatar: string;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

export interface NewUser {
  readonly appCode: string;
  readonly username: string;
  /** The unique key within the app (see `usernameKey`). */
  readonly usernameKey: string;
  readonly passwordHash: string;
  readonly nickname: string;
  readonly avatar: string;
  readonly nowMs: number;
}

/** What the accounts service needs from storage. */
export interface UserRepository {
  /** Inserts the user; null when the app already has that username key. */
  insert(user: NewUser): Promise<UserRecord | null>;
  findByUsernameKey(appCode: string, usernameKey: string): Promise<UserRecord | null>;
  /** Null when there is no such user in that app. */
  findById(appCode: string, id: number): Promise<UserRecord | null>;
  /** The users of that app among `ids` (absent ones are left out), in no particular order. */
  findByIds(appCode: string, ids: readonly number[]): Promise<UserRecord[]>;
  /**
   * Users of `appCode` whose username or nickname starts with `prefix` (case-insensitive for
   * the username), by username, at most `limit`.
   */
  searchByPrefix(appCode: string, prefix: string, limit: number): Promise<UserRecord[]>;
}

export class SqlUserRepository implements UserRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(user: NewUser): Promise<UserRecord | null> {
    try {
      // insertId works on both backends (MySQL has no RETURNING).
      const result = await this.db
        .insertInto('users')
        .values({
          app_code: user.appCode,
          username: user.username,
          username_key: user.usernameKey,
          password_hash: user.passwordHash,
          nickname: user.nickname,
          avatar: user.avatar,
          created_at_ms: user.nowMs,
          updated_at_ms: user.nowMs,
        })
        .executeTakeFirstOrThrow();
      if (result.insertId === undefined) throw new Error('users insert returned no id');
      return {
        id: Number(result.insertId),
        appCode: user.appCode,
        username: user.username,
        passwordHash: user.passwordHash,
        nickname: user.nickname,
        avatar: user.avatar,
        createdAtMs: user.nowMs,
        updatedAtMs: user.nowMs,
      };
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
  }

  async findByUsernameKey(appCode: string, usernameKey: string): Promise<UserRecord | null> {
    const row = await this.db
      .selectFrom('users')
      .selectAll()
      .where('app_code', '=', appCode)
      .where('username_key', '=', usernameKey)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  async findById(appCode: string, id: number): Promise<UserRecord | null> {
    const row = await this.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', id)
      .where('app_code', '=', appCode)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  async findByIds(appCode: string, ids: readonly number[]): Promise<UserRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.db
      .selectFrom('users')
      .selectAll()
      .where('app_code', '=', appCode)
      .where('id', 'in', [...ids])
      .execute();
    return rows.map(toRecord);
  }

  async searchByPrefix(appCode: string, prefix: string, limit: number): Promise<UserRecord[]> {
    // LIKE with the prefix's own wildcards escaped: `a_` finds `a_b`, not `ab`.
    const pattern = `${prefix.replace(/[!%_]/g, (c) => `!${c}`)}%`;
    const like = (column: 'username_key' | 'nickname', text: string) =>
      this.db
        .selectFrom('users')
        .selectAll()
        .where('app_code', '=', appCode)
        .where(sql<boolean>`${sql.ref(column)} LIKE ${text} ESCAPE '!'`)
        .orderBy(column)
        .limit(limit)
        .execute();
    const [byUsername, byNickname] = await Promise.all([
      like('username_key', pattern.toLowerCase()),
      like('nickname', pattern),
    ]);
    const byId = new Map([...byUsername, ...byNickname].map((row) => [Number(row.id), row]));
    return [...byId.values()]
      .map(toRecord)
      .sort((a, b) => (a.username.toLowerCase() < b.username.toLowerCase() ? -1 : 1))
      .slice(0, limit);
  }
}

function toRecord(row: Selectable<UsersTable>): UserRecord {
  return {
    // BIGINT columns: numbers on both drivers (all fit in 2^53), coerced to be sure.
    id: Number(row.id),
    appCode: row.app_code,
    username: row.username,
    passwordHash: row.password_hash,
    nickname: row.nickname,
    avatar: row.avatar,
    createdAtMs: Number(row.created_at_ms),
    updatedAtMs: Number(row.updated_at_ms),
  };
}
