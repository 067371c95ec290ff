/**
 * Joining a meeting from anywhere (the lobby, a meeting code, an invite card): POST join,
 * asking for the password when the meeting wants one (会议需要密码, or 会议密码错误 to try
 * again), then the meeting page. The join's router capabilities are kept for the tab
 * (./kept-router.ts).
 */
import { reactive } from 'vue';
import { ApiError, api, errorText, requestId } from './api';
import { navigate, notice, pathOf } from './app-state';
import { keepRouter } from './kept-router';

/** The password dialog's state (PasswordPrompt.vue). */
export const passwordPrompt = reactive<{ code: string | null; error: string; busy: boolean }>({
  code: null,
  error: '',
  busy: false,
});

/** The meeting whose host the user waits for (the waiting room; WaitingScreen.vue). */
export const waitingFor = reactive<{ code: string | null }>({ code: null });

/** The refusals that ask for the password (会议需要密码, 会议密码错误 to try again). */
const NEEDS_PASSWORD = new Set(['PASSWORD_REQUIRED', 'PASSWORD_WRONG']);

/** The admitted joiner enters: the router (the join answered none), then the page. */
export async function enterAdmitted(code: string): Promise<void> {
  keepRouter(code, await api.call('getMeetingRouter', { path: { code } }));
  waitingFor.code = null;
  navigate({ name: 'meeting', code });
}

/** Joins `code`; resolves true once on the meeting page or in the waiting room. Errors are shown as notices. */
export async function joinMeeting(code: string, password?: string): Promise<boolean> {
  passwordPrompt.busy = true;
  try {
    const answer = await api.call('joinMeeting', {
      path: { code },
      body: { request_id: requestId(), ...(password !== undefined ? { password } : {}) },
    });
    passwordPrompt.code = null;
    passwordPrompt.error = '';
    if (answer.waiting) {
      // The host admits or denies: WaitingScreen.vue follows the answer.
      waitingFor.code = code;
      return true;
    }
    keepRouter(code, answer);
    // Already on its page (a direct link, a rejoin): that page starts again with the router.
    if (location.pathname === pathOf({ name: 'meeting', code })) location.reload();
    else navigate({ name: 'meeting', code });
    return true;
  } catch (error) {
    const message = errorText(error);
    // `instanceof` narrows to ApiError<any>: the reason is a string.
    const reason = error instanceof ApiError ? (error.reason as string | undefined) : undefined;
    if (reason && NEEDS_PASSWORD.has(reason)) {
      passwordPrompt.code = code;
      passwordPrompt.error = password === undefined ? '' : message;
      return false;
    }
    if (reason === 'ALREADY_IN_MEETING') {
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
