import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { privateMariadbSkipReason, startPrivateMariadb } from './private-mariadb.js';

describe('startPrivateMariadb', { skip: privateMariadbSkipReason() }, () => {
  // mariadbd removes every `#sql*` file of its tmpdir when it starts. In the shared /tmp those
  // are the shared server's temporary tables: a query of another test failed with EE_DELETE.
  it('leaves the temporary tables in the shared /tmp alone, at start and at restart', async (t) => {
    const probe = path.join(tmpdir(), `#sql-temptable-rooms-probe-${randomUUID()}.MAI`);
    await writeFile(probe, '');
    t.after(() => rm(probe, { force: true }));

    const db = await startPrivateMariadb();
    t.after(() => db.stop());
    assert.ok(existsSync(probe), 'the start left the file');
    await db.kill();
    await db.restart();
    assert.ok(existsSync(probe), 'the restart left the file');
  });
});
