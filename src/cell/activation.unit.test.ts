/**
 * Replay on activation: the snapshot goes through its kind's `fromSnapshot` (a kind whose
 * state changed shape reads the snapshots written before), then the log after it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { replayActivated } from './activation.js';
import type { ActivatedCell } from './cell-store.js';
import type { SqlStoreTypes } from '../adapters/sql/sql-store-types.js';
import type { AnyDomain } from './host-types.js';
import { counterDomain, type CounterState } from './testing/counter-domain.js';

const KEY = { appCode: 'app', roomId: 'room' };
const counter: AnyDomain<SqlStoreTypes> = counterDomain();

function loaded(snapshot: string): ActivatedCell {
  return {
    leaseEpoch: 1,
    version: 4,
    snapshot,
    snapshotVersion: 3,
    log: [{ version: 4, requestId: 'r-4', events: '[{"type":"Added","amount":2}]' }],
    persisted: true,
  };
}

describe('replayActivated', () => {
  it('takes the parsed snapshot as it is when the kind has no fromSnapshot', () => {
    const { state, version } = replayActivated(
      counter,
      KEY,
      loaded('{"count":5,"alarms":[],"fired":[]}'),
    );
    assert.deepEqual(state, { count: 7, alarms: [], fired: [] });
    assert.equal(version, 4);
  });

  it("reads the snapshot through the kind's fromSnapshot, then replays the log", () => {
    const upgrading: AnyDomain<SqlStoreTypes> = {
      ...counter,
      // A snapshot of before, when the counter was called `total`.
      fromSnapshot: (stored) => {
        const old = stored as { total?: number } & Partial<CounterState>;
        return { count: old.count ?? old.total, alarms: [], fired: [] };
      },
    };
    const { state } = replayActivated(upgrading, KEY, loaded('{"total":5}'));
    assert.deepEqual(state, { count: 7, alarms: [], fired: [] });
  });
});
