/**
 * The node's HTTP application, without listening and without the services behind it:
 * envelope and body handling, health and metrics, accounts, voice-room REST, the TRTC
 * callback, the admin APIs and the web client. REST tests build it with `inject` and no gRPC,
 * relay or media server; `startNode` builds it with everything and attaches the WebSocket hub.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { AccountsService } from '../accounts/service.js';
import { registerAdminRoutes } from '../edge/http/admin-routes.js';
import {
  registerAdminInspectionRoutes,
  type AdminInspectionDeps,
} from '../edge/http/admin-inspection-routes.js';
import { registerAuthRoutes } from '../edge/http/auth-routes.js';
import { registerNotificationRoutes } from '../edge/http/notification-routes.js';
import type { NotificationCentre } from '../notifications/notification-centre.js';
import { installEnvelopeErrors } from '../shared/http-envelope.js';
import { acceptEmptyJsonBodies } from '../edge/http/json-body.js';
import { registerApiDocs } from '../edge/http/openapi.js';
import { registerAsyncApiDocs } from '../edge/ws/asyncapi.js';
import { registerOpsRoutes, type OpsStatus } from '../edge/http/ops-routes.js';
import { registerTrtcCallback, type TrtcApp } from '../voice-room/http/trtc-callback.js';
import { registerMeetingRoutes } from '../meeting/http/meeting-routes.js';
import { registerNodeAdminRoutes, type NodeControl } from '../edge/http/node-admin-routes.js';
import { registerSecurityHeaders } from '../edge/http/security-headers.js';
import { registerVoiceRoutes } from '../voice-room/http/voice-routes.js';
import { registerWebClient, type WebClientOptions } from '../edge/http/web-client.js';
import type { MeetingLimits } from '../meeting/api/limits.js';
import type { MeetingApi } from '../meeting/api/meeting-api.js';
import type { MeetingStore } from '../meeting/api/meeting-store.js';
import type { CreationQuota } from '../edge/quotas.js';
import type { VoiceRoomApi } from '../voice-room/api/voice-api.js';
import type { VoiceRoomStore } from '../voice-room/api/voice-store.js';
import { registerOutboxAdminRoutes, type OutboxAdminDeps } from '../outbox/admin-routes.js';
import type { Clock } from '../shared/clock.js';
import { nodeWsProtocol } from './ws-protocol.js';

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
  readonly meetings?: {
    readonly api: MeetingApi;
    readonly limits: MeetingLimits;
    readonly store: MeetingStore;
    readonly createQuota: CreationQuota;
  };
  /** `config.admin.token` (`ROOMS_ADMIN_TOKEN`), of every admin route set; null refuses every call. */
  readonly adminToken: string | null;
  readonly outbox: Omit<OutboxAdminDeps, 'adminToken' | 'clock'>;
  /** The loaded cells and the command log (`/api/v1/admin/cells`, `…/rooms/:id/log`). */
  readonly inspection: AdminInspectionDeps;
  readonly clock: Clock;
  /**
   * `ROOMS_DOCS_ENABLED`: the OpenAPI document at /docs/json, Swagger UI at /docs, and the
   * WebSocket's AsyncAPI document at /docs/asyncapi.json.
   */
  readonly docs: boolean;
  /** The notification centre (`/api/v1/notifications`). */
  readonly notifications: NotificationCentre;
  /** The web client (web/dist) at `/`; absent: not served. */
  readonly web?: WebClientOptions;
  /** Drain and undrain over the admin API; absent: not served. */
  readonly node?: NodeControl;
  /**
   * The edge role (default true): the public REST APIs, the TRTC callback, the API docs and the
   * web client. false: only /healthz, /readyz, /metrics and the admin APIs.
   */
  readonly edge?: boolean;
}

export function buildHttpApp(deps: HttpAppDeps): FastifyInstance {
  const http: FastifyInstance = Fastify({
    loggerInstance: deps.logger,
    // A hop count is supported at run time (proxy-addr), though Fastify's type omits it.
    trustProxy: (deps.trustProxy ?? false) as boolean | string,
    genReqId: () => randomUUID(), // doubles as the envelope's trace_id
    // Above the longest id the API accepts (128), so a too-long one gets the envelope's 400.
    routerOptions: { maxParamLength: 512 },
  });
  installEnvelopeErrors(http);
  acceptEmptyJsonBodies(http);
  // First, so that every answer (the API's, the page's, a 404 or an error) carries them.
  registerSecurityHeaders(http);
  const edge = deps.edge ?? true;
  if (edge && deps.docs) {
    registerApiDocs(http);
    // The WebSocket protocol's AsyncAPI document, from the declarations the hub validates with.
    registerAsyncApiDocs(http, nodeWsProtocol);
  }
  // In a plugin, so that the routes are added after the docs' onRoute hook exists.
  void http.register((api, _opts, done) => {
    registerOpsRoutes(api, deps.ops, deps.metrics);
    const { voice, adminToken, clock } = deps;
    if (edge) registerPublicRoutes(api, deps);
    registerAdminRoutes(api, { store: voice.store, adminToken, clock });
    registerOutboxAdminRoutes(api, { ...deps.outbox, adminToken, clock });
    registerAdminInspectionRoutes(api, { ...deps.inspection, adminToken });
    if (deps.node) registerNodeAdminRoutes(api, { node: deps.node, adminToken });
    if (edge && deps.web) registerWebClient(api, deps.web);
    done();
  });
  return http;
}

/** The edge role's routes: what users and their apps call. */
function registerPublicRoutes(api: FastifyInstance, deps: HttpAppDeps): void {
  const { voice } = deps;
  registerAuthRoutes(api, deps.accounts);
  registerVoiceRoutes(api, {
    api: voice.api,
    auth: deps.accounts,
    store: voice.store,
    ...(voice.createQuota ? { createQuota: voice.createQuota } : {}),
  });
  registerTrtcCallback(api, { api: voice.api, apps: voice.trtcApps });
  registerNotificationRoutes(api, { centre: deps.notifications, auth: deps.accounts });
  if (deps.meetings) {
    const { api: meetingApi, limits, store, createQuota } = deps.meetings;
    const auth = deps.accounts;
    registerMeetingRoutes(api, { api: meetingApi, auth, limits, store, createQuota });
  }
}
