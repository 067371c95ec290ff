/**
 * The role-dependent parts of a node's wiring (`ROOMS_ROLES`, ./roles.ts), kept out of the
 * composition root so that it reads as one list: where an edge without cells sends its calls,
 * the cells tier's gRPC service and its advertise-address check, the relay's sweeps.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { cellsTier, type CellsTier } from '../cell/cells-tier.js';
import type { LeaseManager, NodeRegistry } from '../cell/lease.js';
import type { InstanceIdentity } from '../edge/grpc/who-are-you.js';
import type { Config } from './config.js';
import type { Meetings } from '../meeting/wiring/meetings.js';
import { advertiseAddrFor, type VoiceRooms } from '../voice-room/wiring/voice-rooms.js';

/** How long the node waits for its own advertise address to answer (each of 3 attempts). */
export const ADVERTISE_CHECK_TIMEOUT_MS = 3_000;

/** Null on a node with the cells role (its host routes); else the tier every call goes to. */
export function edgeCellsTier(
  config: Config,
  coordination: { readonly lease: LeaseManager; readonly registry: NodeRegistry },
): CellsTier | null {
  if (config.roles.cells) return null;
  return cellsTier({ fixedAddr: config.cellsAddr, ...coordination });
}

/**
 * The cells role: binds the gRPC RoomService (voice rooms, `MeetingCall`, `WhoAreYou`), then,
 * in a cluster (Redis), calls this node's own advertise address and refuses to start (an
 * `AdvertiseAddressError`, exit 2) when another instance or nothing answers. Resolves
 * with the advertise address to register; null on a node without cells (no gRPC server).
 */
export async function startCellsService(
  config: Config,
  voice: VoiceRooms,
  meetings: Meetings,
  logger: Logger,
): Promise<string | null> {
  if (!config.roles.cells) return null;
  const identity: InstanceIdentity = {
    node_id: config.nodeId,
    instance_id: randomBytes(12).toString('hex'),
  };
  const { port } = await voice.startGrpc({ meetings: meetings.api, identity });
  const advertiseAddr = advertiseAddrFor(config, port);
  // Without Redis the registry is this process's own: no other node ever forwards here.
  if (!config.redisUrl) return advertiseAddr;
  await voice.checkAdvertised(advertiseAddr, identity, ADVERTISE_CHECK_TIMEOUT_MS);
  logger.info({ advertiseAddr }, 'advertise address answers as this node');
  return advertiseAddr;
}

/** A periodic job of the relay role (retention and janitor sweeps). */
interface SweepJob {
  start(): void;
  stop(): Promise<unknown>;
}

/** Starts `jobs` on a node with the relay role (each stopped by the node's close). */
export function startRelaySweeps(
  config: Config,
  jobs: readonly SweepJob[],
  closers: (() => Promise<unknown>)[],
): void {
  if (!config.roles.relay) return;
  for (const job of jobs) {
    job.start();
    closers.push(() => job.stop());
  }
}
