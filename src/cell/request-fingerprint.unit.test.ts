import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { requestFingerprint } from './request-fingerprint.js';

describe('requestFingerprint', () => {
  const join = { app_code: 'a', caller_id: '7', room_code: '123-456-789' };

  it('is the same for the same request, whatever the order of its keys and its request id', () => {
    assert.equal(
      requestFingerprint('JoinMeeting', { ...join, request_id: 'k1' }),
      requestFingerprint('JoinMeeting', {
        room_code: '123-456-789',
        request_id: 'k2',
        caller_id: '7',
        app_code: 'a',
      }),
    );
  });

  it('differs for another operation, another value, a value of another type, or a nested change', () => {
    const base = requestFingerprint('SendChat', { ...join, content: 'hi' });
    const others = [
      requestFingerprint('LeaveMeeting', { ...join, content: 'hi' }),
      requestFingerprint('SendChat', { ...join, content: 'hi!' }),
      requestFingerprint('SendChat', { ...join, content: 'hi', extra: 1 }),
      requestFingerprint('SendChat', { ...join, caller_id: 7, content: 'hi' }),
      requestFingerprint('SendChat', { ...join, content: ['hi'] }),
    ];
    for (const other of others) assert.notEqual(other, base);
    assert.notEqual(
      requestFingerprint('SendGift', { receiver_user_ids: ['1', '2'] }),
      requestFingerprint('SendGift', { receiver_user_ids: ['2', '1'] }),
      'the order of a list is part of the request',
    );
  });

  it('keeps no trace of a password, only that one was sent', () => {
    const a = requestFingerprint('JoinMeeting', { ...join, password: 'right-one' });
    assert.equal(a, requestFingerprint('JoinMeeting', { ...join, password: 'wrong-one' }));
    assert.notEqual(a, requestFingerprint('JoinMeeting', join));
  });

  it('names a media move by its room and the server it leaves, not by the target each node picks', () => {
    const move = { app_code: 'a', room_id: 'r', from_server: 'media-1' };
    assert.equal(
      requestFingerprint('MoveMediaServer', { ...move, to_server: 'media-2' }),
      requestFingerprint('MoveMediaServer', { ...move, to_server: 'media-3' }),
    );
    assert.notEqual(
      requestFingerprint('MoveMediaServer', { ...move, to_server: 'media-2' }),
      requestFingerprint('MoveMediaServer', { ...move, from_server: 'media-2' }),
    );
  });
});
