/**
 * An answer is sent only as its declaration says: a field of the wrong type, a missing one or
 * one the reply does not list is refused as a bug (REPLY_MISMATCH, 500), naming where.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { AppError } from '../shared/errors.js';
import { declaredReply } from './declared-reply.js';

const Reply = z.strictObject({
  room_version: z.int(),
  seats: z.array(z.strictObject({ seat_index: z.int() })),
});

describe('declaredReply', () => {
  it('returns the answer that matches, as the schema types it', () => {
    const answer = { room_version: 3, seats: [{ seat_index: 0 }] };
    assert.deepEqual(declaredReply(Reply, 'GetRoom', answer), answer);
  });

  for (const [label, answer, where] of [
    ['a string for an integer', { room_version: '3', seats: [] }, 'room_version'],
    ['a missing field', { seats: [] }, 'room_version'],
    ['a field it does not list', { room_version: 3, seats: [], secret: 'x' }, '(the whole'],
    ['a bad nested field', { room_version: 3, seats: [{ seat_index: 0.5 }] }, 'seats.0.seat_index'],
    ['no object at all', null, '(the whole answer)'],
  ] as const) {
    it(`refuses ${label} as REPLY_MISMATCH, naming where`, () => {
      assert.throws(
        () => declaredReply(Reply, 'GetRoom', answer),
        (e: unknown) =>
          e instanceof AppError &&
          e.code === 'REPLY_MISMATCH' &&
          e.kind === 'internal' &&
          e.message.includes('GetRoom') &&
          e.message.includes(where),
      );
    });
  }
});
