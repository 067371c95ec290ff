import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSnapshotDue, LOG_BYTES_PER_VERSION } from './snapshot-due.js';

void describe('when a snapshot is due', () => {
  void it('every snapshotEvery versions while the snapshot is small', () => {
    const base = { snapshotVersion: 200, snapshotBytes: 2_000 };
    assert.equal(isSnapshotDue(base, 299, 100), false);
    assert.equal(isSnapshotDue(base, 300, 100), true);
    assert.equal(isSnapshotDue({ snapshotVersion: 0, snapshotBytes: 0 }, 100, 100), true);
  });

  void it('once the log since is as large as a large snapshot', () => {
    const bytes = 1_600_000; // 10,000 present members
    const base = { snapshotVersion: 1_000, snapshotBytes: bytes };
    const versions = Math.ceil(bytes / LOG_BYTES_PER_VERSION);
    assert.equal(isSnapshotDue(base, 1_000 + 100, 100), false);
    assert.equal(isSnapshotDue(base, 1_000 + versions - 1, 100), false);
    assert.equal(isSnapshotDue(base, 1_000 + versions, 100), true);
  });
});
