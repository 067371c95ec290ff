/**
 * The crowd's count frame (./audience-counts.ts): the first count at once, the counts of
 * the next interval together at its end with the newest, one room's counts apart from
 * another's; commits without a crowd mark, and other kinds, send nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CommittedBatch } from '../../cell/cell.js';
import type { CellKey } from '../../cell/lease.js';
import type { VoiceRoomEvent } from '../domain/types.js';
import { AudienceCounts } from './audience-counts.js';

const ROOM: CellKey = { appCode: 'default', roomId: 'r1' };
const OTHER: CellKey = { appCode: 'default', roomId: 'r2' };
const INTERVAL = 60;

function batch(key: CellKey, events: VoiceRoomEvent[], kind = 'voice_room'): CommittedBatch {
  return {
    key,
    kind,
    version: 1,
    entries: [{ version: 1, requestId: 'r', command: { type: 'JoinRoom' }, events }],
    envelopes: [],
    reactions: [],
  };
}
const crowdJoin = (user_id: string, online_count: number): VoiceRoomEvent => ({
  type: 'UserJoined',
  user_id,
  at_ms: 0,
  in_crowd: true,
  online_count,
});

function harness() {
  const sent: { room: string; data: Record<string, unknown> }[] = [];
  const counts = new AudienceCounts(
    { toRoom: (key, event, data) => sent.push({ room: `${event} ${key.roomId}`, data }) },
    INTERVAL,
  );
  return { sent, counts };
}

void describe('the crowd count frame', () => {
  void it('sends the first count at once and the newest of an interval at its end', async () => {
    const { sent, counts } = harness();
    counts.onCommitted(batch(ROOM, [crowdJoin('a', 201)]));
    assert.deepEqual(sent, [
      { room: 'voice.audience r1', data: { room_id: 'r1', online_count: 201 } },
    ]);
    counts.onCommitted(batch(ROOM, [crowdJoin('b', 202), crowdJoin('c', 203)]));
    counts.onCommitted(batch(ROOM, [crowdJoin('d', 204)]));
    counts.onCommitted(batch(OTHER, [crowdJoin('x', 500)]));
    assert.equal(sent.length, 2, 'r1 waits for its interval; r2 goes at once');
    await sleep(INTERVAL * 2);
    assert.deepEqual(
      sent.map((s) => [s.room, s.data.online_count]),
      [
        ['voice.audience r1', 201],
        ['voice.audience r2', 500],
        ['voice.audience r1', 204],
      ],
    );
    // Quiet for an interval: the next count goes at once again.
    await sleep(INTERVAL * 2);
    counts.onCommitted(batch(ROOM, [crowdJoin('e', 205)]));
    assert.equal(sent.at(-1)?.data.online_count, 205);
    counts.close();
  });

  void it('ignores announced joins and other kinds of room', async () => {
    const { sent, counts } = harness();
    counts.onCommitted(batch(ROOM, [{ type: 'UserJoined', user_id: 'a', at_ms: 0 }]));
    counts.onCommitted(batch(ROOM, [crowdJoin('a', 300)], 'meeting'));
    await sleep(INTERVAL * 2);
    assert.deepEqual(sent, []);
    counts.close();
  });
});
