/**
 * A small history router: the page's <base href> (set by the server: /console/ or /studio/) is the root, every
 * route is a path below it. Enough for a handful of pages, and no dependency in the first-load bundle.
 */
import { useSyncExternalStore, type AnchorHTMLAttributes, createElement, type MouseEvent } from 'react';

const listeners = new Set<() => void>();

/** The app's root path, always ending in `/`. */
export function basePath(): string {
  const href = document.querySelector('base')?.getAttribute('href') ?? '/console/';
  return href.endsWith('/') ? href : `${href}/`;
}

function currentRoute(): string {
  const base = basePath();
  const path = window.location.pathname;
  const below = path.startsWith(base) ? path.slice(base.length) : '';
  return `/${below}`.replace(/\/+$/, '') || '/';
}

function notify(): void {
  for (const listener of listeners) listener();
}

window.addEventListener('popstate', notify);

/** Goes to `route` (a path below the base, e.g. `/deployments/abc`). */
export function navigate(route: string, options: { replace?: boolean } = {}): void {
  const url = basePath() + route.replace(/^\//, '');
  if (options.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  window.scrollTo(0, 0);
  notify();
}

/** The current route, re-rendering on every navigation. */
export function useRoute(): string {
  return useSyncExternalStore((listener) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  }, currentRoute);
}

/** The current query string's parameters (read once per render). */
export function useSearchParams(): URLSearchParams {
  useRoute();
  return new URLSearchParams(window.location.search);
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { to: string };

/** An anchor to a route: a real link (new tab, copy address) that navigates in place on a plain click. */
export function Link({ to, onClick, ...rest }: LinkProps) {
  const href = basePath() + to.replace(/^\//, '');
  const handle = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return createElement('a', { ...rest, href, onClick: handle });
}
