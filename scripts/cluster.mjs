#!/usr/bin/env node
// `npm run cluster`: a cluster on this machine's MariaDB and Redis. One media server and N
// nodes (default 3), each a process of its own with its own node id, HTTP and gRPC ports
// and advertise address, all sharing the database, Redis, the secrets and the media server.
// Prints where to point a browser, a gRPC client and Prometheus; Ctrl-C (or SIGTERM) drains
// every node, then stops the media server.
//
// Environment (all optional):
//   CLUSTER_NODES       how many nodes (default 3)
//   CLUSTER_BASE_PORT   node i listens on HTTP BASE+i and gRPC BASE+1000+i (default 8080);
//                       0: free ports everywhere (the addresses are printed)
//   CLUSTER_MEDIA_PORT  the media server's internal API port (default 7070; 0: free)
//   ROOMS_DB_URL        default mysql://root@127.0.0.1:3306/echochat_cluster (created if missing)
//   ROOMS_REDIS_URL     default redis://127.0.0.1:6379
//   ROOMS_KEY_PREFIX    default echochat-cluster:
//   CLUSTER_DIR         where the secrets are kept (default ./.cluster, mode 0700)
//   any other ROOMS_* variable is passed to every node as it is.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const NODES = Number(env.CLUSTER_NODES ?? 3);
const BASE = Number(env.CLUSTER_BASE_PORT ?? 8080);
const MEDIA_PORT = Number(env.CLUSTER_MEDIA_PORT ?? (BASE === 0 ? 0 : 7070));
const DB_URL = env.ROOMS_DB_URL ?? 'mysql://root@127.0.0.1:3306/echochat_cluster';
const REDIS_URL = env.ROOMS_REDIS_URL ?? 'redis://127.0.0.1:6379';
const KEY_PREFIX = env.ROOMS_KEY_PREFIX ?? 'echochat-cluster:';
const DIR = path.resolve(env.CLUSTER_DIR ?? path.join(ROOT, '.cluster'));
const READY_MS = 60_000;
const DRAIN_MS = 15_000;

if (!Number.isInteger(NODES) || NODES < 1 || NODES > 16) fail('CLUSTER_NODES: 1-16');
if (!Number.isInteger(BASE) || BASE < 0 || BASE > 60000) fail('CLUSTER_BASE_PORT: 0-60000');

function fail(message) {
  process.stderr.write(`cluster: ${message}\n`);
  process.exit(2);
}

