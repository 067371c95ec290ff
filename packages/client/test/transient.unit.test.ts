/** What the client retries by itself: outages and drops, never a refusal of the rules. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, RealtimeError, isTransient } from '../src/index.js';

describe('isTransient', () => {
  it('retries no answer, a gateway error, an unavailable node or media server, a drop', () => {
    assert.ok(isTransient(new ApiError('down', 0, 'NETWORK')));
    assert.ok(isTransient(new ApiError('bad gateway', 502, undefined)));
    assert.ok(isTransient(new ApiError('moved', 503, 'CELL_FENCED')));
    assert.ok(isTransient(new RealtimeError('no ack', 'TIMEOUT')));
    assert.ok(isTransient(new RealtimeError('failover', 'MEDIA_SERVER_ERROR')));
    assert.ok(isTransient(new RealtimeError('owner paused', 'OWNER_TIMEOUT')));
  });
  it('never retries what the rules refused, bad input or a bug', () => {
    assert.ok(!isTransient(new ApiError('会议已满员', 400, 'MEETING_FULL')));
    assert.ok(!isTransient(new ApiError('参数错误', 400, 'VALIDATION')));
    assert.ok(!isTransient(new ApiError('internal', 500, 'INTERNAL')));
    assert.ok(!isTransient(new RealtimeError('仅主持人可执行此操作', 'HOST_ONLY_WS')));
    assert.ok(!isTransient('TIMEOUT'));
  });
});
