/**
 * The notification centre (the seed's `notify.Pusher`): notifications stored per recipient,
 * listed newest first, marked read, and pushed live as `notification.new` to every socket
 * of the recipient on every node. A recipient offline when it was sent finds it in the
 * list or the unread count later (seed §9.4). Protocol-neutral: the REST edge is
 * src/edge/http/notification-routes.ts, the live push a {@link NotificationPush}.
 */
import type { Logger } from 'pino';
import { APP_CODE_PATTERN } from '../accounts/validation.js';
import { hasControlCharacters, hasLoneSurrogate } from '../domain/text.js';
import type { Clock } from '../shared/clock.js';
import { errors } from '../shared/error-codes.js';
import { envelopeTime } from '../shared/http-envelope.js';
import { isUserIdText } from '../shared/user-id.js';
import type {
  NewNotification,
  NotificationStore,
  StoredNotification,
} from './notification-store.js';

/** The seed's invite takes 1-50 invitees; a batch is bounded the same way. */
export const MAX_RECIPIENTS = 50;
export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 50;
export const MAX_TITLE_CHARS = 100;
export const MAX_CONTENT_CHARS = 1_000;
/** Of `extra` as JSON text. */
export const MAX_EXTRA_CHARS = 4_096;
/** The frame a recipient's sockets receive for each new notification. */
export const NOTIFICATION_NEW_EVENT = 'notification.new';

const TYPE_PATTERN = /^[a-z][a-z0-9_]{0,31}$/;
/** A sending request's key: printable ASCII, as request ids are. */
const REQUEST_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** Sends a frame to every socket of one user (RealtimePublisher.toUser). Never throws. */
export interface NotificationPush {
  toUser(appCode: string, userId: string, event: string, data: Record<string, unknown>): void;
}

/** What {@link NotificationCentre.pushBatch} sends to each recipient. */
export interface NotificationInput {
  /** e.g. `meeting_invite`: `[a-z][a-z0-9_]{0,31}`. */
  readonly type: string;
  /** 1-100 characters, not blank, no control characters. */
  readonly title: string;
  /** 0-1000 characters; newlines allowed, no other control characters. */
  readonly content: string;
  /** A JSON object (default `{}`), at most 4096 characters as JSON. */
  readonly extra?: Readonly<Record<string, unknown>>;
}

/** One recipient's own notification, for {@link NotificationCentre.pushEach}. */
export interface PersonalNotification {
  /** A user id (decimal string). */
  readonly recipient: string;
  readonly notification: NotificationInput;
}

/** A notification as the REST list and the `notification.new` frame show it. */
export interface NotificationJson {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly content: string;
  readonly extra: Record<string, unknown>;
  readonly is_read: boolean;
  /** `YYYY-MM-DD HH:mm:ss` (the envelope's `time` format), null while unread. */
  readonly read_at: string | null;
  readonly created_at: string;
  readonly [key: string]: unknown;
}

/** One notification written by a batch. */
export interface PushedNotification {
  /** The recipient. */
  readonly userId: string;
  readonly notification: NotificationJson;
}

/** What {@link NotificationCentre.pushEachOnce} did. */
export interface PushedOnce {
  /** False: the request's notifications were written before; nothing was written or pushed now. */
  readonly fresh: boolean;
  /** The request's notifications: written now, or before (then as they are now). */
  readonly notifications: PushedNotification[];
}

export interface NotificationPage {
  readonly list: NotificationJson[];
  /** True when older notifications exist: ask again with `before_id` = the last id. */
  readonly has_more: boolean;
}

export function notificationJson(row: StoredNotification): NotificationJson {
  return {
    id: row.id,
    type: row.type,
    title: row.title,
    content: row.content,
    extra: JSON.parse(row.extra) as Record<string, unknown>,
    is_read: row.isRead,
    read_at: row.readAtMs === null ? null : envelopeTime(new Date(row.readAtMs)),
    created_at: envelopeTime(new Date(row.createdAtMs)),
  };
}

export interface NotificationCentreDeps {
  readonly store: NotificationStore;
  readonly push: NotificationPush;
  readonly clock: Clock;
  readonly logger: Logger;
}

export class NotificationCentre {
  private readonly logger: Logger;

  constructor(private readonly deps: NotificationCentreDeps) {
    this.logger = deps.logger.child({ module: 'notifications' });
  }

