/**
 * Log lines read page by page from an offset, then followed: every second while `follow` is true (the build log
 * streams into the page as the build writes it), every few seconds otherwise.
 */
import { useEffect, useRef, useState } from 'react';
import type { LogLine } from '../api/controlPlane';

const FOLLOW_EVERY_MS = 1000;
const IDLE_EVERY_MS = 5000;
const MAX_LINES_KEPT = 5000;

export function useLogTail(read: (offset: number) => Promise<{ logs: LogLine[] }>, key: string, follow: boolean) {
  const [lines, setLines] = useState<LogLine[]>([]);
  const [error, setError] = useState<Error | null>(null);
  const followRef = useRef(follow);
  followRef.current = follow;
  useEffect(() => {
    let live = true;
    let offset = 0;
    setLines([]);
    const tail = async () => {
      while (live) {
        try {
          const page = await read(offset);
          if (!live) return;
          offset += page.logs.length;
          if (page.logs.length > 0) setLines((kept) => [...kept, ...page.logs].slice(-MAX_LINES_KEPT));
          setError(null);
          if (page.logs.length === 500) continue;
        } catch (failure) {
          if (!live) return;
          setError(failure as Error);
        }
        // Not following (a settled revision) still reads now and then: a retry writes new lines.
        await new Promise((resolve) => setTimeout(resolve, followRef.current ? FOLLOW_EVERY_MS : IDLE_EVERY_MS));
      }
    };
    void tail();
    return () => {
      live = false;
    };
  }, [key]);
  return { lines, error };
}
