/**
 * Per-app webhook configuration (table `app_webhooks`): the sink of every event of that
 * app. Written by the admin API; read by the relay fresh for every claimed batch (one
 * query per batch, by primary key), so a change made on one node applies on every node to
 * the next batch: no event is settled against a webhook that was already replaced.
 */
import type { Kysely } from 'kysely';
import type { SqlBackend } from '../adapters/sql/database.js';

/** One app's webhook. */
export interface WebhookConfig {
  readonly appCode: string;
  readonly url: string;
  /** HMAC key of `X-Rooms-Signature`. */
  readonly secret: string;
  /**
   * Whether it takes a voice room's crowd joins and leaves (events with `in_crowd: true`);
   * false: those are settled `skipped`, unsent.
   */
  readonly crowdEvents: boolean;
  readonly updatedAtMs: number;
}

/** What a webhook is set to (`PUT /api/v1/admin/apps/:app_code/webhook`). */
export interface WebhookSetting {
  readonly url: string;
  readonly secret: string;
  /** Default true. */
  readonly crowdEvents?: boolean;
}

export interface WebhookDirectory {
  get(appCode: string): Promise<WebhookConfig | null>;
  /** The webhooks of those apps that have one. */
  getMany(appCodes: readonly string[]): Promise<ReadonlyMap<string, WebhookConfig>>;
  put(appCode: string, setting: WebhookSetting, nowMs: number): Promise<WebhookConfig>;
  /** True when there was one. */
  delete(appCode: string): Promise<boolean>;
}

interface AppWebhooksTable {
  app_code: string;
  url: string;
  secret: string;
  /** 1 or 0 (migration `0016_webhook_crowd_events`). */
  crowd_events: number;
  created_at_ms: number;
  updated_at_ms: number;
}

/** The directory in SQL (migration `0002_webhooks`). */
export class SqlWebhookDirectory implements WebhookDirectory {
  private readonly db: Kysely<{ app_webhooks: AppWebhooksTable }>;

  constructor(private readonly backend: SqlBackend) {
    this.db = backend.db.withTables<{ app_webhooks: AppWebhooksTable }>();
  }

  async get(appCode: string): Promise<WebhookConfig | null> {
    const row = await this.db
      .selectFrom('app_webhooks')
      .selectAll()
      .where('app_code', '=', appCode)
      .executeTakeFirst();
    return row ? toConfig(row) : null;
  }

  async getMany(appCodes: readonly string[]): Promise<ReadonlyMap<string, WebhookConfig>> {
    if (appCodes.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('app_webhooks')
      .selectAll()
      .where('app_code', 'in', [...new Set(appCodes)])
      .execute();
    return new Map(rows.map((row) => [row.app_code, toConfig(row)]));
  }

  async put(appCode: string, setting: WebhookSetting, nowMs: number): Promise<WebhookConfig> {
    const { url, secret } = setting;
    const crowdEvents = setting.crowdEvents ?? true;
    const crowd_events = crowdEvents ? 1 : 0;
    const insert = this.db.insertInto('app_webhooks').values({
      app_code: appCode,
      url,
      secret,
      crowd_events,
      created_at_ms: nowMs,
      updated_at_ms: nowMs,
    });
    const update = { url, secret, crowd_events, updated_at_ms: nowMs };
    await (
      this.backend.flavor === 'mysql'
        ? insert.onDuplicateKeyUpdate(update)
        : insert.onConflict((oc) => oc.column('app_code').doUpdateSet(update))
    ).execute();
    return { appCode, url, secret, crowdEvents, updatedAtMs: nowMs };
  }

  async delete(appCode: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('app_webhooks')
      .where('app_code', '=', appCode)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

function toConfig(row: AppWebhooksTable): WebhookConfig {
  return {
    appCode: row.app_code,
    url: row.url,
    secret: row.secret,
    crowdEvents: Number(row.crowd_events) !== 0,
    updatedAtMs: Number(row.updated_at_ms),
  };
}