  /**
   * The seed's `PushBatch`: the same notification to each recipient (duplicates count
   * once), one row each, all in one transaction, then a live `notification.new` frame to
   * each recipient's sockets (best effort: a recipient offline now reads the list later).
   * An empty batch writes nothing.
   * @param recipients user ids (decimal strings, as tokens carry them), at most 50
   * @throws AppError `TOO_MANY_RECIPIENTS` past 50, `INVALID_ARGUMENT` for a bad app code,
   *   user id, type, title, content or extra; nothing is written then
   */
  async pushBatch(
    appCode: string,
    recipients: readonly string[],
    input: NotificationInput,
  ): Promise<PushedNotification[]> {
    checkAppCode(appCode);
    if (!Array.isArray(recipients)) throw errors.INVALID_ARGUMENT('recipients must be an array');
    if (recipients.length > MAX_RECIPIENTS) throw errors.TOO_MANY_RECIPIENTS(MAX_RECIPIENTS);
    recipients.forEach(checkRecipient);
    const fields = checkInput(input);
    const rows = [...new Set<string>(recipients)].map((userId) => ({ userId, ...fields }));
    return this.#insertAndPush(appCode, rows);
  }

  /**
   * Like {@link pushBatch}, but each recipient gets its own notification (a meeting invite
   * carries each invitee's own token): one row each, all in ONE transaction (all or none),
   * then the live frames. A recipient named twice is refused (which one would it get?).
   * @throws AppError `TOO_MANY_RECIPIENTS` past 50, `INVALID_ARGUMENT` for a bad app code,
   *   user id, repeated recipient or notification; nothing is written then
   */
  async pushEach(
    appCode: string,
    items: readonly PersonalNotification[],
  ): Promise<PushedNotification[]> {
    return this.#insertAndPush(appCode, checkItems(appCode, items));
  }

  /**
   * {@link pushEach} at most once per request: the rows carry `requestKey` (unique per app
   * and recipient). When notifications were already written under it (a retry of a request
   * whose first run committed, on any node, before or after a crash) nothing is written and
   * no frame is pushed, and those notifications are returned (`fresh: false`).
   * @param requestKey the sending request's key, 1-255 printable ASCII characters, scoped by
   *   the sender (e.g. `meeting_invite:{room}:{caller}:{request id}`)
   * @throws AppError as {@link pushEach}, and `INVALID_ARGUMENT` for a bad request key
   */
  async pushEachOnce(
    appCode: string,
    requestKey: string,
    items: readonly PersonalNotification[],
  ): Promise<PushedOnce> {
    checkRequestKey(requestKey);
    const rows = checkItems(appCode, items);
    const { inserted, rows: stored } = await this.deps.store.insertBatchOnce(
      appCode,
      requestKey,
      rows,
      this.deps.clock.nowMs(),
    );
    if (!inserted) return { fresh: false, notifications: stored.map(pushedOf) };
    return { fresh: true, notifications: this.#push(appCode, stored) };
  }

  /** The notifications written under a request's key (none: an empty list), in id order. */
  async sentUnder(appCode: string, requestKey: string): Promise<PushedNotification[]> {
    checkAppCode(appCode);
    checkRequestKey(requestKey);
    return (await this.deps.store.listByRequestKey(appCode, requestKey)).map(pushedOf);
  }

  async #insertAndPush(
    appCode: string,
    rows: readonly NewNotification[],
  ): Promise<PushedNotification[]> {
    const stored = await this.deps.store.insertBatch(appCode, rows, this.deps.clock.nowMs());
    return this.#push(appCode, stored);
  }

  #push(appCode: string, stored: readonly StoredNotification[]): PushedNotification[] {
    const pushed = stored.map(pushedOf);
    // After the commit only: a frame never announces a row that is not there.
    for (const { userId, notification } of pushed) {
      try {
        this.deps.push.toUser(appCode, userId, NOTIFICATION_NEW_EVENT, notification);
      } catch (err) {
        this.logger.warn({ err, appCode, userId }, 'notification push failed; stored only');
      }
    }
    return pushed;
  }

  /** The recipient's notifications older than `beforeId` (newest first when null). */
  async list(
    appCode: string,
    userId: string,
    page: { readonly beforeId: number | null; readonly limit: number },
  ): Promise<NotificationPage> {
    const limit = Math.min(MAX_PAGE, Math.max(1, Math.trunc(page.limit)));
    // One more than asked tells whether another page exists.
    const rows = await this.deps.store.list(appCode, userId, page.beforeId, limit + 1);
    return { list: rows.slice(0, limit).map(notificationJson), has_more: rows.length > limit };
  }

  unreadCount(appCode: string, userId: string): Promise<number> {
    return this.deps.store.unreadCount(appCode, userId);
  }

  /**
   * Marks one of the caller's notifications read; again is fine (the first read time stays).
   * @throws AppError `NOTIFICATION_NOT_FOUND` when the caller has no notification of that id
   *   (whether it does not exist or is someone else's: the answer tells nothing about others)
   */
  async markRead(appCode: string, userId: string, id: number): Promise<NotificationJson> {
    const row = await this.deps.store.markRead(appCode, userId, id, this.deps.clock.nowMs());
    if (!row) throw errors.NOTIFICATION_NOT_FOUND();
    return notificationJson(row);
  }

  /** Marks all of the caller's notifications read; returns how many were unread. */
  markAllRead(appCode: string, userId: string): Promise<number> {
    return this.deps.store.markAllRead(appCode, userId, this.deps.clock.nowMs());
  }
}

