/**
 * Create and join answer the router this node already knows for the meeting, without asking
 * the media server again (the seed's ResolveRouterInfo cache). Attacked here from the
 * outside: whatever closes a router behind the node's back (a direct close on the media
 * server, the death of its worker, a restart of a separate media server at the same
 * address), the next join answers the router the media server now has for the meeting,
 * never the one that is gone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  call,
  mediaSkipReason,
  startTestMediaServer,
  TEST_TOKEN,
} from '../../media-server/testing/harness.js';
import type { MediaServer } from '../../media-server/server.js';
import { mediaRoomOf } from '../../media-cluster/media-servers.js';
import { freePort } from '../../testing/backends.js';
import { startMeetingNode, type MeetingNode } from '../../main/testing/meeting-node.js';

type RouterView = { router_id: string };

/** The router the media server holds for the meeting now, or null. */
async function serverRouter(server: MediaServer, code: string): Promise<string | null> {
  const room = encodeURIComponent(mediaRoomOf({ appCode: 'default', roomId: code }));
  const path = `/internal/v1/rooms/${room}/router`;
  const r = await call<RouterView>(server, 'GET', path, undefined, server.internalToken);
  return r.status === 200 ? r.body.data.router_id : null;
}

async function waitFor<T>(what: string, probe: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 250; i++) {
    const value = await probe();
    if (value !== null) return value;
    await sleep(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function createMeeting(
  started: MeetingNode,
  host: string,
): Promise<{ code: string; router: string }> {
  const created = await started.api.call('POST', '/meeting/rooms', {
    as: host,
    body: { title: 'router cache' },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const router = created.body.data.router_id as string;
  assert.equal(typeof router, 'string');
  return { code: created.body.data.room.room_code as string, router };
}

async function join(started: MeetingNode, who: string, code: string): Promise<string> {
  const joined = await started.api.call('POST', `/meeting/rooms/${code}/join`, {
    as: who,
    body: {},
  });
  assert.equal(joined.status, 200, JSON.stringify(joined.body));
  assert.ok(Array.isArray(joined.body.data.rtp_capabilities.codecs));
  return joined.body.data.router_id as string;
}

describe('the router a meeting’s create and join answer', { skip: mediaSkipReason() }, () => {
  describe('with the embedded media server', () => {
    let started: MeetingNode;
    let server: MediaServer;
    before(async () => {
      started = await startMeetingNode(['h1', 'h2', 'g1', 'g2', 'g3']);
      server = started.node.media.server!;
    });
    after(() => started.close());

    it('is the one router of the meeting, remembered, until it closes on the server', async () => {
      const routers = () => server.registry.stats.routers;
      // Every `POST /internal/v1/routers` reaches the registry's ensureRouter: counted here.
      const registry = server.registry;
      const ensure = registry.ensureRouter.bind(registry);
      let asked = 0;
      registry.ensureRouter = (roomCode) => {
        asked++;
        return ensure(roomCode);
      };
      const { code, router } = await createMeeting(started, 'h1');
      assert.equal(asked, 1, 'the create made the router');
      const count = routers();
      assert.equal(await join(started, 'g1', code), router);
      assert.equal(routers(), count, 'a join makes no second router');
      assert.equal(asked, 1, 'the join answered the remembered router, without asking');

      const closed = await call(
        server,
        'POST',
        `/internal/v1/routers/${router}/close`,
        {},
        server.internalToken,
      );
      assert.equal(closed.status, 200, JSON.stringify(closed.body));
      assert.equal(await serverRouter(server, code), null);

      const next = await join(started, 'g2', code);
      assert.notEqual(next, router, 'not the closed router');
      assert.equal(await serverRouter(server, code), next, 'the server’s router');
    });

    it('is a live router after the worker that held it died', async () => {
      const { code, router } = await createMeeting(started, 'h2');
      const pid = server.pool.slots[0]!.worker.pid;
      process.kill(pid, 'SIGKILL');
      // Restarted by the pool; the meeting's router went with the dead worker.
      await waitFor('a restarted worker', () => {
        const slot = server.pool.slots[0]!;
        return Promise.resolve(slot.alive && slot.worker.pid !== pid ? true : null);
      });
      const next = await join(started, 'g3', code);
      assert.notEqual(next, router, 'not the router of the dead worker');
      assert.equal(await serverRouter(server, code), next);
    });
  });

  describe('with a separate media server restarted at the same address', () => {
    let media: MediaServer;
    let started: MeetingNode;
    let port: number;
    before(async () => {
      port = await freePort();
      media = await startTestMediaServer({ port });
      started = await startMeetingNode(['h1', 'g1', 'g2'], {
        ROOMS_ROLES: 'edge,cells,relay',
        ROOMS_MEDIA_URL: media.url,
        ROOMS_MEDIA_INTERNAL_TOKEN: TEST_TOKEN,
      });
    });
    after(async () => {
      await started.close();
      await media.close();
    });

    it('is the new server’s router, not the one the old process had', async () => {
      const { code, router } = await createMeeting(started, 'h1');
      assert.equal(await join(started, 'g1', code), router);

      await media.close();
      media = await startTestMediaServer({ port });
      assert.equal(await serverRouter(media, code), null, 'the new process has no router');

      const next = await join(started, 'g2', code);
      assert.notEqual(next, router, 'not the router of the old process');
      assert.equal(await serverRouter(media, code), next);
    });
  });
});
