/**
 * The one zod-to-error answer of the edges. The copies it replaced differed: some named every
 * failing field (`a: …; b: …`), some prefixed a failure of the whole value with `request: `,
 * `body: ` or a bare `: `; the answer is now the first failing field, and the rule alone for
 * the whole value.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { errors } from './error-codes.js';
import { AppError } from './errors.js';
import { parseInput } from './parse-input.js';

const schema = z
  .object({
    room_id: z.string().min(1, '1-128 characters'),
    seats: z.array(z.object({ index: z.number().int('an integer') })).optional(),
    count: z.number().int('an integer').default(1),
  })
  .strict();

function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof AppError, String(error));
    return error;
  }
  assert.fail('nothing was refused');
}

void describe('parseInput', () => {
  void it('returns what the schema reads, defaults filled in', () => {
    assert.deepEqual(parseInput(schema, { room_id: 'r-1', count: 3 }), {
      room_id: 'r-1',
      count: 3,
    });
    assert.deepEqual(parseInput(schema, { room_id: 'r-1' }), { room_id: 'r-1', count: 1 });
  });

  void it('takes input as typed: a JSON string is never a number', () => {
    for (const count of ['3', true, [3], null, 1.5]) {
      const e = refusal(() => parseInput(schema, { room_id: 'r-1', count }));
      assert.equal(e.code, 'INVALID_ARGUMENT', JSON.stringify(count));
      assert.match(e.message, /^count: /);
    }
  });

  void it('refuses with INVALID_ARGUMENT naming the first failing field, dotted', () => {
    const e = refusal(() => parseInput(schema, { room_id: 'r', seats: [{ index: 0.5 }] }));
    assert.deepEqual(
      [e.kind, e.code, e.message],
      ['validation', 'INVALID_ARGUMENT', 'seats.0.index: an integer'],
    );
  });

  void it('names only the first of several failing fields', () => {
    const e = refusal(() => parseInput(schema, { room_id: '', seats: [{ index: 0.5 }] }));
    assert.equal(e.message, 'room_id: 1-128 characters');
  });

  void it('gives the rule alone when the whole value fails', () => {
    assert.equal(
      refusal(() => parseInput(schema, { room_id: 'r', extra: 1 })).message,
      'Unrecognized key: "extra"',
    );
    assert.match(
      refusal(() => parseInput(schema, null)).message,
      /^Invalid input: expected object/,
    );
  });

  void it("answers with the caller's code and its message format", () => {
    const e = refusal(() => parseInput(schema, { room_id: '' }, errors.BAD_REQUEST));
    assert.deepEqual([e.code, e.message], ['BAD_REQUEST', '参数错误: room_id: 1-128 characters']);
    const v = refusal(() => parseInput(schema, {}, errors.VALIDATION));
    assert.deepEqual(
      [v.code, v.message],
      ['VALIDATION', '参数错误: room_id: Invalid input: expected string, received undefined'],
    );
  });
});
