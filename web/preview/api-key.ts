/**
 * The API key the page searches with, kept in the browser's local storage so that a reload
 * does not ask again. It never leaves the browser except in the Authorization header sent to
 * this same server.
 */
const STORAGE_KEY = 'search-preview:api-key';

export function storedApiKey(): string | null {
  try {
    return localStorage.getItem(STORAGE_KEY) || null;
  } catch {
    return null; // storage disabled (private mode, file policy): behave as if no key was saved
  }
}

export function storeApiKey(key: string | null): void {
  try {
    if (key) localStorage.setItem(STORAGE_KEY, key);
    else localStorage.removeItem(STORAGE_KEY);
  } catch {
    // the key then lasts for this page only
  }
}
