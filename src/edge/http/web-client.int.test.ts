/**
 * The web client as every node serves it (a real dist folder on disk, Fastify's inject):
 * hashed assets immutable for a year, index.html revalidated at `/` and at client routes,
 * the node's own paths and file-like paths never answered with the page, and a clear
 * message at `/` while the client is not built (the node serves the rest meanwhile).
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { installEnvelopeErrors } from '../../shared/http-envelope.js';
import { registerWebClient } from './web-client.js';

const PAGE = '<!doctype html><title>rooms</title><script src="/assets/index-AbC123.js"></script>';

async function appFor(dist: string): Promise<FastifyInstance> {
  const app = Fastify();
  installEnvelopeErrors(app);
  app.get('/healthz', (_req, reply) => reply.send({ status: 'ok' }));
  app.get('/api/v1/known', (_req, reply) => reply.send({ code: 0 }));
  registerWebClient(app, { dist });
  await app.ready();
  return app;
}

describe('the web client served by a node', () => {
  let dir: string;
  let app: FastifyInstance;
  let bare: FastifyInstance;

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rooms-web-'));
    await mkdir(path.join(dir, 'dist', 'assets'), { recursive: true });
    await writeFile(path.join(dir, 'dist', 'index.html'), PAGE);
    await writeFile(path.join(dir, 'dist', 'assets', 'index-AbC123.js'), 'console.log(1)');
    app = await appFor(path.join(dir, 'dist'));
    bare = await appFor(path.join(dir, 'not-built'));
  });
  after(async () => {
    await app?.close();
    await bare?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('serves hashed assets as immutable for a year', async () => {
    const res = await app.inject('/assets/index-AbC123.js');
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, 'console.log(1)');
    assert.match(res.headers['content-type'] as string, /javascript/);
    assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
  });

  it('serves index.html, revalidated, at / and at client routes', async () => {
    for (const url of ['/', '/login', '/meeting/835-000-036', '/voice/vr_abc', '/x/y?z=1']) {
      const res = await app.inject(url);
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.body, PAGE, url);
      assert.match(res.headers['content-type'] as string, /^text\/html/, url);
      assert.equal(res.headers['cache-control'], 'no-cache', url);
    }
  });

  it('never answers the node’s own paths or missing files with the page', async () => {
    for (const url of [
      '/api/v1/unknown',
      '/api',
      '/ws',
      '/ws?token=abc',
      '/docs/nothing-here',
      '/healthz/x',
      '/metrics/x',
      '/assets/missing-123.js',
      '/favicon.ico',
      '/meeting/logo.png',
    ]) {
      const res = await app.inject(url);
      assert.equal(res.statusCode, 404, url);
      assert.equal(res.json().code, 404, url);
    }
    assert.equal((await app.inject('/healthz')).statusCode, 200);
    assert.equal((await app.inject('/api/v1/known')).statusCode, 200);
  });

  it('says what to run while the client is not built, and serves the rest', async () => {
    for (const url of ['/', '/meeting/835-000-036']) {
      const res = await bare.inject(url);
      assert.equal(res.statusCode, 503, url);
      assert.match(res.body, /npm run build/, url);
      assert.equal(res.headers['cache-control'], 'no-store', url);
    }
    assert.equal((await bare.inject('/healthz')).statusCode, 200);
    assert.equal((await bare.inject('/assets/index-AbC123.js')).statusCode, 404);
  });
});