function pushedOf(row: StoredNotification): PushedNotification {
  return { userId: row.userId, notification: notificationJson(row) };
}

/** A {@link NotificationCentre.pushEach} batch, validated: its rows. */
function checkItems(appCode: string, items: readonly PersonalNotification[]): NewNotification[] {
  checkAppCode(appCode);
  if (!Array.isArray(items)) throw errors.INVALID_ARGUMENT('items must be an array');
  if (items.length > MAX_RECIPIENTS) throw errors.TOO_MANY_RECIPIENTS(MAX_RECIPIENTS);
  const seen = new Set<string>();
  return items.map((item: PersonalNotification) => {
    if (typeof item !== 'object' || item === null) {
      throw errors.INVALID_ARGUMENT('each item must be an object');
    }
    checkRecipient(item.recipient);
    if (seen.has(item.recipient)) throw errors.INVALID_ARGUMENT('a recipient is named twice');
    seen.add(item.recipient);
    return { userId: item.recipient, ...checkInput(item.notification) };
  });
}

function checkRequestKey(key: unknown): void {
  if (typeof key !== 'string' || !REQUEST_KEY_PATTERN.test(key)) {
    throw errors.INVALID_ARGUMENT('request key must be 1-255 printable ASCII characters');
  }
}

function checkAppCode(appCode: unknown): void {
  if (typeof appCode !== 'string' || !APP_CODE_PATTERN.test(appCode)) {
    throw errors.INVALID_ARGUMENT('app_code must be 1-64 of a-z, 0-9, _ or -');
  }
}

function checkRecipient(id: unknown): void {
  if (!isUserIdText(id)) {
    throw errors.INVALID_ARGUMENT('each recipient must be a user id (decimal string)');
  }
}

/** Validates a batch's notification (taken as typed) and serialises its extra. */
function checkInput(input: NotificationInput): {
  type: string;
  title: string;
  content: string;
  extra: string;
} {
  if (typeof input !== 'object' || input === null) {
    throw errors.INVALID_ARGUMENT('notification must be an object');
  }
  const { type, title, content, extra = {} } = input;
  if (typeof type !== 'string' || !TYPE_PATTERN.test(type)) {
    throw errors.INVALID_ARGUMENT('type must be 1-32 of a-z, 0-9 or _, starting with a letter');
  }
  if (
    typeof title !== 'string' ||
    title.trim().length === 0 ||
    [...title].length > MAX_TITLE_CHARS ||
    hasControlCharacters(title) ||
    hasLoneSurrogate(title)
  ) {
    throw errors.INVALID_ARGUMENT(`title must be 1-${MAX_TITLE_CHARS} characters of text`);
  }
  if (
    typeof content !== 'string' ||
    [...content].length > MAX_CONTENT_CHARS ||
    hasControlCharacters(content.replaceAll('\n', '')) ||
    hasLoneSurrogate(content)
  ) {
    throw errors.INVALID_ARGUMENT(
      `content must be at most ${MAX_CONTENT_CHARS} characters of text`,
    );
  }
  if (typeof extra !== 'object' || extra === null || Array.isArray(extra)) {
    throw errors.INVALID_ARGUMENT('extra must be a JSON object');
  }
  let json: string;
  try {
    json = JSON.stringify(extra);
  } catch {
    throw errors.INVALID_ARGUMENT('extra must be a JSON object');
  }
  // An object with `toJSON` (a Date) is not a JSON object once serialised.
  if (!json.startsWith('{')) throw errors.INVALID_ARGUMENT('extra must be a JSON object');
  if (json.length > MAX_EXTRA_CHARS) {
    throw errors.INVALID_ARGUMENT(`extra must be at most ${MAX_EXTRA_CHARS} characters as JSON`);
  }
  return { type, title, content, extra: json };
}
