/**
 * Wires voice rooms into a node: the domain (with its SQL hooks) on the host, the gRPC
 * RoomService other nodes forward to, and the REST, TRTC callback and admin routes.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../accounts/tokens.js';
import type { SqlBackend } from '../adapters/sql/database.js';
import { voiceRoomWithSql } from '../adapters/sql/voice-room/index.js';
import { sqlVoiceRoomStore } from '../adapters/sql/voice-room/store.js';
import type { CellHost } from '../cell/host.js';
import { GrpcForwarder, startRoomServiceServer } from '../edge/grpc/room-service.js';
import type { GrpcSecurity, GrpcTls } from '../edge/grpc/security.js';
import { registerAdminRoutes } from '../edge/http/admin-routes.js';
import { parseTrtcApps, registerTrtcCallback } from '../edge/http/trtc-callback.js';
import { registerVoiceRoutes } from '../edge/http/voice-routes.js';
import { CreationQuota } from '../edge/quotas.js';
import { VoiceRoomApi } from '../edge/voice/voice-api.js';
import type { Clock } from '../shared/clock.js';
import type { RateLimiter } from '../shared/rate-limiter.js';
import type { Config } from './config.js';

export interface VoiceRooms {
  readonly api: VoiceRoomApi;
  /** The port the gRPC RoomService listens on. */
  readonly grpcPort: number;
  close(): Promise<void>;
}

/** Call before `host.start()`: the domain must be registered and gRPC bound first. */
export async function wireVoiceRooms(deps: {
  config: Config;
  host: CellHost;
  sql: SqlBackend;
  http: FastifyInstance;
  auth: Authenticator;
  clock: Clock;
  /** Counters of the room-creation quota (Redis in a cluster). */
  limiter: RateLimiter;
}): Promise<VoiceRooms> {
  const { config, host, sql, http } = deps;
  const domain = voiceRoomWithSql(config.voice);
  host.register(domain);
  const security: GrpcSecurity = {
    // Embedded: no other node calls this one, but the port must not be open to every local user.
    token: config.grpc.token ?? randomBytes(32).toString('base64url'),
    tls: readGrpcTls(config),
  };
  const forwarder = new GrpcForwarder({ ...security, timeoutMs: config.grpc.forwardTimeoutMs });
  const store = sqlVoiceRoomStore(sql.db);
  const api = new VoiceRoomApi(host, domain, forwarder, store);
  const grpc = await startRoomServiceServer(api, {
    ...security,
    host: config.grpc.host,
    port: config.grpcPort,
  });
  const { quotas } = config;
  const quota = new CreationQuota(deps.limiter, {
    kind: 'voice_room',
    label: '房间',
    rate: { limit: quotas.roomCreateLimit, windowMs: quotas.roomCreateWindowMs },
    maxOpen: quotas.maxOpenRoomsPerOwner,
    countOpen: (appCode, owner) => store.countOpenRooms(appCode, owner),
  });
  registerVoiceRoutes(http, {
    api,
    auth: deps.auth,
    store,
    createQuota: quota,
  });
  registerTrtcCallback(http, { api, apps: parseTrtcApps(config.voice.trtcApps) });
  registerAdminRoutes(http, { store, adminToken: config.voice.adminToken, clock: deps.clock });
  return {
    api,
    grpcPort: grpc.port,
    async close() {
      await grpc.close();
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
