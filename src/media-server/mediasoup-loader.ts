/**
 * Loads mediasoup with a chosen worker binary. mediasoup reads MEDIASOUP_WORKER_BIN once,
 * when its module is first evaluated, so the variable is set before a dynamic import; a
 * static import would evaluate mediasoup before any of our code runs.
 */
import type * as MediasoupModule from 'mediasoup';
import { resolveWorkerBin, WORKER_BIN_HINT, type WorkerBin } from './worker-bin.js';
import { errors } from '../shared/error-codes.js';

export type Mediasoup = typeof MediasoupModule;

let loaded: { module: Mediasoup; bin: WorkerBin } | undefined;

/**
 * Imports mediasoup bound to the resolved worker binary. Throws `unavailable`
 * (`MEDIA_WORKER_MISSING`) with a one-line hint when there is no binary. The first call
 * decides the binary for the whole process.
 */
export async function loadMediasoup(
  configuredBin: string | null,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ module: Mediasoup; bin: WorkerBin }> {
  if (loaded) return loaded;
  const bin = resolveWorkerBin(configuredBin, env);
  if (!bin) {
    const detail = configuredBin
      ? ` (ROOMS_MEDIA_WORKER_BIN=${configuredBin} is not executable)`
      : '';
    throw errors.MEDIA_WORKER_MISSING(`${WORKER_BIN_HINT}${detail}`);
  }
  process.env.MEDIASOUP_WORKER_BIN = bin.path;
  const module = await import('mediasoup');
  loaded = { module, bin };
  return loaded;
}
