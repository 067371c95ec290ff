/**
 * The node's HTTP application, without listening and without the services behind it:
 * envelope and body handling, health and metrics, accounts, voice-room REST, the TRTC
 * callback and the admin APIs. REST tests build it with `inject` and no gRPC, relay or
 * media server; `startNode` builds it with everything and attaches the WebSocket hub.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { AccountsService } from '../accounts/service.js';
import { registerAdminRoutes } from '../edge/http/admin-routes.js';
import { registerAuthRoutes } from '../edge/http/auth-routes.js';
import { installEnvelopeErrors } from '../shared/http-envelope.js';
import { acceptEmptyJsonBodies } from '../edge/http/json-body.js';
import { registerOpsRoutes, type OpsStatus } from '../edge/http/ops-routes.js';
import { registerTrtcCallback, type TrtcApp } from '../edge/http/trtc-callback.js';
import { registerMeetingRoutes } from '../edge/http/meeting-routes.js';
import { registerVoiceRoutes } from '../edge/http/voice-routes.js';
import type { MeetingApi } from '../edge/meeting/meeting-api.js';
import type { CreationQuota } from '../edge/quotas.js';
import type { VoiceRoomApi } from '../edge/voice/voice-api.js';
import type { VoiceRoomStore } from '../edge/voice/voice-store.js';
import { registerOutboxAdminRoutes, type OutboxAdminDeps } from '../outbox/admin-routes.js';
import type { Clock } from '../shared/clock.js';

export interface HttpAppDeps {
  /** A logger with the URL-redacting serializers (src/edge/http/log-redaction.ts). */
  readonly logger: FastifyBaseLogger;
  /** `ROOMS_HTTP_TRUST_PROXY`: which proxies' `X-Forwarded-For` names the client. */
  readonly trustProxy?: boolean | string | number;
  readonly ops: OpsStatus;
  readonly metrics: Registry;
  readonly accounts: AccountsService;
  readonly voice: {
    readonly api: VoiceRoomApi;
    readonly store: VoiceRoomStore;
    /** Null: creations are not limited (the default config always limits). */
    readonly createQuota: CreationQuota | null;
    readonly trtcApps: readonly TrtcApp[];
  };
  /** Meetings REST (/api/v1/meeting); absent: not served. */
  readonly meetings?: { readonly api: MeetingApi };
  /** `ROOMS_ADMIN_TOKEN`; null refuses every admin call. */
  readonly adminToken: string | null;
  readonly outbox: Omit<OutboxAdminDeps, 'adminToken' | 'clock'>;
  readonly clock: Clock;
}

export function buildHttpApp(deps: HttpAppDeps): FastifyInstance {
  const http: FastifyInstance = Fastify({
    loggerInstance: deps.logger,
    // A hop count is supported at run time (proxy-addr), though Fastify's type omits it.
    trustProxy: (deps.trustProxy ?? false) as boolean | string,
    genReqId: () => randomUUID(), // doubles as the envelope's trace_id
    // Above the longest id the API accepts (128), so a too-long one gets the envelope's 400.
    maxParamLength: 512,
  });
  installEnvelopeErrors(http);
  acceptEmptyJsonBodies(http);
  registerOpsRoutes(http, deps.ops, deps.metrics);
  registerAuthRoutes(http, deps.accounts);
  const { voice, adminToken, clock } = deps;
  registerVoiceRoutes(http, {
    api: voice.api,
    auth: deps.accounts,
    store: voice.store,
    ...(voice.createQuota ? { createQuota: voice.createQuota } : {}),
  });
  if (deps.meetings) registerMeetingRoutes(http, { api: deps.meetings.api, auth: deps.accounts });
  registerTrtcCallback(http, { api: voice.api, apps: voice.trtcApps });
  registerAdminRoutes(http, { store: voice.store, adminToken, clock });
  registerOutboxAdminRoutes(http, { ...deps.outbox, adminToken, clock });
  return http;
}
