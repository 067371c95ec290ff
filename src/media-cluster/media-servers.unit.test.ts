/** Media room names round-trip, keep apps and kinds apart, and refuse other names. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { roomCode } from '../media-server/schemas.js';
import { mediaRoomOf, parseMediaRoom, singleMediaServer } from './media-servers.js';

describe('media room names', () => {
  it('round-trip every kind, with room ids that contain : and @', () => {
    for (const [kind, key] of [
      ['meeting', { appCode: 'default', roomId: '835-000-036' }],
      ['voice_room', { appCode: 'shop_2', roomId: 'r:42@eu' }],
      ['voice_room', { appCode: 'a'.repeat(64), roomId: 'x'.repeat(64) }],
    ] as const) {
      const name = mediaRoomOf(key, kind);
      assert.deepEqual(parseMediaRoom(name), { kind, key });
      assert.ok(roomCode.safeParse(name).success, `the media server takes ${name}`);
    }
  });

  it('differ between apps and kinds for the same room id', () => {
    const names = new Set([
      mediaRoomOf({ appCode: 'a', roomId: '835-000-036' }, 'meeting'),
      mediaRoomOf({ appCode: 'b', roomId: '835-000-036' }, 'meeting'),
      mediaRoomOf({ appCode: 'a', roomId: '835-000-036' }, 'voice_room'),
    ]);
    assert.equal(names.size, 3);
  });

  it('parse nothing else', () => {
    for (const name of ['835-000-036', 'default:835-000-036', 'meeting:Default:x', 'meeting:a:']) {
      assert.equal(parseMediaRoom(name), null, name);
    }
  });
});

describe('singleMediaServer', () => {
  it('places on its id, reaches only that id, and refuses the rest as unavailable', async () => {
    const none = singleMediaServer('media-1', null);
    assert.equal(none.place(), null);
    assert.deepEqual(none.ids(), []);
    await assert.rejects(none.of('media-1').createRouter('meeting:a:1'), {
      code: 'MEDIA_SERVER_ERROR',
    });
  });
});
