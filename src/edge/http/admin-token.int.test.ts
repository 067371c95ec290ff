/**
 * `X-Admin-Token` as an outsider sends it: raw header bytes on a real socket (UTF-8 that the
 * server reads as Latin-1, other lengths, near misses). Every wrong token is a 401 with the
 * BAD_ADMIN_TOKEN reason and changes nothing, on both admin APIs (wallets and gifts; outbox and
 * webhooks); only the configured token passes.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { openSqlBackend, type SqlBackend } from '../../adapters/sql/database.js';
import { registerOutboxAdminRoutes } from '../../outbox/admin-routes.js';
import { SqlOutboxStore } from '../../outbox/sql-outbox-store.js';
import { SqlWebhookDirectory } from '../../outbox/webhooks.js';
import { systemClock } from '../../shared/clock.js';
import { rawRequest } from '../../testing/raw-http.js';
import { sqlVoiceRoomStore } from '../../voice-room/sql/store.js';
import { registerAdminRoutes } from './admin-routes.js';
import { installEnvelopeErrors } from '../../shared/http-envelope.js';

const TOKEN = 'admin-token-for-tests-0123456789';

/** Header values (as raw bytes on the wire) that must all be refused. */
const WRONG: Record<string, Buffer | null> = {
  missing: null,
  empty: Buffer.from(''),
  'non-ASCII (UTF-8)': Buffer.from(`${TOKEN.slice(0, -1)}é`, 'utf8'),
  // One byte per character, as many characters as the token, but each becomes two bytes in
  // UTF-8: a length check on characters passed it on to a byte comparison that threw (500).
  'non-ASCII, as many characters as the token': Buffer.from(`${TOKEN.slice(0, -1)}\xe9`, 'latin1'),
  'all non-ASCII, as many characters as the token': Buffer.alloc(TOKEN.length, 0xe9),
  shorter: Buffer.from(TOKEN.slice(0, -1)),
  longer: Buffer.from(`${TOKEN}0`),
  'same length, last character wrong': Buffer.from(`${TOKEN.slice(0, -1)}X`),
  'another case': Buffer.from(TOKEN.toUpperCase()),
};

void describe('X-Admin-Token on the admin APIs', () => {
  let dir: string;
  let sql: SqlBackend;
  let app: FastifyInstance;
  let port: number;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rooms-admin-token-'));
    sql = await openSqlBackend(join(dir, 'rooms.sqlite'));
    app = Fastify();
    installEnvelopeErrors(app);
    registerAdminRoutes(app, {
      store: sqlVoiceRoomStore(sql.db),
      adminToken: TOKEN,
      clock: systemClock,
    });
    registerOutboxAdminRoutes(app, {
      store: new SqlOutboxStore(sql),
      webhooks: new SqlWebhookDirectory(sql),
      clock: systemClock,
      adminToken: TOKEN,
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
  });
  after(async () => {
    await app.close();
    await sql.close();
    await rm(dir, { recursive: true, force: true });
  });

  const send = (method: string, path: string, token: Buffer | null, body?: object) => {
    const lines = [`${method} ${path} HTTP/1.1`, 'host: 127.0.0.1'];
    if (body) lines.push('content-type: application/json');
    const head = Buffer.concat([
      Buffer.from(lines.join('\r\n')),
      ...(token ? [Buffer.from('\r\nx-admin-token: '), token] : []),
    ]);
    return rawRequest(port, head, body ? JSON.stringify(body) : '');
  };

  const writes = [
    { method: 'PUT', path: '/api/v1/admin/gifts/rose', body: { name: 'Rose', price: 10 } },
    {
      method: 'PUT',
      path: '/api/v1/admin/apps/demo/webhook',
      body: { url: 'https://hooks.example.com/x', secret: 'webhook-secret-0123' },
    },
  ];

  for (const [label, token] of Object.entries(WRONG)) {
    void it(`refuses a token that is ${label} with 401, changing nothing`, async () => {
      for (const w of writes) {
        const res = await send(w.method, w.path, token, w.body);
        assert.equal(res.status, 401, `${w.path}: ${res.head}\n${res.body}`);
        assert.equal((JSON.parse(res.body) as { reason?: string }).reason, 'BAD_ADMIN_TOKEN');
      }
      for (const path of ['/api/v1/admin/gifts', '/api/v1/admin/outbox']) {
        assert.equal((await send('GET', path, token)).status, 401, path);
      }
      // Nothing was written: the right token still sees an empty catalog and no webhook.
      const gifts = await send('GET', '/api/v1/admin/gifts', Buffer.from(TOKEN));
      assert.deepEqual((JSON.parse(gifts.body) as { data: unknown }).data, { list: [] });
      const hook = await send('GET', '/api/v1/admin/apps/demo/webhook', Buffer.from(TOKEN));
      assert.equal(hook.status, 404, hook.body);
    });
  }

  void it('accepts exactly the configured token', async () => {
    for (const path of ['/api/v1/admin/gifts', '/api/v1/admin/outbox']) {
      const res = await send('GET', path, Buffer.from(TOKEN));
      assert.equal(res.status, 200, `${path}: ${res.body}`);
    }
  });
});
