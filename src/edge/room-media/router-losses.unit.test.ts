/**
 * What the room's owner does when a media server reports routers lost with a worker: an
 * edge's listeners alone are released and told to reset (to the room's router); an
 * origin's loss resets the whole room; a room another node owns, or of no known kind, is
 * left to others; an edge held for another server's room is that server's to report.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import type { CellKey } from '../../cell/lease.js';
import type { MediaEvent, LostRouter } from '../../media-server/events.js';
import { RouterLosses, type RouterLossDeps } from './router-losses.js';

const CAPS = { codecs: [] };

function lostEvent(...routers: LostRouter[]): MediaEvent {
  return {
    type: 'routers_lost',
    worker_index: 1,
    worker_pid: 4242,
    routers,
    error: 'killed',
    seq: 1,
    at_ms: 0,
  };
}

function harness(owns = true) {
  const calls: string[] = [];
  const state: RouterLossDeps['state'] = {
    clear: (_key: CellKey, userId: string) => {
      calls.push(`clear ${userId}`);
      return Promise.resolve();
    },
    liveProducers: () =>
      Promise.resolve([{ userId: 'speaker', producerId: 'p1', kind: 'audio' as const }]),
  };
  const media: RouterLossDeps['media'] = {
    of: (server) => ({
      createRouter: (room) => {
        calls.push(`router ${server} ${room}`);
        return Promise.resolve({ routerId: 'origin-2', rtpCapabilities: CAPS });
      },
    }),
  };
  const losses = new RouterLosses({
    state,
    media,
    broadcaster: {
      toRoom: (key, event, data) =>
        calls.push(`room ${key.roomId} ${event} ${String(data.router_id)}`),
      toUser: (_app, userId, event, data) =>
        calls.push(`user ${userId} ${event} ${String(data.room_id)} ${String(data.router_id)}`),
    },
    release: {
      voice_room: (_key, userId, server) => {
        calls.push(`release ${userId} ${server}`);
        return Promise.resolve();
      },
    },
    owns: () => owns,
    logger: pino({ level: 'silent' }),
  });
  return { calls, losses };
}

void describe('router losses', () => {
  void it("resets only a lost edge's listeners, after releasing their media", async () => {
    const { calls, losses } = harness();
    losses.onEvent(
      lostEvent({
        router_id: 'edge-1',
        room_code: 'voice_room:default:r1',
        role: 'edge',
        peers: ['7', '8'],
      }),
      'media-1',
    );
    await losses.close();
    assert.deepEqual([...calls].sort(), [
      'release 7 media-1',
      'release 8 media-1',
      'router media-1 voice_room:default:r1',
      'user 7 voice.media.reset r1 origin-2',
      'user 8 voice.media.reset r1 origin-2',
    ]);
    assert.ok(
      calls.indexOf('release 7 media-1') < calls.indexOf('user 7 voice.media.reset r1 origin-2'),
    );
  });

  void it('resets the whole room when its origin is lost', async () => {
    const { calls, losses } = harness();
    losses.onEvent(
      lostEvent({
        router_id: 'origin-1',
        room_code: 'voice_room:default:r1',
        role: 'origin',
        peers: ['speaker'],
      }),
      'media-1',
    );
    await losses.close();
    assert.ok(calls.includes('clear speaker'));
    assert.ok(calls.includes('room r1 voice.media.reset origin-2'));
    assert.ok(!calls.some((c) => c.startsWith('user ')));
  });

  void it('leaves rooms it does not own, and kinds it has no release for', async () => {
    const notOwner = harness(false);
    const edge = { router_id: 'e', role: 'edge' as const, peers: ['7'] };
    notOwner.losses.onEvent(lostEvent({ ...edge, room_code: 'voice_room:default:r1' }), 'm');
    await notOwner.losses.close();
    assert.deepEqual(notOwner.calls, []);
    const noKind = harness();
    noKind.losses.onEvent(lostEvent({ ...edge, room_code: 'meeting:default:123-456-789' }), 'm');
    await noKind.losses.close();
    assert.deepEqual(noKind.calls, []);
  });

  void it('resets an edge lost with another server once, as the room server reports it', async () => {
    const { calls, losses } = harness();
    const edge = { router_id: 'e', room_code: 'voice_room:default:r1', role: 'edge' as const };
    // The server that held the edge, still alive, reports its worker's death: skipped.
    losses.onEvent(lostEvent({ ...edge, peers: ['7'], origin_server: 'media-1' }), 'media-2');
    await losses.close();
    assert.deepEqual(calls, []);
    // The room's own server reports it, naming where the edge was.
    losses.onEvent(lostEvent({ ...edge, peers: ['7'], media_server: 'media-2' }), 'media-1');
    await losses.close();
    assert.deepEqual([...calls].sort(), [
      'release 7 media-1',
      'router media-1 voice_room:default:r1',
      'user 7 voice.media.reset r1 origin-2',
    ]);
  });
});
