import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { alarmOf, dueCount, insertCellsSql } from './sweeper-rows.js';

describe('sweeper rows', () => {
  it('makes 1 room in 100 due, 1 in 10 due later, the rest without an alarm', () => {
    const now = 1_700_000_000_000;
    const alarms = Array.from({ length: 1_000 }, (_, i) => alarmOf(i, now));
    const due = alarms.filter((a) => a !== null && a <= now).length;
    assert.equal(due, 10);
    assert.equal(due, dueCount(1_000));
    assert.equal(alarms.filter((a) => a !== null && a > now).length, 100);
    assert.equal(alarms.filter((a) => a === null).length, 890);
    assert.equal(dueCount(1_001), 11);
  });

  it('writes one row per room, with the room ids and alarms of its range', () => {
    const now = 1_700_000_000_000;
    const sql = insertCellsSql(100, 3, now);
    assert.equal((sql.match(/\('scale','r/g) ?? []).length, 3);
    assert.ok(
      sql.includes(`'r100','counter',1,1,'{"count":1,"alarms":[],"fired":[]}',1,${now - 60_100},`),
    );
    assert.ok(
      sql.includes(
        `'r101','counter',1,1,'{"count":1,"alarms":[],"fired":[]}',1,${now + 3_600_101},`,
      ),
    );
    assert.ok(sql.includes(`'r102','counter',1,1,'{"count":1,"alarms":[],"fired":[]}',1,NULL,`));
  });
});
