/**
 * The page's one socket to the node (`/ws?token=`), shared by every page: the SDK's
 * RealtimeClient (@echochat/client: ACKs by `seq`, reconnect with backoff, the frame budget),
 * with its status as Vue refs in the page's words. After each (re)open its `onOpen` handlers
 * run again: the pages re-follow their rooms there. A 4001 close (bad or expired token)
 * signs the page out.
 */
import { RealtimeClient, RealtimeError, socketUrl, type Frame as SdkFrame } from '@echochat/client';
import { ref } from 'vue';

export { RealtimeClient, RealtimeError as WsError };
/** A pushed frame as the pages read it: each event has its own shape (docs/protocol.md). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each event has its own shape
export type Frame = SdkFrame<any>;
export type Status = RealtimeClient['status'];

let makeUrl: () => string = () => '';
let unauthorized: () => void = () => undefined;

/** The app's socket. */
export const realtime = new RealtimeClient({
  url: () => makeUrl(),
  onUnauthorized: () => unauthorized(),
});

/** The socket's status, and why it is not open (shown with it). */
export const socketStatus = ref<Status>('idle');
export const socketDetail = ref('');

let lastClose = 0;
realtime.onClose((code) => (lastClose = code));
realtime.onStatus((status, detail) => {
  socketStatus.value = status;
  socketDetail.value =
    status === 'reconnecting' && lastClose
      ? `连接断开 (${lastClose})，正在重连…`
      : status === 'closed' && detail // closed with a reason: the token was refused (4001)
        ? '登录已过期，请重新登录'
        : '';
});
realtime.onOpen(() => (lastClose = 0));

/** Opens the socket (the URL is computed again at each reconnect: the token may change). */
export function connectRealtime(url: () => string, onUnauthorized: () => void): void {
  makeUrl = url;
  unauthorized = onUnauthorized;
  realtime.connect();
}

export function wsUrl(accessToken: string): string {
  return socketUrl(location.origin, accessToken);
}
