/**
 * Wires voice rooms into a node: the domain (with its SQL hooks) on the host, the API, its
 * store and quota (which the HTTP app serves), and the gRPC RoomService other nodes call.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { SqlBackend } from '../../adapters/sql/database.js';
import type { SqlStoreTypes } from '../../adapters/sql/sql-store-types.js';
import { voiceRoomWithSql } from '../sql/index.js';
import { ChatAllowance } from '../api/chat-allowance.js';
import { sqlVoiceRoomStore } from '../sql/store.js';
import type { CellHost } from '../../cell/host.js';
import type { CellsTier } from '../../cell/cells-tier.js';
import { GrpcForwarder, startRoomServiceServer } from '../../edge/grpc/room-service.js';
import type { GrpcSecurity, GrpcTls } from '../../edge/grpc/security.js';
import { checkAdvertiseAddress, type InstanceIdentity } from '../../edge/grpc/who-are-you.js';
import { parseTrtcApps, type TrtcApp } from '../http/trtc-callback.js';
import { CreationQuota } from '../../edge/quotas.js';
import type { MeetingApi } from '../../meeting/api/meeting-api.js';
import { VoiceRoomApi } from '../api/voice-api.js';
import type { VoiceRoomStore } from '../api/voice-store.js';
import type { RateLimiter } from '../../shared/rate-limiter.js';
import type { Config } from '../../main/config.js';
import type { MediaServers } from '../../media-cluster/media-servers.js';

export interface VoiceRooms {
  readonly api: VoiceRoomApi;
  readonly store: VoiceRoomStore;
  readonly createQuota: CreationQuota;
  readonly trtcApps: readonly TrtcApp[];
  /** The node's gRPC client of other nodes (voice rooms and meetings forward through it). */
  readonly forwarder: GrpcForwarder;
  /**
   * Binds the gRPC RoomService (with `MeetingCall` when given meetings, `WhoAreYou` answering
   * `identity`); before `host.start()`.
   */
  startGrpc(services?: {
    meetings?: MeetingApi;
    identity?: InstanceIdentity;
  }): Promise<{ readonly port: number }>;
  /** Calls `addr` with the cluster credential: it must be this instance (../../edge/grpc/who-are-you.ts). */
  checkAdvertised(addr: string, identity: InstanceIdentity, timeoutMs: number): Promise<void>;
  /** The port the gRPC RoomService listens on (once started). */
  readonly grpcPort: number;
  close(): Promise<void>;
}

/** The voice room's services: its domain (with SQL hooks) on the host, its API and store. */
export function wireVoiceRooms(deps: {
  config: Config;
  host: CellHost<SqlStoreTypes>;
  sql: SqlBackend;
  /** Counters of the room-creation quota (Redis in a cluster). */
  limiter: RateLimiter;
  /** A node without the cells role: where every call goes (and sent as a gateway's call). */
  cellsTier?: CellsTier | null;
  /** Where new rooms' routers go (recorded in each room); absent: no media. */
  media?: Pick<MediaServers, 'place'>;
}): VoiceRooms {
  const { config, host, sql } = deps;
  const domain = voiceRoomWithSql(config.voice, {
    enabled: config.voice.rankings,
    timeZone: config.voice.rankingTimeZone,
  });
  host.register(domain);
  const security: GrpcSecurity = {
    // Embedded: no other node calls this one, but the port must not be open to every local user.
    token: config.grpc.token ?? randomBytes(32).toString('base64url'),
    tls: readGrpcTls(config),
  };
  const cellsTier = deps.cellsTier ?? null;
  const forwarder = new GrpcForwarder({
    ...security,
    timeoutMs: config.grpc.forwardTimeoutMs,
    // An edge's call may reach a non-owner (the load balancer): that node forwards it once more.
    gateway: cellsTier !== null,
  });
  const store = sqlVoiceRoomStore(sql.db, config.voice.rankingTimeZone);
  const chat = new ChatAllowance(deps.limiter, config.voice.chatsPerUser);
  const api = new VoiceRoomApi(host, domain, forwarder, store, cellsTier, deps.media ?? null, chat);
  const { quotas } = config;
  const createQuota = new CreationQuota(deps.limiter, {
    kind: 'voice_room',
    label: '房间',
    rate: { limit: quotas.roomCreateLimit, windowMs: quotas.roomCreateWindowMs },
    maxOpen: quotas.maxOpenRoomsPerOwner,
    countOpen: (appCode, owner) => store.countOpenRooms(appCode, owner),
  });
  let grpc: { port: number; close(): Promise<void> } | null = null;
  return {
    api,
    store,
    createQuota,
    forwarder,
    trtcApps: parseTrtcApps(config.voice.trtcApps),
    get grpcPort() {
      if (!grpc) throw new Error('the gRPC RoomService is not started');
      return grpc.port;
    },
    async startGrpc(services = {}) {
      grpc ??= await startRoomServiceServer(api, {
        ...security,
        ...(services.meetings ? { meetings: services.meetings } : {}),
        ...(services.identity ? { identity: services.identity } : {}),
        host: config.grpc.host,
        port: config.grpcPort,
      });
      return grpc;
    },
    checkAdvertised: (addr, identity, timeoutMs) =>
      checkAdvertiseAddress(addr, identity, security, { timeoutMs }),
    async close() {
      await grpc?.close();
      forwarder.close();
    },
  };
}

/** With ROOMS_GRPC_PORT=0 the default advertise address takes the bound port. */
export function advertiseAddrFor(config: Config, grpcPort: number): string {
  return config.advertiseAddr.endsWith(':0')
    ? `${config.advertiseAddr.slice(0, -2)}:${grpcPort}`
    : config.advertiseAddr;
}

/** The PEM files of ROOMS_GRPC_TLS_*; a file that cannot be read fails the start, naming it. */
function readGrpcTls(config: Config): GrpcTls | null {
  const files = config.grpc.tls;
  if (!files) return null;
  const read = (variable: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (error) {
      throw new Error(`${variable}: cannot read ${file}`, { cause: error });
    }
  };
  return {
    cert: read('ROOMS_GRPC_TLS_CERT', files.certFile),
    key: read('ROOMS_GRPC_TLS_KEY', files.keyFile),
    ca: read('ROOMS_GRPC_TLS_CA', files.caFile),
  };
}
