/**
 * Test-only: the web server a Chromium peer page talks to: the page, its bundled script,
 * and `/rpc/<method>` onto a real media orchestrator client (the page's mediasoup-client
 * signals through it).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { MediaOrchestrator } from '../../media-cluster/media-orchestrator.js';
import { bundlePage, PEER_PAGE } from './chromium.js';

/** The orchestrator methods a page may call, by name. */
const METHODS = [
  'createRouter',
  'createTransport',
  'connectTransport',
  'createProducer',
  'createConsumer',
] as const satisfies readonly (keyof MediaOrchestrator)[];
type Method = (typeof METHODS)[number];

const isMethod = (name: string): name is Method => (METHODS as readonly string[]).includes(name);

/** Listens on a free loopback port; `script` is the page's entry (bundled once). */
export async function startSignalling(
  media: MediaOrchestrator,
  script: string,
): Promise<FastifyInstance> {
  const js = await bundlePage(script);
  const app = Fastify();
  app.get('/', (_req, reply) => reply.type('text/html').send(PEER_PAGE));
  app.get('/peer.js', (_req, reply) => reply.type('text/javascript').send(js));
  app.get('/favicon.ico', (_req, reply) => reply.code(204).send());
  app.post<{ Params: { method: string }; Body: unknown[] }>('/rpc/:method', async (req, reply) => {
    const { method } = req.params;
    if (!isMethod(method)) return reply.code(404).send({ error: `no ${method}` });
    // The page sends each method's arguments as a JSON array (they are the test's own).
    const call = media[method].bind(media) as (...args: unknown[]) => Promise<unknown>;
    try {
      return { result: await call(...req.body) };
    } catch (error) {
      return reply.code(500).send({ error: String(error) });
    }
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return app;
}