/** The cluster's secrets, made once and kept (0600) so tokens survive a restart. */
function secrets() {
  mkdirSync(DIR, { recursive: true, mode: 0o700 });
  const file = path.join(DIR, 'secrets.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
  const made = {
    jwtSecret: randomBytes(32).toString('hex'),
    grpcToken: randomBytes(32).toString('hex'),
    mediaToken: randomBytes(24).toString('hex'),
    adminToken: randomBytes(24).toString('hex'),
  };
  writeFileSync(file, JSON.stringify(made, null, 2), { mode: 0o600 });
  return made;
}

/** Creates the database of ROOMS_DB_URL when it does not exist yet. */
async function ensureDatabase() {
  const url = new URL(DB_URL);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!/^[A-Za-z0-9_]{1,64}$/.test(name)) fail(`ROOMS_DB_URL: database name ${name}`);
  url.pathname = '/';
  const connection = await mysql.createConnection(url.toString());
  try {
    await connection.query(
      `CREATE DATABASE IF NOT EXISTS \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
    );
  } finally {
    await connection.end();
  }
}

const children = [];

/** Starts `script` with `extra` env; resolves once `healthUrl` answers 200. */
function start(label, script, extra, healthUrl) {
  const inherited = Object.fromEntries(
    Object.entries(env).filter(([k]) => !k.startsWith('CLUSTER_') && k !== 'NODE_TEST_CONTEXT'),
  );
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: ROOT,
    env: { ...inherited, ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  children.push({ label, child, exited });
  const prefix = (stream, out) => {
    let buffer = '';
    stream.on('data', (chunk) => {
      buffer += chunk;
      let at;
      while ((at = buffer.indexOf('\n')) >= 0) {
        out.write(`[${label}] ${buffer.slice(0, at)}\n`);
        buffer = buffer.slice(at + 1);
      }
    });
  };
  prefix(child.stdout, process.stdout);
  prefix(child.stderr, process.stderr);
  return (async () => {
    const deadline = Date.now() + READY_MS;
    let gone = false;
    void exited.then(() => (gone = true));
    while (Date.now() < deadline) {
      if (gone) throw new Error(`${label} exited before it was ready`);
      try {
        if ((await fetch(healthUrl)).ok) return;
      } catch {
        /* not listening yet */
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`${label} not ready in ${READY_MS} ms`);
  })();
}

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released for the child). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

let stopping = null;
function stop(code) {
  stopping ??= (async () => {
    process.stdout.write('cluster: draining every node…\n');
    const nodes = children.filter((c) => c.label !== 'media');
    for (const c of nodes) c.child.kill('SIGTERM');
    const codes = await Promise.race([
      Promise.all(nodes.map((c) => c.exited)),
      new Promise((resolve) => setTimeout(() => resolve(null), DRAIN_MS)),
    ]);
    if (codes === null) for (const c of nodes) c.child.kill('SIGKILL');
    const media = children.find((c) => c.label === 'media');
    media?.child.kill('SIGTERM');
    await media?.exited;
    const clean = codes !== null && codes.every((c) => c === 0);
    process.stdout.write(`cluster: stopped${clean ? '' : ' (not every node drained cleanly)'}\n`);
    process.exit(clean ? code : 1);
  })();
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

async function main() {
  const s = secrets();
  await ensureDatabase();
  const port = async (fixed) => (BASE === 0 ? freePort() : fixed);
  const mediaPort = MEDIA_PORT === 0 ? await freePort() : MEDIA_PORT;
  const mediaUrl = `http://127.0.0.1:${mediaPort}`;
  await start(
    'media',
    'src/media-server/main.ts',
    {
      ROOMS_NODE_ID: 'cluster',
      ROOMS_MEDIA_PORT: String(mediaPort),
      ROOMS_MEDIA_INTERNAL_TOKEN: s.mediaToken,
    },
    `${mediaUrl}/healthz`,
  );
  const shared = {
    ROOMS_DB_URL: DB_URL,
    ROOMS_REDIS_URL: REDIS_URL,
    ROOMS_KEY_PREFIX: KEY_PREFIX,
    ROOMS_JWT_SECRET: s.jwtSecret,
    ROOMS_GRPC_TOKEN: s.grpcToken,
    ROOMS_ADMIN_TOKEN: env.ROOMS_ADMIN_TOKEN ?? s.adminToken,
    ROOMS_MEDIA_EMBEDDED: 'false',
    ROOMS_MEDIA_URL: mediaUrl,
    ROOMS_MEDIA_INTERNAL_TOKEN: s.mediaToken,
  };
  const nodes = [];
  for (let i = 0; i < NODES; i++) {
    nodes.push({
      id: `node-${i + 1}`,
      http: await port(BASE + i),
      grpc: await port(BASE + 1000 + i),
    });
  }
  await Promise.all(
    nodes.map((n) =>
      start(
        n.id,
        'src/main/server.ts',
        {
          ...shared,
          ROOMS_NODE_ID: n.id,
          ROOMS_HTTP_PORT: String(n.http),
          ROOMS_GRPC_PORT: String(n.grpc),
        },
        `http://127.0.0.1:${n.http}/healthz`,
      ),
    ),
  );
  const file = path.join(DIR, 'secrets.json');
  const lines = [
    '',
    `cluster: ${NODES} node(s) on ${new URL(DB_URL).host} (MariaDB) and ${new URL(REDIS_URL).host} (Redis), media server ${mediaUrl}`,
    ...nodes.map(
      (n) =>
        `  ${n.id}: http://127.0.0.1:${n.http}  (browser, REST, /ws, /docs, /metrics for Prometheus; gRPC 127.0.0.1:${n.grpc})`,
    ),
    `  gRPC token: grpcToken in ${file}; admin token: ${env.ROOMS_ADMIN_TOKEN ? 'ROOMS_ADMIN_TOKEN' : `adminToken in ${file}`}`,
    'cluster: ready (Ctrl-C drains every node)',
    '',
  ];
  process.stdout.write(lines.join('\n'));
}

main().catch((error) => {
  process.stderr.write(`cluster: ${error.message}\n`);
  stop(1);
});
