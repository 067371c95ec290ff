/**
 * TURN servers in the transport ACKs of one real node (embedded SQLite and media server),
 * through REST and `/ws` only: with `ROOMS_TURN_*` every meeting and voice-room transport
 * carries `iceServers` with a credential for its own user that a TURN server holding the
 * secret accepts (recomputed here) and that expires a TTL after it; without, `iceServers` is
 * empty.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { mediaSkipReason } from '../../media-server/testing/harness.js';
import { startMeetingNode, type MeetingNode } from '../../main/testing/meeting-node.js';

const URLS = ['turn:198.18.0.1:3478?transport=udp', 'turns:turn.example.com:443?transport=tcp'];
const SECRET = 'the-turn-servers-shared-secret';
const TTL_S = 600;

interface IceServer {
  urls: string[];
  username: string;
  credential: string;
}

void describe('TURN servers in the transport ACKs', { skip: mediaSkipReason() }, () => {
  let withTurn: MeetingNode | undefined;
  let without: MeetingNode | undefined;

  before(async () => {
    withTurn = await startMeetingNode(['host', 'guest'], {
      ROOMS_TURN_URLS: URLS.join(','),
      ROOMS_TURN_SECRET: SECRET,
      ROOMS_TURN_CREDENTIAL_TTL_S: String(TTL_S),
    });
    without = await startMeetingNode(['host']);
  });
  after(async () => {
    await withTurn?.close();
    await without?.close();
  });

  /** A meeting transport of `who` on `node`: its ACK's iceServers. */
  async function meetingIceServers(node: MeetingNode, who: string): Promise<IceServer[]> {
    const created = await node.api.call('POST', '/meeting/rooms', {
      as: 'host',
      body: { title: 'TURN' },
    });
    const code = created.body.data.room.room_code as string;
    if (who !== 'host') {
      await node.api.call('POST', `/meeting/rooms/${code}/join`, { as: who, body: {} });
    }
    const socket = await node.socket(who);
    assert.equal((await socket.request('meeting.room.join', { room_code: code })).code, 0);
    const ack = await socket.request('meeting.transport.create', {
      room_code: code,
      direction: 'recv',
    });
    assert.equal(ack.code, 0, ack.message);
    return (ack.data as { iceServers: IceServer[] }).iceServers;
  }

  /** Checks a credential as coturn's use-auth-secret does: HMAC-SHA1 of the username. */
  function assertValidFor(servers: IceServer[], userId: number, before: number) {
    assert.equal(servers.length, 1);
    const [server] = servers;
    assert.deepEqual(server!.urls, URLS);
    const [expiry, user] = server!.username.split(':');
    assert.equal(Number(user), userId);
    const expiresIn = Number(expiry) - before / 1_000;
    assert.ok(expiresIn > TTL_S - 5 && expiresIn <= TTL_S + 1, `expires in ${expiresIn} s`);
    const expected = createHmac('sha1', SECRET).update(server!.username).digest('base64');
    assert.equal(server!.credential, expected);
  }

  void it('gives a meeting member’s transports a credential of its own', async () => {
    const started = Date.now();
    assertValidFor(await meetingIceServers(withTurn!, 'guest'), withTurn!.api.ids.guest!, started);
  });

  void it('gives a voice room’s transports one too', async () => {
    const { api } = withTurn!;
    const created = await api.call('POST', '/voice/rooms', { as: 'host', body: { title: 'TURN' } });
    const roomId = (created.body.data as { room_id: string }).room_id;
    await api.call('POST', `/voice/rooms/${roomId}/join`, { as: 'guest', body: {} });
    const socket = await withTurn!.socket('guest');
    assert.equal((await socket.request('room.subscribe', { room_id: roomId })).code, 0);
    assert.equal((await socket.request('voice.media.join', { room_id: roomId })).code, 0);
    const started = Date.now();
    const ack = await socket.request('voice.transport.create', {
      room_id: roomId,
      direction: 'recv',
    });
    assert.equal(ack.code, 0, ack.message);
    assertValidFor((ack.data as { iceServers: IceServer[] }).iceServers, api.ids.guest!, started);
  });

  void it('gives none without TURN settings', async () => {
    assert.deepEqual(await meetingIceServers(without!, 'host'), []);
  });
});
