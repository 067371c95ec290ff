/**
 * The web client (web/, built by Vite into web/dist) served by every node:
 *   - `/assets/*`: Vite's content-hashed files, cached for a year as immutable (a new build
 *     has new names, so a cached file is never stale);
 *   - `index.html` at `/` and at every client route (the SPA's history routes), `no-cache`,
 *     so a browser always learns the current asset names;
 *   - never in place of the API: `/api`, `/ws`, `/docs`, `/healthz`, `/metrics` and any path
 *     with a file extension keep their own 404 (the envelope), not the page.
 * When web/dist has no index.html (the build did not run or failed) the node still serves
 * everything else and `/` says what to run. index.html is looked up per request, so a build
 * made while the node runs is served at once.
 */
import { access } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export interface WebClientOptions {
  /** The built app (index.html and assets/). */
  readonly dist: string;
}

/** Paths that belong to the node itself: the SPA fallback never answers them. */
const RESERVED = /^\/(api|ws|docs|healthz|metrics)(\/|$|\?)/;
/** A client route has no file extension in its last segment. */
const FILE_LIKE = /\/[^/?]*\.[^/?]*(\?|$)/;

const NOT_BUILT =
  'EchoChat Rooms: the web client is not built on this node.\n' +
  'Run `npm run build` (or `npm ci`, which builds it) in the project folder, then reload.\n' +
  'The API, /ws, /docs and /healthz are served meanwhile.\n';

/** web/dist of the project this module belongs to (src/… with tsx, dist/src/… once compiled). */
export function defaultWebDist(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'web'))) {
      return path.join(dir, 'web', 'dist');
    }
    dir = path.dirname(dir);
  }
  return path.resolve('web', 'dist');
}

export function registerWebClient(app: FastifyInstance, options: WebClientOptions): void {
  const dist = path.resolve(options.dist);
  const index = path.join(dist, 'index.html');
  void app.register(fastifyStatic, {
    root: path.join(dist, 'assets'),
    prefix: '/assets/',
    wildcard: true,
    // Routes of files, not of the API: kept out of the OpenAPI document.
    schemaHide: true,
    immutable: true,
    maxAge: 365 * 24 * 3600 * 1000,
    index: false,
    dotfiles: 'deny',
  });

  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    const built = await access(index).then(
      () => true,
      () => false,
    );
    if (!built) {
      return reply
        .code(503)
        .header('cache-control', 'no-store')
        .type('text/plain; charset=utf-8')
        .send(NOT_BUILT);
    }
    // sendFile's own cache headers are replaced: the page must be revalidated every time.
    return reply
      .header('cache-control', 'no-cache')
      .sendFile('index.html', dist, { cacheControl: false });
  };
  const hidden = { schema: { hide: true } };
  app.get('/', hidden, page);
  app.get('/*', hidden, async (request, reply) => {
    if (RESERVED.test(request.url) || FILE_LIKE.test(request.url)) {
      return reply.callNotFound();
    }
    return page(request, reply);
  });
}
