/**
 * Every value the MySQL pool sends is escaped with backslashes. On a server configured with
 * NO_BACKSLASH_ESCAPES a backslash is an ordinary character, so `\'` would end a string
 * early and let a caller's text run as SQL. The pool takes that mode out of each session:
 * hostile values still come back byte for byte, and the server's own setting is left alone.
 */
import assert from 'node:assert/strict';
import { sql as rawSql } from 'kysely';
import { createConnection } from 'mysql2/promise';
import { after, before, describe, it } from 'node:test';
import {
  privateMariadbSkipReason,
  startPrivateMariadb,
  type PrivateMariadb,
} from '../../testing/private-mariadb.js';
import { openSqlBackend, type SqlBackend } from './database.js';

const MODE = 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION,NO_BACKSLASH_ESCAPES';

void describe(
  'MySQL pool on a server with NO_BACKSLASH_ESCAPES',
  { skip: privateMariadbSkipReason() },
  () => {
    let server: PrivateMariadb;
    let url: string;
    let sql: SqlBackend;
    before(async () => {
      server = await startPrivateMariadb({ serverArgs: [`--sql-mode=${MODE}`] });
      url = await server.createDatabase('rooms');
      sql = await openSqlBackend(url, { poolSize: 2 });
    });
    after(async () => {
      await sql?.close();
      await server?.stop();
    });

    it('the server really reads a backslash as an ordinary character', async () => {
      const plain = await createConnection(url);
      try {
        const [rows] = await plain.query("SELECT 'a\\b' AS v");
        assert.deepEqual((rows as { v: string }[])[0]!.v, 'a\\b');
      } finally {
        await plain.end();
      }
    });

    it('sends hostile values that come back byte for byte, and none of them runs', async () => {
      const hostile = [
        "x\\'; DROP TABLE room_outbox; -- ",
        "x\\' OR 1=1 OR '",
        'ends with a backslash\\',
        "quote ' and backslash \\ apart",
        'nul\u0000 ctrl-Z \u001a',
      ];
      for (const value of hostile) {
        const row = await rawSql<{ v: string }>`SELECT ${value} AS v`.execute(sql.db);
        assert.equal(row.rows[0]!.v, value);
      }
      await rawSql`CREATE TABLE hostile (n INT PRIMARY KEY, v TEXT)`.execute(sql.db);
      for (const [n, value] of hostile.entries()) {
        await rawSql`INSERT INTO hostile (n, v) VALUES (${n}, ${value})`.execute(sql.db);
      }
      const stored = await rawSql<{ v: string }>`SELECT v FROM hostile ORDER BY n`.execute(sql.db);
      assert.deepEqual(
        stored.rows.map((r) => r.v),
        hostile,
      );
      const tables = await rawSql<{ n: number }>`SELECT COUNT(*) AS n FROM room_outbox`.execute(
        sql.db,
      );
      assert.equal(Number(tables.rows[0]!.n), 0, 'room_outbox is still there');
    });

    it('changes only its own sessions', async () => {
      const row = await rawSql<{
        session: string;
        global: string;
      }>`SELECT @@SESSION.sql_mode AS session, @@GLOBAL.sql_mode AS global`.execute(sql.db);
      assert.doesNotMatch(row.rows[0]!.session, /NO_BACKSLASH_ESCAPES/);
      assert.match(row.rows[0]!.session, /STRICT_TRANS_TABLES/);
      assert.match(row.rows[0]!.global, /NO_BACKSLASH_ESCAPES/);
    });
  },
);
