/**
 * What the notification routes answer (src/edge/http/notification-routes.ts): each is
 * checked against its schema before it is sent, and the OpenAPI document shows it as a named
 * schema. `Notification` is also the payload of the `notification.new` frame.
 */
import { z } from 'zod';

const time = z.string().describe('YYYY-MM-DD HH:mm:ss, server local time');

export const Notification = z
  .strictObject({
    id: z.int(),
    type: z.string().describe('e.g. meeting_invite'),
    title: z.string(),
    content: z.string(),
    extra: z.record(z.string(), z.unknown()).describe("The type's own fields"),
    is_read: z.boolean(),
    read_at: time.nullable(),
    created_at: time,
  })
  .meta({ title: 'Notification' });

export const NotificationPage = z
  .strictObject({ list: z.array(Notification).readonly(), has_more: z.boolean() })
  .meta({ title: 'NotificationPage' });

export const UnreadCount = z.strictObject({ count: z.int() }).meta({ title: 'UnreadCount' });

export const ReadAll = z
  .strictObject({ updated: z.int().describe('Notifications marked read now') })
  .meta({ title: 'ReadAllReply' });
