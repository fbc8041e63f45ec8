/**
 * A value made on first use, once: concurrent first callers share one load, and a load that fails is tried again by
 * the next caller (a database that was down is no reason to fail every later request).
 */
export interface Lazy<T> {
  get(): Promise<T>;
  /** The value when a load has finished, else undefined (nothing is loaded by asking). */
  loaded(): T | undefined;
  /** The load under way or done, else null (nothing is loaded by asking). */
  started(): Promise<T> | null;
}

export function lazy<T>(load: () => Promise<T>): Lazy<T> {
  let value: T | undefined;
  let pending: Promise<T> | null = null;
  return {
    get() {
      pending ??= load().then(
        (made) => (value = made),
        (error: unknown) => {
          pending = null;
          throw error;
        },
      );
      return pending;
    },
    loaded: () => value,
    started: () => pending,
  };
}
