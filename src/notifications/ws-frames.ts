/**
 * The notification centre's part of `/ws`: `notification.new`, pushed to every socket of the
 * recipient, whose data is the notification exactly as the REST list shows it (./replies.ts).
 */
import { wsFrame, type WsProtocol } from '../edge/ws/ws-declarations.js';
import { NOTIFICATION_NEW_EVENT } from './notification-centre.js';
import { Notification } from './replies.js';

export const notificationProtocol: WsProtocol = {
  events: [],
  frames: [
    wsFrame({
      event: NOTIFICATION_NEW_EVENT,
      data: Notification,
      to: 'user',
      summary: 'A notification was stored for this user (e.g. a meeting invite)',
    }),
  ],
};
