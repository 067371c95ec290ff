/**
 * The gifts one can send in the signed-in user's app (`GET /voice/gifts`: id, name, price),
 * read once per page and shared: the gift picker lists them, the live feed names them.
 */
import { reactive } from 'vue';
import { api, errorText } from './api';

export interface Gift {
  gift_id: string;
  name: string;
  price: number;
}

export const giftCatalog = reactive<{ gifts: Gift[]; loaded: boolean; error: string }>({
  gifts: [],
  loaded: false,
  error: '',
});

export async function loadGifts(): Promise<void> {
  try {
    giftCatalog.gifts = (await api.call('listGifts')).list;
    giftCatalog.error = '';
  } catch (e) {
    giftCatalog.error = errorText(e);
  } finally {
    giftCatalog.loaded = true;
  }
}

/** The gift's name; its id when the catalog does not list it (retired since). */
export function giftName(id: string): string {
  return giftCatalog.gifts.find((g) => g.gift_id === id)?.name ?? id;
}
