import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { withStatementCache } from './sqlite-statements.js';

void describe('withStatementCache', () => {
  void it('prepares each text once, evicts the least recently used, and still answers', () => {
    const raw = new SqliteDatabase(':memory:');
    let prepared = 0;
    const counting = {
      close: () => raw.close(),
      prepare: (sql: string) => (prepared++, raw.prepare(sql)),
    };
    const db = withStatementCache(counting, 2);
    db.prepare('create table t (x integer)').run([]);
    const insert = 'insert into t (x) values (?)';
    for (let i = 0; i < 5; i++) db.prepare(insert).run([i]);
    assert.equal(prepared, 2, 'the insert was prepared once');
    assert.deepEqual(db.prepare('select count(*) as n from t').all([]), [{ n: 5 }]);
    // Capacity 2: the create is gone, the insert and the count stay; touching the insert
    // makes the count the oldest, so a third text evicts the count.
    db.prepare(insert);
    db.prepare('select 1 as one').all([]);
    const before = prepared;
    db.prepare(insert).run([9]);
    assert.equal(prepared, before, 'the insert is still kept');
    db.prepare('select count(*) as n from t').all([]);
    assert.equal(prepared, before + 1, 'the count was evicted');
    db.close();
  });
});
