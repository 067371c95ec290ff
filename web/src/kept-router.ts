/**
 * A meeting's router capabilities, kept for the tab (sessionStorage) from its join or its
 * media server's reset, so a reload of the meeting page can load the device without joining
 * again (GET room does not carry them).
 */

export interface RouterInfo {
  router_id: string | null;
  rtp_capabilities: unknown;
}

const key = (code: string) => `rooms.meeting.${code}`;

export function keepRouter(code: string, info: RouterInfo): void {
  sessionStorage.setItem(key(code), JSON.stringify(info));
}

export function keptRouter(code: string): RouterInfo | null {
  const raw = sessionStorage.getItem(key(code));
  return raw ? (JSON.parse(raw) as RouterInfo) : null;
}

export function forgetRouter(code: string): void {
  sessionStorage.removeItem(key(code));
}
