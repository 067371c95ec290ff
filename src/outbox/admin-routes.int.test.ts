import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { openSqlBackend, type SqlBackend } from '../adapters/sql/database.js';
import { installEnvelopeErrors } from '../edge/http/envelope.js';
import { systemClock } from '../shared/clock.js';
import { registerOutboxAdminRoutes } from './admin-routes.js';
import { SqlOutboxStore } from './sql-outbox-store.js';
import { insertEvents, rowOf } from './testing/outbox-rows.js';
import { SqlWebhookDirectory } from './webhooks.js';

const TOKEN = 'admin-token-for-tests-0123456789';
const auth = { 'x-admin-token': TOKEN };

interface Envelope<T> {
  code: number;
  message: string;
  data: T;
  reason?: string;
}

void describe('outbox admin API', () => {
  let dir: string;
  let sql: SqlBackend;
  let app: FastifyInstance;
  let store: SqlOutboxStore;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rooms-admin-'));
    sql = await openSqlBackend(join(dir, 'rooms.sqlite'));
    store = new SqlOutboxStore(sql);
    app = Fastify();
    installEnvelopeErrors(app);
    registerOutboxAdminRoutes(app, {
      store,
      webhooks: new SqlWebhookDirectory(sql),
      clock: systemClock,
      adminToken: TOKEN,
    });
    await app.ready();
  });
  after(async () => {
    await app.close();
    await sql.close();
    await rm(dir, { recursive: true, force: true });
  });

  const call = async <T>(
    method: 'GET' | 'PUT' | 'POST' | 'DELETE',
    url: string,
    payload?: object,
    headers: Record<string, string> = auth,
  ) => {
    const res = await app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json<Envelope<T>>() };
  };

  void it('refuses requests without the admin token', async () => {
    const attempts: Record<string, string>[] = [
      {},
      { 'x-admin-token': 'wrong' },
      { authorization: `Bearer ${TOKEN}` },
    ];
    for (const headers of attempts) {
      const res = await call('GET', '/api/v1/admin/outbox', undefined, headers);
      assert.equal(res.status, 401);
      assert.equal(res.body.reason, 'BAD_ADMIN_TOKEN');
    }
  });

  void it('sets, shows (without the secret) and deletes an app webhook', async () => {
    const bad = await call('PUT', '/api/v1/admin/apps/demo/webhook', {
      url: 'ftp://x',
      secret: 'short',
    });
    assert.equal(bad.status, 400);
    const put = await call('PUT', '/api/v1/admin/apps/demo/webhook', {
      url: 'https://hooks.example.com/rooms',
      secret: 'a-long-enough-secret',
    });
    assert.equal(put.status, 200);
    const shown = await call<Record<string, unknown>>('GET', '/api/v1/admin/apps/demo/webhook');
    assert.equal(shown.body.data.url, 'https://hooks.example.com/rooms');
    assert.ok(!('secret' in shown.body.data), 'the secret is write-only');
    await call('PUT', '/api/v1/admin/apps/demo/webhook', {
      url: 'https://hooks.example.com/v2',
      secret: 'another-long-secret',
    });
    assert.equal(
      (await new SqlWebhookDirectory(sql).get('demo'))?.secret,
      'another-long-secret',
      'PUT replaces',
    );
    const deleted = await call<{ deleted: boolean }>('DELETE', '/api/v1/admin/apps/demo/webhook');
    assert.equal(deleted.body.data.deleted, true);
    assert.equal((await call('GET', '/api/v1/admin/apps/demo/webhook')).status, 404);
  });

  void it('lists failed events, re-queues them, and lets an operator give up on one', async () => {
    const [x, y] = await insertEvents(sql.db, [
      { roomId: 'adm', version: 1, appCode: 'demo' },
      { roomId: 'adm', version: 2, appCode: 'demo' },
    ]);
    const claim = await store.claim({
      workerId: 'w',
      nowMs: Date.now(),
      lockMs: 60_000,
      limit: 10,
      perRoomLimit: 10,
    });
    await store.settle(
      [{ claim, settlement: { kind: 'failed', id: claim.events[0]!.id, error: 'HTTP 400' } }],
      Date.now(),
    );
    const list = await call<{ events: Record<string, unknown>[]; next_after_id: number | null }>(
      'GET',
      '/api/v1/admin/outbox?status=failed&app_code=demo',
    );
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.data.events.map((e) => [e.event_id, e.status, e.attempts, e.last_error]),
      [[x, 'failed', 1, 'HTTP 400']],
    );
    assert.equal((list.body.data.events[0]!.envelope as { room_version: number }).room_version, 1);
    assert.equal(list.body.data.next_after_id, null);

    assert.equal((await call('POST', '/api/v1/admin/outbox/requeue', {})).status, 400);
    const requeued = await call<{ requeued: number }>('POST', '/api/v1/admin/outbox/requeue', {
      event_ids: [x],
    });
    assert.equal(requeued.body.data.requeued, 1);
    assert.deepEqual(
      [(await rowOf(sql.db, x!)).status, Number((await rowOf(sql.db, x!)).attempts)],
      ['pending', 0],
    );

    // y is still delivering (claimed above): an operator cannot fail it; x (pending) can.
    const refused = await call('POST', `/api/v1/admin/outbox/events/${y}/fail`, {});
    assert.equal(refused.status, 400);
    const failed = await call('POST', `/api/v1/admin/outbox/events/${x}/fail`, { reason: 'bad' });
    assert.equal(failed.status, 200);
    assert.deepEqual(
      [(await rowOf(sql.db, x!)).status, (await rowOf(sql.db, x!)).last_error],
      ['failed', 'bad'],
    );
  });
});
