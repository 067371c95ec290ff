/**
 * A small hook on `window.rooms` for tests and for looking at a page from the console:
 * the current room's media figures (bytes received per member and kind) and the socket.
 */
export interface RoomDebug {
  kind: 'meeting' | 'voice';
  received(): Promise<unknown>;
  [key: string]: unknown;
}

export function exposeRoom(debug: RoomDebug | null): void {
  (window as unknown as { rooms: { room: RoomDebug | null } }).rooms.room = debug;
}
