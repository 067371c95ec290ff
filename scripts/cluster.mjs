#!/usr/bin/env node
// `npm run cluster`: a cluster on this machine's MariaDB and Redis. M media servers
// (default 1) and N nodes (default 3), each a process of its own with its own node id, HTTP
// and gRPC ports and advertise address, all sharing the database, Redis and the secrets. The
// media servers register in the cluster's Redis (media-1, media-2, …), so the nodes place
// each new room on the least loaded one and move the rooms of one that dies; each node's own
// server is media-1. Prints where to point a browser, a gRPC client and Prometheus; Ctrl-C
// (or SIGTERM) drains every node, then stops the media servers.
//
// Options: --media-servers M (or --media-servers=M), 1-8.
// Environment (all optional):
//   CLUSTER_NODES       how many nodes (default 3)
//   CLUSTER_MEDIA_SERVERS  how many media servers, when --media-servers is not given (default 1)
//   CLUSTER_BASE_PORT   node i listens on HTTP BASE+i and gRPC BASE+1000+i (default 8080);
//                       0: free ports everywhere (the addresses are printed)
//   CLUSTER_MEDIA_PORT  media server i's internal API port is this + i - 1 (default 7070; 0: free);
//                       its WebRTC ports are 40000 + 1000 (i - 1) … + 999
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
const MEDIA_SERVERS = Number(optionValue('--media-servers') ?? env.CLUSTER_MEDIA_SERVERS ?? 1);
const DB_URL = env.ROOMS_DB_URL ?? 'mysql://root@127.0.0.1:3306/echochat_cluster';
const REDIS_URL = env.ROOMS_REDIS_URL ?? 'redis://127.0.0.1:6379';
const KEY_PREFIX = env.ROOMS_KEY_PREFIX ?? 'echochat-cluster:';
const DIR = path.resolve(env.CLUSTER_DIR ?? path.join(ROOT, '.cluster'));
const READY_MS = 60_000;
const DRAIN_MS = 15_000;

if (!Number.isInteger(NODES) || NODES < 1 || NODES > 16) fail('CLUSTER_NODES: 1-16');
if (!Number.isInteger(BASE) || BASE < 0 || BASE > 60000) fail('CLUSTER_BASE_PORT: 0-60000');
if (!Number.isInteger(MEDIA_SERVERS) || MEDIA_SERVERS < 1 || MEDIA_SERVERS > 8) {
  fail('--media-servers: 1-8');
}

/** `--name N` or `--name=N` on the command line; undefined when absent. */
function optionValue(name) {
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    if (args[i] === name) return args[i + 1];
    if (args[i].startsWith(`${name}=`)) return args[i].slice(name.length + 1);
  }
  return undefined;
}

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
    const isMedia = (c) => c.label.startsWith('media-');
    const nodes = children.filter((c) => !isMedia(c));
    for (const c of nodes) c.child.kill('SIGTERM');
    const codes = await Promise.race([
      Promise.all(nodes.map((c) => c.exited)),
      new Promise((resolve) => setTimeout(() => resolve(null), DRAIN_MS)),
    ]);
    if (codes === null) for (const c of nodes) c.child.kill('SIGKILL');
    // SIGINT: at once, no drain (the meetings still open move at the next start).
    const media = children.filter(isMedia);
    for (const c of media) c.child.kill('SIGINT');
    await Promise.all(media.map((c) => c.exited));
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
  const media = [];
  for (let i = 0; i < MEDIA_SERVERS; i++) {
    const port = MEDIA_PORT === 0 ? await freePort() : MEDIA_PORT + i;
    media.push({
      id: `media-${i + 1}`,
      url: `http://127.0.0.1:${port}`,
      port,
      rtc: 40000 + 1000 * i,
    });
  }
  await Promise.all(
    media.map((m) =>
      start(
        m.id,
        'src/media-server/main.ts',
        {
          ROOMS_NODE_ID: `cluster-${m.id}`,
          ROOMS_MEDIA_SERVER_ID: m.id,
          ROOMS_MEDIA_PORT: String(m.port),
          ROOMS_MEDIA_RTC_MIN_PORT: String(m.rtc),
          ROOMS_MEDIA_RTC_MAX_PORT: String(m.rtc + 999),
          ROOMS_MEDIA_INTERNAL_TOKEN: s.mediaToken,
          ROOMS_MEDIA_REDIS_URL: REDIS_URL,
          ROOMS_KEY_PREFIX: KEY_PREFIX,
        },
        `${m.url}/healthz`,
      ),
    ),
  );
  const mediaUrl = media[0].url;
  const shared = {
    ROOMS_DB_URL: DB_URL,
    ROOMS_REDIS_URL: REDIS_URL,
    ROOMS_KEY_PREFIX: KEY_PREFIX,
    ROOMS_JWT_SECRET: s.jwtSecret,
    ROOMS_GRPC_TOKEN: s.grpcToken,
    ROOMS_ADMIN_TOKEN: env.ROOMS_ADMIN_TOKEN ?? s.adminToken,
    ROOMS_MEDIA_EMBEDDED: 'false',
    ROOMS_MEDIA_URL: mediaUrl,
    ROOMS_MEDIA_SERVER_ID: media[0].id,
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
    `cluster: ${NODES} node(s) on ${new URL(DB_URL).host} (MariaDB) and ${new URL(REDIS_URL).host} (Redis), ${MEDIA_SERVERS} media server(s) registered in Redis`,
    ...media.map(
      (m) =>
        `  ${m.id}: ${m.url}  (internal API; WebRTC ports ${m.rtc}-${m.rtc + 999}; ${KEY_PREFIX}media:server:${m.id})`,
    ),
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
