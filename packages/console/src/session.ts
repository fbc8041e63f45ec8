/**
 * The API key of this tab: kept in sessionStorage (gone when the tab closes, never shared with other tabs, never in
 * a cookie, so no other site can make the browser send it).
 */
const KEY = 'graphx.apiKey';
const listeners = new Set<() => void>();

export function apiKey(): string | null {
  return window.sessionStorage.getItem(KEY);
}

export function signIn(key: string): void {
  window.sessionStorage.setItem(KEY, key);
  listeners.forEach((listener) => listener());
}

export function signOut(): void {
  window.sessionStorage.removeItem(KEY);
  listeners.forEach((listener) => listener());
}

export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
