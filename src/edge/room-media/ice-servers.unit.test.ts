import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { iceServersFor, TURN_URL } from './ice-servers.js';

const turn = {
  urls: ['turn:turn.example.com:3478?transport=udp', 'turns:turn.example.com:443?transport=tcp'],
  secret: 'a-shared-secret-of-the-turn-server',
  credentialTtlS: 3_600,
};

void describe('TURN credentials (the TURN REST API scheme coturn checks)', () => {
  void it('are none without TURN settings', () => {
    assert.deepEqual(iceServersFor(null, 7), []);
    assert.deepEqual(iceServersFor({ ...turn, urls: [] }, 7), []);
  });

  void it('name the expiry and the user, signed with HMAC-SHA1 of the secret', () => {
    const now = Date.UTC(2026, 11, 5, 12, 0, 0);
    const [server, ...more] = iceServersFor(turn, 42, now);
    assert.deepEqual(more, []);
    assert.deepEqual(server!.urls, turn.urls);
    assert.equal(server!.username, `${now / 1_000 + 3_600}:42`);
    // What `openssl dgst -sha1 -hmac <secret> -binary | base64` makes of the username: the
    // computation coturn's use-auth-secret repeats.
    const expected = execFileSync(
      'sh',
      [
        '-c',
        `printf %s "$0" | openssl dgst -sha1 -hmac "$1" -binary | base64`,
        server!.username,
        turn.secret,
      ],
      { encoding: 'utf8' },
    ).trim();
    assert.equal(server!.credential, expected);
  });

  void it('differ per user and per time, so one cannot be reused for another', () => {
    const a = iceServersFor(turn, 1, 1_000_000)[0]!;
    assert.notEqual(a.credential, iceServersFor(turn, 2, 1_000_000)[0]!.credential);
    assert.notEqual(a.credential, iceServersFor(turn, 1, 2_000_000)[0]!.credential);
  });

  void it('accept turn: and turns: URLs only', () => {
    for (const url of [
      'turn:1.2.3.4',
      'turn:turn.example.com:3478?transport=tcp',
      'turns:t.example:443',
    ]) {
      assert.ok(TURN_URL.test(url), url);
    }
    for (const url of [
      'stun:1.2.3.4',
      'turn:',
      'http://x',
      'turn:a b',
      'turn:x?transport=sctp',
      'turn:u@x',
    ]) {
      assert.ok(!TURN_URL.test(url), url);
    }
  });
});
