import { useEffect, useState, type MouseEvent } from 'react';

/** Client-side routing on the History API: `/` is the list, `/sessions/:id` a session page. */
export type Route = { page: 'list' } | { page: 'session'; sessionId: string };

export function parseRoute(pathname: string): Route {
  const match = /^\/sessions\/([^/]+)\/?$/.exec(pathname);
  if (match?.[1] !== undefined) return { page: 'session', sessionId: decodeURIComponent(match[1]) };
  return { page: 'list' };
}

export function sessionHref(id: string): string {
  return `/sessions/${encodeURIComponent(id)}`;
}

export function navigate(href: string): void {
  if (href === location.pathname + location.search) return;
  history.pushState(null, '', href);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** An anchor's click handler that routes in the page (a modified click still opens a new tab). */
export function linkClick(href: string): (event: MouseEvent<HTMLAnchorElement>) => void {
  return (event) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname));
  useEffect(() => {
    const update = (): void => setRoute(parseRoute(location.pathname));
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return route;
}
