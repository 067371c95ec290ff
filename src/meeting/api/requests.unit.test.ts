/**
 * Who may call a meeting: an account id (decimal, a safe integer), so that every user id a
 * meeting answers (host_id, user_id, inviter_id, …) is a JSON number. A forwarded or gRPC
 * call naming another kind of caller is refused before anything runs; the node's own media
 * failover calls the one endpoint declared for it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { FAILOVER_CALLER } from '../../media-cluster/media-failover.js';
import { Caller, SystemCaller } from './requests.js';

const caller = z.strictObject(Caller);
const accepts = (caller_id: string) => caller.safeParse({ app_code: 'default', caller_id }).success;

describe('a meeting caller', () => {
  it('is a decimal account id', () => {
    for (const id of ['1', '17', '123456789012345']) assert.ok(accepts(id), id);
  });
  it('is never a name, zero, a padded or an unsafe number', () => {
    for (const id of [
      'alice',
      'u-1',
      '0',
      '017',
      '1.5',
      '-3',
      '1234567890123456',
      ' 17',
      '',
      FAILOVER_CALLER,
    ]) {
      assert.ok(!accepts(id), id);
    }
  });
  it('is the node itself only where a declaration says so (a media move), never an account', () => {
    const system = z.strictObject(SystemCaller);
    assert.ok(system.safeParse({ app_code: 'default', caller_id: FAILOVER_CALLER }).success);
    assert.ok(!system.safeParse({ app_code: 'default', caller_id: '17' }).success);
  });
});
