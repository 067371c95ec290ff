/**
 * Finds the mediasoup-worker binary. mediasoup itself only looks at MEDIASOUP_WORKER_BIN and
 * at node_modules/mediasoup/worker/out/Release; `npm ci` wipes the latter, and on an offline
 * machine mediasoup's postinstall cannot fill it. So we also look in the cache that
 * scripts/build-mediasoup-worker.sh writes, which survives reinstalls.
 */
import { accessSync, constants, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import path from 'node:path';

/** Where the binary was found, for the start-up log. */
export type WorkerBinSource = 'config' | 'MEDIASOUP_WORKER_BIN' | 'node_modules' | 'cache';

export interface WorkerBin {
  readonly path: string;
  readonly source: WorkerBinSource;
}

/** One-line hint printed when no binary is found. */
export const WORKER_BIN_HINT =
  'no mediasoup-worker binary: run `npm run media:worker` (scripts/build-mediasoup-worker.sh, ' +
  'an offline build, cached); see docs/media-server.md "Installing mediasoup\'s worker"';

/**
 * The installed mediasoup package's folder, or null. mediasoup does not export its
 * package.json, so we resolve its entry point and walk up to the folder that holds it.
 */
function mediasoupPackageDir(): string | null {
  try {
    let dir = path.dirname(createRequire(import.meta.url).resolve('mediasoup'));
    for (let i = 0; i < 5; i++, dir = path.dirname(dir)) {
      const pkg = JSON.parse(readPackageJson(dir) ?? '{}') as { name?: unknown };
      if (pkg.name === 'mediasoup') return dir;
    }
    return null;
  } catch {
    return null;
  }
}

function readPackageJson(dir: string): string | null {
  try {
    return readFileSync(path.join(dir, 'package.json'), 'utf8');
  } catch {
    return null;
  }
}

/** The mediasoup version installed in node_modules, or null when it is not installed. */
export function installedMediasoupVersion(): string | null {
  const dir = mediasoupPackageDir();
  if (!dir) return null;
  const pkg = JSON.parse(readPackageJson(dir) ?? '{}') as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : null;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Cache path of the offline build for `version` (same rule as the build script). */
export function cachedWorkerBinPath(version: string, env: NodeJS.ProcessEnv): string {
  const cache =
    env.MEDIASOUP_WORKER_CACHE ||
    path.join(env.XDG_CACHE_HOME || path.join(env.HOME || homedir(), '.cache'), 'mediasoup-worker');
  return path.join(cache, version, 'mediasoup-worker');
}

/**
 * The first executable candidate: the configured path (which must exist when given),
 * MEDIASOUP_WORKER_BIN, node_modules, the offline-build cache. Null when there is none.
 */
export function resolveWorkerBin(
  configured: string | null,
  env: NodeJS.ProcessEnv,
): WorkerBin | null {
  if (configured) return executable(configured) ? { path: configured, source: 'config' } : null;
  const fromEnv = env.MEDIASOUP_WORKER_BIN;
  if (fromEnv)
    return executable(fromEnv) ? { path: fromEnv, source: 'MEDIASOUP_WORKER_BIN' } : null;
  const pkgDir = mediasoupPackageDir();
  const version = installedMediasoupVersion();
  if (!pkgDir || !version) return null;
  const inModules = path.join(pkgDir, 'worker', 'out', 'Release', 'mediasoup-worker');
  if (executable(inModules)) return { path: inModules, source: 'node_modules' };
  const cached = cachedWorkerBinPath(version, env);
  if (executable(cached)) return { path: cached, source: 'cache' };
  return null;
}
