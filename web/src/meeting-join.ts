/**
 * Joining a meeting from anywhere (the lobby, a meeting code, an invite card): POST join,
 * asking for the password when the meeting wants one (会议需要密码, or 会议密码错误 to try
 * again), then the meeting page. The join's router capabilities are kept for the tab
 * (./kept-router.ts).
 */
import { reactive } from 'vue';
import { ApiError, call, errorText, requestId } from './api';
import { navigate, notice, pathOf } from './app-state';
import { keepRouter, type RouterInfo } from './kept-router';

/** The password dialog's state (PasswordPrompt.vue). */
export const passwordPrompt = reactive<{ code: string | null; error: string; busy: boolean }>({
  code: null,
  error: '',
  busy: false,
});

const NEEDS_PASSWORD = new Set(['会议需要密码', '会议密码错误']);

/** Joins `code`; resolves true once on the meeting page. Errors are shown as notices. */
export async function joinMeeting(code: string, password?: string): Promise<boolean> {
  passwordPrompt.busy = true;
  try {
    const answer = await call<RouterInfo>('POST', `/meeting/rooms/${code}/join`, {
      request_id: requestId(),
      ...(password !== undefined ? { password } : {}),
    });
    keepRouter(code, answer);
    passwordPrompt.code = null;
    passwordPrompt.error = '';
    // Already on its page (a direct link, a rejoin): that page starts again with the router.
    if (location.pathname === pathOf({ name: 'meeting', code })) location.reload();
    else navigate({ name: 'meeting', code });
    return true;
  } catch (error) {
    const message = errorText(error);
    if (error instanceof ApiError && NEEDS_PASSWORD.has(message)) {
      passwordPrompt.code = code;
      passwordPrompt.error = password === undefined ? '' : message;
      return false;
    }
    if (message === '你已在会议中') {
      passwordPrompt.code = null;
      navigate({ name: 'meeting', code });
      return true;
    }
    if (passwordPrompt.code === code) passwordPrompt.error = message;
    else notice.value = { text: message, kind: 'error' };
    return false;
  } finally {
    passwordPrompt.busy = false;
  }
}
