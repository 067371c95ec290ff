/**
 * Per-app webhook configuration (table `app_webhooks`): the sink of every event of that
 * app. Read by the relay through a short cache, written by the admin API.
 */
import type { Kysely } from 'kysely';
import type { SqlBackend } from '../adapters/sql/database.js';
import type { Clock } from '../shared/clock.js';

/** One app's webhook. */
export interface WebhookConfig {
  readonly appCode: string;
  readonly url: string;
  /** HMAC key of `X-Rooms-Signature`. */
  readonly secret: string;
  readonly updatedAtMs: number;
}

export interface WebhookDirectory {
  get(appCode: string): Promise<WebhookConfig | null>;
  put(appCode: string, url: string, secret: string, nowMs: number): Promise<WebhookConfig>;
  /** True when there was one. */
  delete(appCode: string): Promise<boolean>;
}

interface AppWebhooksTable {
  app_code: string;
  url: string;
  secret: string;
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
    return row
      ? {
          appCode: row.app_code,
          url: row.url,
          secret: row.secret,
          updatedAtMs: Number(row.updated_at_ms),
        }
      : null;
  }

  async put(appCode: string, url: string, secret: string, nowMs: number): Promise<WebhookConfig> {
    const insert = this.db
      .insertInto('app_webhooks')
      .values({ app_code: appCode, url, secret, created_at_ms: nowMs, updated_at_ms: nowMs });
    const update = { url, secret, updated_at_ms: nowMs };
    await (
      this.backend.flavor === 'mysql'
        ? insert.onDuplicateKeyUpdate(update)
        : insert.onConflict((oc) => oc.column('app_code').doUpdateSet(update))
    ).execute();
    return { appCode, url, secret, updatedAtMs: nowMs };
  }

  async delete(appCode: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('app_webhooks')
      .where('app_code', '=', appCode)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

/**
 * Caches lookups for `ttlMs` (hits and misses), so the relay does not read the table per
 * event; a change made on any node is seen everywhere within the TTL.
 */
export class CachedWebhookDirectory implements WebhookDirectory {
  private readonly cache = new Map<string, { value: WebhookConfig | null; untilMs: number }>();

  constructor(
    private readonly inner: WebhookDirectory,
    private readonly clock: Clock,
    private readonly ttlMs = 5_000,
  ) {}

  async get(appCode: string): Promise<WebhookConfig | null> {
    const now = this.clock.nowMs();
    const hit = this.cache.get(appCode);
    if (hit && hit.untilMs > now) return hit.value;
    const value = await this.inner.get(appCode);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(appCode, { value, untilMs: now + this.ttlMs });
    return value;
  }

  async put(appCode: string, url: string, secret: string, nowMs: number): Promise<WebhookConfig> {
    this.cache.delete(appCode);
    return this.inner.put(appCode, url, secret, nowMs);
  }

  async delete(appCode: string): Promise<boolean> {
    this.cache.delete(appCode);
    return this.inner.delete(appCode);
  }
}
