/**
 * Wires meetings into a node: the meeting domain (with its SQL hooks) on the host, its
 * store, the password lockout's KeyValue store, bcrypt, the invites (tokens in the KeyValue
 * store, notifications through the centre, inviters' profiles from the users table), and the
 * API the REST routes and the gRPC `MeetingCall` serve.
 */
import { BcryptPasswordHasher } from '../../accounts/password.js';
import { SqlUserRepository } from '../../accounts/user-repository.js';
import { meetingWithSql } from '../sql/index.js';
import { sqlMeetingStore } from '../sql/store.js';
import { sqlChatRetentionStore } from '../sql/chat-retention.js';
import type { SqlBackend } from '../../adapters/sql/database.js';
import type { SqlStoreTypes } from '../../adapters/sql/sql-store-types.js';
import type { CellHost } from '../../cell/host.js';
import type { CellsTier } from '../../cell/cells-tier.js';
import { defaultMeetingSettings } from '../domain/domain.js';
import { MeetingApi, type MeetingForwarder } from '../api/meeting-api.js';
import type { InviteNotifier, InviteUsers } from '../api/invites.js';
import { MeetingLimits } from '../api/limits.js';
import { CreationQuota } from '../../edge/quotas.js';
import type { MeetingStore } from '../api/meeting-store.js';
import type { MediaServers } from '../../media-cluster/media-servers.js';
import { systemClock } from '../../shared/clock.js';
import type { Logger } from 'pino';
import { MeetingChatRetention } from './chat-retention.js';
import type { KeyValue } from '../../shared/key-value.js';
import type { RateLimiter } from '../../shared/rate-limiter.js';
import { WorkGate } from '../../shared/work-gate.js';
import type { Config } from '../../main/config.js';

export interface Meetings {
  readonly api: MeetingApi;
  readonly store: MeetingStore;
  /** Invites, chat lines and failed code lookups per user (the REST routes apply the last two). */
  readonly limits: MeetingLimits;
  /** Meeting creations per host: `ROOMS_MEETING_CREATE_*`, `ROOMS_MAX_OPEN_MEETINGS_PER_HOST`. */
  readonly createQuota: CreationQuota;
  /** Deletes the chats of long-ended meetings (`ROOMS_MEETING_CHAT_RETENTION_MS`): start it. */
  readonly chatRetention: MeetingChatRetention;
}

export function wireMeetings(deps: {
  config: Config;
  host: CellHost<SqlStoreTypes>;
  sql: SqlBackend;
  /** The password lockout's counters and the invite tokens (Redis in a cluster). */
  kv: KeyValue;
  /** The counters of the meetings' limits (Redis in a cluster). */
  limiter: RateLimiter;
  /** The notification centre: the invites' `meeting_invite` notifications. */
  notifier: InviteNotifier;
  forwarder: MeetingForwarder;
  /** The media servers' directory; absent: a node without media (router fields are null). */
  media?: MediaServers;
  logger: Logger;
  /** Tests: another store (e.g. one whose codes always collide). */
  store?: MeetingStore;
  /** A node without the cells role: every call goes whole to the cells tier. */
  cellsTier?: CellsTier | null;
}): Meetings {
  const { config, host, sql } = deps;
  const { chatRetentionMs, ...deadlines } = config.meeting;
  const domain = meetingWithSql(sql.flavor, { ...defaultMeetingSettings, ...deadlines });
  host.register(domain);
  const store = deps.store ?? sqlMeetingStore(sql.db);
  const { accounts } = config;
  const limits = new MeetingLimits(deps.limiter, config.meetingLimits);
  const api = new MeetingApi({
    host,
    domain,
    forwarder: deps.forwarder,
    store,
    passwords: {
      hasher: new BcryptPasswordHasher(accounts.bcryptCost),
      gate: new WorkGate(accounts.hashConcurrency, accounts.hashMaxQueue),
      kv: deps.kv,
    },
    clock: systemClock,
    ...(deps.media ? { media: deps.media } : {}),
    invites: { kv: deps.kv, notifier: deps.notifier, users: inviteUsers(sql), limits },
    ...(deps.cellsTier ? { cellsTier: deps.cellsTier } : {}),
  });
  const chatRetention = new MeetingChatRetention(
    { retentionMs: chatRetentionMs },
    { store: sqlChatRetentionStore(sql.db), clock: systemClock, logger: deps.logger },
  );
  const { quotas } = config;
  const createQuota = new CreationQuota(deps.limiter, {
    kind: 'meeting',
    label: '会议',
    rate: { limit: quotas.meetingCreateLimit, windowMs: quotas.meetingCreateWindowMs },
    maxOpen: quotas.maxOpenMeetingsPerHost,
    countOpen: (appCode, hostId) => store.countOpenHosted(appCode, hostId),
  });
  return { api, store, limits, createQuota, chatRetention };
}

/** The invite card's inviter: nickname and avatar from the accounts' users table. */
function inviteUsers(sql: SqlBackend): InviteUsers {
  const users = new SqlUserRepository(sql.db);
  return {
    async profileOf(appCode, userId) {
      const id = Number(userId);
      if (!Number.isSafeInteger(id)) return null;
      const user = await users.findById(appCode, id);
      return user && { nickname: user.nickname, avatar: user.avatar };
    },
    async missing(appCode, userIds) {
      const ids = userIds.map(Number).filter((id) => Number.isSafeInteger(id));
      const found = new Set((await users.findByIds(appCode, ids)).map((u) => String(u.id)));
      return userIds.filter((id) => !found.has(id));
    },
  };
}
